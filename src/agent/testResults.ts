// Reads a test runner's output into counts and failing test names, so that the model sees a
// summary first and the workflow can verify a fix by names, not by the model's word.
import { parseNativeTests } from './ctestOutput.js';
import { parseSurefireSummary } from './surefireOutput.js';

import { parseBunTest } from './bunTestOutput.js';
import { parseCargoTest } from './cargoTestOutput.js';
import { parseGoTestOutput } from './goTestOutput.js';
import { noTestsLine, programThatCannotStart, type CannotStart } from './baselineProblems.js';

export interface TestSummary {
  passed: number;
  failed: number;
  skipped: number;
  /** Names of failing (or erroring) tests, in the runner's own notation. */
  failing: string[];
  exitCode: number | null;
  timedOut: boolean;
  /** False when no known summary line was found: then only the exit code counts. */
  recognized: boolean;
  /** A module the tests could not import (not installed, or misspelt), when the output names one. */
  missingModule?: string;
  /** The test command could not start (exit 126 or 127, no runner's summary): the program, and the shell's line. */
  cannotStart?: CannotStart;
  /** The runner found no tests at all and exited non-zero (pytest's exit 5, jest's "No tests found"): its line. */
  noTests?: string;
  /** The run ran out of the sandbox's memory: the OOM killer struck, or Node's heap (about half of it) filled up. */
  outOfMemory?: OutOfMemory;
}

export interface OutOfMemory {
  how: 'killed' | 'heap';
  /** The sandbox's memory limit the run had. */
  limitMb: number;
}

/** "the test run ran out of memory (512 MB); raise it with --memory": for the model, the report and the CLI. */
export function describeOutOfMemory(outOfMemory: OutOfMemory, what = 'the test run'): string {
  const how =
    outOfMemory.how === 'killed'
      ? 'the kernel killed a process of it (exit 137)'
      : 'Node’s heap, about half of the sandbox’s memory, filled up ("JavaScript heap out of memory")';
  return `${what} ran out of memory (${outOfMemory.limitMb} MB): ${how}; raise it with --memory (run, start), sandbox.memoryMb in the run input, or "sandbox": {"memoryMb": ${Math.max(outOfMemory.limitMb * 2, 2048)}} in durable-debugger.json`;
}

export function summarizeTestOutput(
  rawOutput: string,
  exitCode: number | null,
  timedOut = false,
  outOfMemory?: OutOfMemory,
): TestSummary {
  // Runners forced into colour (pytest's --color=yes in addopts, FORCE_COLOR) still get summarised.
  const output = stripAnsi(rawOutput);
  const summary = parseRecursiveRun(output) ?? parseAny(output);
  const missing = missingModuleIn(output);
  const ranSome = summary !== null && summary.passed + summary.failed + summary.skipped > 0;
  const noTests = timedOut || ranSome ? undefined : noTestsLine(output, exitCode);
  const extra = {
    ...(missing ? { missingModule: missing } : {}),
    ...(outOfMemory ? { outOfMemory } : {}),
    ...(noTests ? { noTests } : {}),
  };
  if (summary) return { ...summary, exitCode, timedOut, recognized: true, ...extra };
  const cannotStart = timedOut ? undefined : programThatCannotStart(output, exitCode);
  return {
    ...{ passed: 0, failed: 0, skipped: 0, failing: [], exitCode, timedOut, recognized: false, ...extra },
    ...(cannotStart ? { cannotStart } : {}),
  };
}

/**
 * `pnpm -r test` (and --filter) prints each workspace member's lines after "<folder> <script>: ",
 * under a "<folder> <script>$ <command>" line: each member's output is read alone (members may use
 * different runners), and their counts added up.
 */
