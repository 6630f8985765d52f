// A runner that ends the whole run on a timer of its own when no test has reported for a while
// (ava: 10 s by default, then "✘ Timed out while running tests" and no counts) fails where the
// repository's CI passes when this machine is busy (parallel attempts, other runs, a build). Such a
// test run goes once more, and says so; a suite that really hangs gives up twice, as it would in CI.
import { stripAnsi } from '../agent/testResults.js';
import type { ExecResult } from './container/exec.js';

const gaveUpLine = /^\s*✘ Timed out while running tests\s*$/m;

/** The run, or when its runner gave up waiting on its own timer, a second run with a line that says why. */
export async function runTestsGivingOneMoreTry(run: () => Promise<ExecResult>): Promise<ExecResult> {
  const first = await run();
  if (first.timedOut || !gaveUpLine.test(stripAnsi(first.output))) return first;
  const second = await run();
  const note =
    'durable-debugger: the test runner gave up waiting for its tests ("Timed out while running tests", ava\'s own timeout), as it does on a busy machine; the tests ran a second time:\n';
  return { ...second, output: `${note}${second.output}`, durationMs: first.durationMs + second.durationMs };
}
