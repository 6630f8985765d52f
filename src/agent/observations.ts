// Observations are truncated once, when they are recorded, so earlier messages never change
// (rewriting them would break prompt caching). Head and tail are kept: a test failure's
// cause is usually near the top, its summary at the bottom.

export interface ObservationLimits {
  maxBytes: number;
  maxLines: number;
}

export const defaultObservationLimits: ObservationLimits = { maxBytes: 16_000, maxLines: 400 };

export function truncateObservation(text: string, limits: ObservationLimits): string {
  const lineCount = text.split('\n').length;
  if (text.length <= limits.maxBytes && lineCount <= limits.maxLines) return text;
  // The tail is taken from what the head left, so a few very long lines keep their end too.
  const headEnd = headLength(text, Math.ceil(limits.maxLines / 2), Math.ceil(limits.maxBytes / 2));
  const tailStart = tailPosition(text, headEnd, Math.floor(limits.maxLines / 2), Math.floor(limits.maxBytes / 2));
  const cut = text.slice(headEnd, tailStart);
  const cutLines = cut.split('\n').length - 1;
  const marker = `[... ${cutLines} lines (${cut.length} characters) cut from the middle of this output ...]`;
  return `${text.slice(0, headEnd).replace(/\n$/, '')}\n${marker}\n${text.slice(tailStart)}`;
}

/** Length of the head: at most `maxLines` lines and `maxCharacters` characters. */
function headLength(text: string, maxLines: number, maxCharacters: number): number {
  let end = 0;
  for (let line = 0; line < maxLines && end < text.length; line++) {
    const newline = text.indexOf('\n', end);
    end = newline === -1 ? text.length : newline + 1;
  }
  return Math.min(end, maxCharacters);
}

/** Where the tail starts: at most `maxLines` lines and `maxCharacters` characters, never before `from`. */
function tailPosition(text: string, from: number, maxLines: number, maxCharacters: number): number {
  let start = text.length;
  for (let line = 0; line < maxLines && start > from; line++) {
    const newline = start >= 2 ? text.lastIndexOf('\n', start - 2) : -1;
    start = newline < from ? from : newline + 1;
  }
  return Math.max(start, text.length - maxCharacters, from);
}