function parseRecursiveRun(output: string): Counts | null {
  const lines = output.split('\n');
  const headers = new Set(lines.map((line) => line.match(/^(\S+ [\w:.-]+)\$ /)?.[1]).filter((h) => h !== undefined));
  if (headers.size === 0) return null;
  const groups = new Map<string, string[]>();
  for (const line of lines) {
    const prefix = line.match(/^(\S+ [\w:.-]+): /)?.[1];
    if (prefix === undefined || !headers.has(prefix)) continue;
    groups.set(prefix, [...(groups.get(prefix) ?? []), line.slice(prefix.length + 2)]);
  }
  const summaries = [...groups.values()].map((group) => parseAny(group.join('\n'))).filter((each) => each !== null);
  if (summaries.length === 0) return null;
  return {
    passed: summaries.reduce((sum, each) => sum + each.passed, 0),
    failed: summaries.reduce((sum, each) => sum + each.failed, 0),
    skipped: summaries.reduce((sum, each) => sum + each.skipped, 0),
    failing: summaries.flatMap((each) => each.failing),
  };
}

function parseAny(output: string): Counts | null {
  return (
    parseSurefireSummary(output) ??
    // Before pytest's: libtest's "test result: ok. 2 passed; … finished in 0.00s" reads like pytest's last line.
    parseCargoTest(output) ??
    parseBunTest(output) ??
    parsePytest(output) ??
    parseNode(output) ??
    parseTap(output) ??
    parseAva(output) ??
    parseUnittest(output) ??
    parseVitest(output) ??
    parseJest(output) ??
    parseMocha(output) ??
    parseGoTestOutput(output) ??
    parseUvu(output) ??
    parseNativeTests(output) ??
    parsePlainCounts(output)
  );
}

/** The third-party module an import failed on (Python or Node); relative paths are the code's own. */
export function missingModuleIn(output: string): string | undefined {
  const match =
    output.match(/ModuleNotFoundError: No module named '([^']+)'/) ??
    output.match(/Cannot find (?:module|package) '([^']+)'/) ??
    // Vite's (vitest's) lines only: urllib3's "Failed to resolve 'pypi.org'" names a host.
    output.match(/Failed to resolve import\s"([^"]+)"/) ??
    output.match(/Failed to load url (\S+) \(resolved id/);
  const name = match?.[1];
  return name && !name.startsWith('.') && !name.startsWith('/') ? name : undefined;
}

/** True when the run as a whole failed: a failing test, a timeout, or a crash with no counts. */
export function testsFailed(summary: TestSummary): boolean {
  if (summary.timedOut) return true;
  if (summary.failed > 0) return true;
  return summary.exitCode !== 0;
}

export function formatTestSummary(summary: TestSummary): string {
  if (summary.timedOut) return 'Tests: TIMED OUT before finishing.';
  if (summary.outOfMemory) {
    const counts = summary.recognized ? ` ${summary.passed} passed, ${summary.failed} failed before it ended.` : '';
    return `Tests: ${describeOutOfMemory(summary.outOfMemory)}.${counts} This is the sandbox's limit: unless the code under test is expected to use that much (a runaway allocation would be a bug), the suite cannot finish here, and neither can the verification of a fix.`;
  }
  const missing = summary.missingModule
    ? `\nThe tests could not import "${summary.missingModule}": no such module is installed in the sandbox's environment or present in the workspace (dependencies come from requirements*.txt, pyproject.toml, setup.cfg or package.json, or from setup commands in durable-debugger.json).`
    : '';
  if (!summary.recognized) {
    return `Tests: exit code ${summary.exitCode}; no test summary was recognized in the output.${missing}`;
  }
  const parts = [`${summary.passed} passed`, `${summary.failed} failed`];
  if (summary.skipped) parts.push(`${summary.skipped} skipped`);
  const head = `Tests: ${parts.join(', ')} (exit code ${summary.exitCode}).${missing}`;
  if (summary.failing.length === 0) return head;
  return `${head}\nFailing:\n${summary.failing.map((name) => `  - ${name}`).join('\n')}`;
}

type Counts = Omit<TestSummary, 'exitCode' | 'timedOut' | 'recognized'>;

