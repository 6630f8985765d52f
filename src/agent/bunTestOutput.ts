// Reads `bun test` output: its closing counts (" 4 pass", " 1 fail", " 2 skip", " 1 todo", then
// "Ran 8 tests across 2 files.") and each failing test's line, `(fail) describe > name [0.31ms]`,
// named with the file heading above it (`test/a.test.ts:`) because files often share test names.
// An error outside any test ("# Unhandled error between tests") counts as a fail with no name; it
// is named by its file. Pure: the workflow reads it.

export interface BunTestCounts {
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

const resultLine = /^\((pass|fail|skip|todo)\) (.+?)(?: \[[\d.]+m?s\])?$/;
const fileHeading = /^(\S.*\.\w+):$/;

export function parseBunTest(output: string): BunTestCounts | null {
  if (!/^Ran \d+ tests? across \d+ files?\./m.test(output)) return null;
  const total = (word: string) => Number([...output.matchAll(new RegExp(`^ (\\d+) ${word}$`, 'gm'))].pop()?.[1] ?? 0);
  const failing: string[] = [];
  let file = '';
  let unhandledIn: string | null = null;
  for (const line of output.split('\n')) {
    const heading = line.match(fileHeading);
    if (heading) file = heading[1] as string;
    if (line.startsWith('# Unhandled error')) unhandledIn = file;
    const result = line.match(resultLine);
    if (result?.[1] === 'fail') failing.push(file ? `${file} > ${result[2]}` : (result[2] as string));
  }
  // A file that failed to load reports no test of its own: its name stands for it.
  if (unhandledIn !== null && failing.length < total('fail')) failing.push(unhandledIn || 'an error between tests');
  return {
    passed: total('pass'),
    failed: total('fail'),
    skipped: total('skip') + total('todo'),
    failing: [...new Set(failing)],
  };
}
