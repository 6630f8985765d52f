// Writes that caches trusting a file's mtime in whole seconds and its size see (Python's
// `__pycache__`, pytest's rewritten tests): new content of the same length, written within the
// second of the file's last write, would leave the old bytecode in use (a fast model's edit right
// after the test run that compiled the old code; a test file restored right after a command
// changed it and ran it). Such a write moves the file's mtime on to the second after the old one's,
// so a file's seconds only grow: no later version can share the second of one compiled before.
import { lstat, lutimes } from 'node:fs/promises';
import type { Stats } from 'node:fs';

/** The file as it is before a write, for `moveMtimePast` after it (null when there is none). */
export function statBeforeWrite(absolute: string): Promise<Stats | null> {
  return lstat(absolute).catch(() => null);
}

/** After a write over `previous`, moves the new file's mtime past previous's second unless it is already later. */
export async function moveMtimePast(absolute: string, previous: Stats | null): Promise<void> {
  if (!previous?.isFile()) return;
  const written = await lstat(absolute);
  const second = Math.floor(previous.mtimeMs / 1000);
  if (written.isFile() && Math.floor(written.mtimeMs / 1000) <= second)
    await lutimes(absolute, written.atime, second + 1);
}
