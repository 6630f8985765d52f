// search_code in text files that are not UTF-8 (Latin-1, Shift-JIS, UTF-16, …), which grep in the
// sandbox skips as binary. grep lists the files that hold bytes beyond ASCII (cheap: it stops at
// the first one); the host decodes those that are text in another encoding and matches the
// pattern on their decoded lines, in a V8 context with a time limit, so a pattern that backtracks
// without end cannot stall the worker.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import vm from 'node:vm';
import type { Tree } from './tree.js';
import { decodeText } from './textEncoding.js';

/** Separates grep's matches from the list of candidate files in the search command's output. */
export const encodedFilesMarker = '\n\0durable-debugger: files beyond ASCII\0';

/** Files decoded per search, and how long their lines may take to match in all. */
const maxFilesDecoded = 200;
const maxFileBytes = 2_000_000;
const matchTimeoutMs = 2_000;

/** The shell command that lists, NUL-separated, the files under `target` with a byte beyond ASCII. */
export function filesBeyondAsciiCommand(excludedFolders: string, quotedTarget: string): string {
  return `LC_ALL=C grep -rlZP ${excludedFolders} -e '[^\\x01-\\x7f]' -- ${quotedTarget} 2>/dev/null | head -c 200000`;
}

/**
 * Matches of `pattern` in the listed files that are text in an encoding other than UTF-8, as
 * grep -nZ prints them (`path\0line:text`), decoded; none when the pattern is not a JavaScript
 * regular expression too, or takes too long.
 */
export async function searchEncodedFiles(
  workspace: string,
  tree: Tree,
  listing: string,
  pattern: string,
  limit: number,
): Promise<string[]> {
  const files = new Map(tree.entries.filter((entry) => entry.kind === 'file').map((entry) => [entry.path, entry]));
  const texts: Array<{ path: string; lines: string[] }> = [];
  for (const listed of listing.split('\0')) {
    const path = listed.replace(/^\.\//, '');
    const entry = files.get(path);
    if (!entry || entry.kind !== 'file' || entry.size > maxFileBytes) continue;
    const decoded = decodeText(await readFile(join(workspace, path)).catch(() => Buffer.alloc(0)));
    if (!decoded || decoded.encoding.name === 'utf-8') continue; // grep searched it
    texts.push({ path, lines: decoded.text.split('\n').map((line) => line.replace(/\r$/, '')) });
    if (texts.length >= maxFilesDecoded) break;
  }
  if (texts.length === 0) return [];
  const context = vm.createContext({ texts, pattern, limit, found: [] as string[] });
  try {
    vm.runInContext(
      `const expression = new RegExp(pattern);
       for (const { path, lines } of texts) {
         for (let index = 0; index < lines.length && found.length < limit; index++)
           if (expression.test(lines[index])) found.push(path + '\\0' + (index + 1) + ':' + lines[index]);
       }`,
      context,
      { timeout: matchTimeoutMs },
    );
  } catch {
    return []; // not a JavaScript regular expression, or too slow: grep's answer stands alone
  }
  return [...(context.found as string[])];
}