function count(text: string, pattern: RegExp): number {
  const match = text.match(pattern);
  return match?.[1] ? Number(match[1]) : 0;
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

function parsePytest(output: string): Counts | null {
  // e.g. "==== 1 failed, 3 passed, 1 skipped in 0.05s ====" or "2 passed in 0.01s"
  const lines = output.split('\n');
  const finalLine = [...lines]
    .reverse()
    .find((line) => /\b(passed|failed|errors?|no tests ran)\b.* in [\d.]+s/.test(line));
  if (!finalLine) return null;
  const failing = lines
    // A parametrized id may hold spaces (click's `test_echo_via_pager[test0- less ]`): it ends at " - ".
    .map((line) => line.match(/^(?:FAILED|ERROR) (\S.*?)(?: - .*)?$/)?.[1])
    .filter((name): name is string => Boolean(name));
  return {
    passed: count(finalLine, /(\d+) passed/),
    failed: count(finalLine, /(\d+) failed/) + count(finalLine, /(\d+) errors?/),
    skipped: count(finalLine, /(\d+) skipped/),
    failing: unique(failing),
  };
}

function parseNode(output: string): Counts | null {
  // node:test's spec reporter ("ℹ pass 2"); its TAP reporter is read by parseTap.
  const pass = output.match(/^ℹ pass (\d+)/m);
  const fail = output.match(/^ℹ fail (\d+)/m);
  if (!pass || !fail) return null;
  // The closing list names the failing tests only; above it a suite whose test failed is marked too.
  const listed = output.split(/^✖ failing tests:$/m);
  const failing = (listed.length > 1 ? (listed.pop() as string) : output)
    .split('\n')
    .map((line) => line.match(/^\s*✖ (.+?) \([\d.]+m?s\)$/)?.[1])
    .filter((name): name is string => Boolean(name));
  return {
    passed: Number(pass[1]),
    failed: Number(fail[1]),
    skipped: count(output, /^ℹ skipped (\d+)/m),
    failing: unique(failing),
  };
}

/**
 * TAP, from node:test, tape, node-tap, ava --tap and others: counts from the closing comments
 * ("# pass 2", tape's "# pass  2", node-tap's "# { total: 3, pass: 2, fail: 1 }"), the failing
 * tests from the "not ok" lines. A "not ok" that closes a "# Subtest: name" block is a test, listed
 * unless a test inside it failed (a suite, a file); one inside a test is an assertion of it; one at
 * the top is a test itself (ava), or an assertion of the test a "# name" comment above it opened (tape).
 */
function parseTap(output: string): Counts | null {
  const tapObject = output.match(/^# \{ total: \d+(.*) \}$/m)?.[1];
  const counted = (name: string) =>
    tapObject !== undefined
      ? count(tapObject, new RegExp(`\\b${name}: (\\d+)`))
      : count(output, new RegExp(`^# ${name}\\s+(\\d+)\\s*$`, 'm'));
  const hasPass = tapObject !== undefined || /^# pass\s+\d+\s*$/m.test(output);
  if (!hasPass || !/^\s*(?:not )?ok \d+\b/m.test(output)) return null;
  const failing: string[] = [];
  const open: { name: string; indent: number; failedInside: boolean }[] = [];
  let comment: string | undefined;
  for (const line of output.split('\n')) {
    const subtest = line.match(/^(\s*)# Subtest: (.+?)\s*$/);
    if (subtest) {
      open.push({ name: subtest[2] as string, indent: (subtest[1] as string).length, failedInside: false });
      continue;
    }
    const heading = line.match(/^# (?!tests\b|pass\b|fail\b|skip|todo\b|ok$|\{|time=)(.+?)\s*$/);
    if (heading && open.length === 0) comment = heading[1];
    const point = line.match(/^(\s*)(not )?ok \d+(?: -)? ?(.*?)(?:\s+#.*)?$/);
    if (!point) continue;
    const indent = (point[1] as string).length;
    const name = point[3] as string;
    const failed = Boolean(point[2]);
    const top = open.at(-1);
    if (top && top.indent === indent && top.name === name) {
      open.pop();
      // A suite, a file, a parent test: the failing tests inside are listed, not it.
      if (failed && !top.failedInside) failing.push(name);
      if (failed) for (const outer of open) outer.failedInside = true;
    } else if (failed && !top) {
      failing.push(comment ?? name);
    }
  }
  return {
    passed: counted('pass'),
    failed: counted('fail'),
    skipped: counted('skip') + counted('skipped') + counted('todo'),
    failing: unique(failing),
  };
}

/** ava's default reporter: "✔ title", "✘ [fail]: title message", then "3 tests failed" or "5 tests passed". */
function parseAva(output: string): Counts | null {
  const failedLine = output.match(/^\s*(\d+) tests? failed\s*$/m);
  const passedLine = output.match(/^\s*(\d+) tests? passed\s*$/m);
  if (!failedLine && !passedLine) return null;
  const lines = output.split('\n').map((line) => line.trim());
  // The line names the title and the error's message; the title is also a line of its own in the details.
  const titles = new Set(lines);
  const failing = lines
    .map((line) => line.match(/^✘ \[(?:fail|unexpected pass)\]: (.+)$/)?.[1])
    .filter((rest): rest is string => Boolean(rest))
    .map((rest) => {
      const words = rest.split(' ');
      for (let end = words.length; end > 0; end--) {
        const title = words.slice(0, end).join(' ');
        if (titles.has(title)) return title;
      }
      return rest;
    });
  return {
    // With failures, ava prints no passed count: each passing test has its ✔ line.
    passed: passedLine ? Number(passedLine[1]) : lines.filter((line) => /^✔ (?!\[expected fail\])/.test(line)).length,
    failed: failedLine ? Number(failedLine[1]) : 0,
    skipped: count(output, /^\s*(\d+) tests? skipped\s*$/m) + count(output, /^\s*(\d+) tests? todo\s*$/m),
    failing: unique(failing),
  };
}

/** unittest: "Ran 3 tests in 0.001s", then "OK" or "FAILED (failures=1, errors=1, skipped=1)". */
function parseUnittest(output: string): Counts | null {
  const ran = output.match(/^Ran (\d+) tests? in [\d.]+s$/m);
  const verdict = output.match(/^(?:OK|FAILED)(?: \((.*)\))?\s*$/m);
  if (!ran || !verdict) return null;
  const details = verdict[1] ?? '';
  const failed = count(details, /\bfailures=(\d+)/) + count(details, /\berrors=(\d+)/);
  const skipped = count(details, /\bskipped=(\d+)/) + count(details, /\bexpected failures=(\d+)/);
  // "FAIL: test_x (package.module.Case.test_x)" (3.11+) or "(package.module.Case)" before.
  const failing = [...output.matchAll(/^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)/gm)].map(([, method, where]) =>
    (where as string).endsWith(`.${method as string}`) ? (where as string) : `${where as string}.${method as string}`,
  );
  return { passed: Math.max(0, Number(ran[1]) - failed - skipped), failed, skipped, failing: unique(failing) };
}

export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07/g, '');
}

function parseVitest(output: string): Counts | null {
  // "      Tests  1 failed | 4 passed | 1 skipped (6)"
  const line = [...output.matchAll(/^\s*Tests\s{2,}(.*\(\d+\))\s*$/gm)].pop()?.[1];
  if (!line) return null;
  const failing = [...output.matchAll(/^\s*FAIL\s+(.+? > .+?)\s*$/gm)].map((match) =>
    (match[1] as string).replace(/\s+\[.*\]$/, ''),
  );
  return {
    passed: count(line, /(\d+) passed/),
    failed: count(line, /(\d+) failed/),
    skipped: count(line, /(\d+) skipped/) + count(line, /(\d+) todo/),
    failing: unique(failing),
  };
}

function parseJest(output: string): Counts | null {
  // "Tests:       1 failed, 4 passed, 5 total"
  const line = [...output.matchAll(/^Tests:\s+(.*\d+ total)\s*$/gm)].pop()?.[1];
  if (!line) return null;
  const failing = [...output.matchAll(/^\s*● (.+?)\s*$/gm)]
    .map((match) => match[1] as string)
    .filter((name) => !/^Console$|^Test suite failed to run$/.test(name));
  return {
    passed: count(line, /(\d+) passed/),
    failed: count(line, /(\d+) failed/),
    skipped: count(line, /(\d+) skipped/) + count(line, /(\d+) todo/),
    failing: unique(failing),
  };
}

function parseMocha(output: string): Counts | null {
  // "  2 passing (10ms)", "  1 failing", "  1 pending", then "  1) suite\n       test:" per failure.
  const passing = output.match(/^\s*(\d+) passing \(/m);
  if (!passing) return null;
  const failedCount = count(output, /^\s*(\d+) failing$/m);
  const failing: string[] = [];
  const afterSummary = output.slice(
    output.search(/^\s*\d+ failing$/m) >= 0 ? output.search(/^\s*\d+ failing$/m) : output.length,
  );
  for (const match of afterSummary.matchAll(/^ {2}\d+\) (.+)\n((?: {5,}.+\n)*?) {5,}(.+):$/gm)) {
    const parts = [
      match[1] as string,
      ...(match[2] ?? '')
        .split('\n')
        .map((part) => part.trim())
        .filter(Boolean),
      match[3] as string,
    ];
    failing.push(parts.map((part) => part.trim()).join(' '));
  }
  return {
    passed: Number(passing[1]),
    failed: failedCount,
    skipped: count(output, /^\s*(\d+) pending$/m),
    failing: unique(failing),
  };
}

function parseUvu(output: string): Counts | null {
  // "  Total:     7", "  Passed:    5", "  Skipped:   0"; each failure "   FAIL  suite  \"test name\"" (no suite: the default).
  const total = output.match(/^\s*Total:\s+(\d+)\s*$/m);
  const passed = output.match(/^\s*Passed:\s+(\d+)\s*$/m);
  if (!total || !passed) return null;
  const skipped = count(output, /^\s*Skipped:\s+(\d+)\s*$/m);
  const failing = [...output.matchAll(/^\s*FAIL\s+(?:(.+?)\s+)?"(.+)"\s*$/gm)].map((match) =>
    match[1] ? `${match[1]} > ${match[2]}` : (match[2] as string),
  );
  return {
    passed: Number(passed[1]),
    failed: Math.max(0, Number(total[1]) - Number(passed[1]) - skipped),
    skipped,
    failing: unique(failing),
  };
}

function parsePlainCounts(output: string): Counts | null {
  const match = [...output.matchAll(/^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/gm)].pop();
  if (!match) return null;
  return { passed: Number(match[1]), failed: Number(match[2]), skipped: Number(match[3] ?? 0), failing: [] };
}

export interface Verification {
  fixed: boolean;
  stillFailing: string[];
  newlyFailing: string[];
  reason: string;
}

/**
 * A fix is verified when every test that failed before passes now and nothing that passed
 * before fails now. Names are compared when the runner gives them; counts otherwise.
 */
export function verifyFix(before: TestSummary, after: TestSummary): Verification {
  const beforeFailing = new Set(before.failing);
  const stillFailing = after.failing.filter((name) => beforeFailing.has(name));
  const newlyFailing = after.failing.filter((name) => !beforeFailing.has(name));
  if (after.timedOut) {
    return { fixed: false, stillFailing, newlyFailing, reason: 'the test run timed out' };
  }
  if (after.outOfMemory) {
    return { fixed: false, stillFailing, newlyFailing, reason: describeOutOfMemory(after.outOfMemory) };
  }
  if (!after.recognized && after.exitCode !== 0) {
    return { fixed: false, stillFailing, newlyFailing, reason: `the test command exited with ${after.exitCode}` };
  }
  if (after.failed > 0 || after.exitCode !== 0) {
    const names = [...stillFailing, ...newlyFailing];
    const detail = names.length ? `: ${names.join(', ')}` : '';
    return { fixed: false, stillFailing, newlyFailing, reason: `${after.failed} test(s) still fail${detail}` };
  }
  const expectedPassing = before.passed + before.failed;
  if (after.recognized && before.recognized && after.passed < expectedPassing) {
    return {
      fixed: false,
      stillFailing,
      newlyFailing,
      reason: `only ${after.passed} tests pass now, but ${expectedPassing} ran before: tests went missing`,
    };
  }
  return { fixed: true, stillFailing: [], newlyFailing: [], reason: 'all tests pass' };
}
