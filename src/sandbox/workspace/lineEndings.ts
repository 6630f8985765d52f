// Files with Windows line endings (`\r\n`, whole or mixed with `\n`), as the model sees them:
// read without the `\r`, matched by an edit whether or not its text carries the `\r`, and
// written back with the file's own line endings, so the patch shows only the real change.

export type LineEnding = '\r\n' | '\n';

export function hasCrlf(text: string): boolean {
  return text.includes('\r\n');
}

/** The file's lines without their line endings (a final line ending adds no empty line). */
export function linesOf(text: string): string[] {
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The more common line ending of `text` (`\n` when it has none). */
export function dominantLineEnding(text: string): LineEnding {
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

/**
 * Where `needle` occurs in `text` when `\r\n` and `\n` count as the same line break, as
 * [start, end) offsets into `text` itself (a match that ends on a `\r\n` includes the `\r`).
 */
export function findIgnoringLineEndings(
  text: string,
  needle: string,
  limit = 50,
): Array<{ start: number; end: number }> {
  const plainText = text.replace(/\r\n/g, '\n');
  const plainNeedle = needle.replace(/\r\n/g, '\n');
  if (!plainNeedle) return [];
  // Offsets in plainText of each `\n` that was a `\r\n` in `text`, in order.
  const crlfAt: number[] = [];
  for (let index = plainText.indexOf('\n'), removed = 0; index !== -1; index = plainText.indexOf('\n', index + 1)) {
    if (text[index + removed] === '\r') {
      crlfAt.push(index);
      removed++;
    }
  }
  // An offset in plainText, moved past every `\r` removed before it.
  const original = (offset: number) => offset + countBelow(crlfAt, offset);
  const found: Array<{ start: number; end: number }> = [];
  for (let index = plainText.indexOf(plainNeedle); index !== -1; index = plainText.indexOf(plainNeedle, index + 1)) {
    found.push({ start: original(index), end: original(index + plainNeedle.length) });
    if (found.length > limit) break;
  }
  return found;
}

/** How many of the sorted `values` are below `limit`. */
function countBelow(values: number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((values[middle] as number) < limit) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * `replacement` with the line endings of the text it replaces: line for line when both have
 * the same number of line breaks (so a mixed file keeps each line's ending), otherwise the
 * replaced text's more common ending, or the file's when the replaced text has none.
 */
export function withLineEndingsOf(replacement: string, replaced: string, fileText: string): string {
  const plain = replacement.replace(/\r\n/g, '\n');
  const breaks = plain.split('\n').length - 1;
  if (breaks === 0) return plain;
  const endings = replaced.match(/\r?\n/g) ?? [];
  if (endings.length === breaks) {
    let next = 0;
    return plain.replace(/\n/g, () => endings[next++] as string);
  }
  const ending = dominantLineEnding(endings.length > 0 ? replaced : fileText);
  return ending === '\n' ? plain : plain.replace(/\n/g, ending);
}
