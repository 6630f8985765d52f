// What search_code shows of grep's output: `path:line:text` lines for files that are part of
// the workspace's tree (matches in files ignored by .gitignore, build artefacts, are counted
// and left out, unless the search named such a path itself), without a Windows file's `\r`.
import type { Tree } from './tree.js';

export const maxSearchMatchesShown = 200;
/** grep output read per search: more than is shown, as matches in ignored files are dropped. */
export const maxSearchLinesRead = 1000;

/**
 * `output` is `grep -rnZ` output (each file name ends in a NUL) cut at `maxSearchLinesRead`
 * lines; `target` is the searched path relative to the workspace, `.` for all of it.
 */
export function formatSearchResults(output: string, tree: Tree, target: string, pattern: string): string {
  const inTree = new Set(tree.entries.map((entry) => entry.path));
  const namedOutsideTree =
    target !== '.' && !tree.entries.some((entry) => entry.path === target || entry.path.startsWith(`${target}/`));
  const shown: string[] = [];
  let matchesRead = 0;
  let ignoredMatches = 0;
  for (const line of output.split('\n')) {
    if (!line.trim()) continue;
    const nul = line.indexOf('\0');
    if (nul === -1) {
      shown.push(line); // grep's own messages
      continue;
    }
    matchesRead++;
    const path = line.slice(0, nul).replace(/^\.\//, '');
    if (!namedOutsideTree && !inTree.has(path)) {
      ignoredMatches++;
      continue;
    }
    shown.push(`${path}:${line.slice(nul + 1).replace(/\r$/, '')}`);
  }
  const ignoredNote =
    ignoredMatches > 0 ? `[${ignoredMatches} matches in files ignored by .gitignore are not shown]` : '';
  if (shown.length === 0) return [`No matches for /${pattern}/ in ${target}.`, ignoredNote].filter(Boolean).join('\n');
  const stopped = shown.length > maxSearchMatchesShown || matchesRead >= maxSearchLinesRead;
  return [
    shown.slice(0, maxSearchMatchesShown).join('\n'),
    stopped ? `[stopped at ${maxSearchMatchesShown} matches; narrow the search]` : '',
    ignoredNote,
  ]
    .filter(Boolean)
    .join('\n');
}
