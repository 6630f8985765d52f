// C and C++ test output: CTest's summary and its list of failed tests, GoogleTest's lines (a test
// binary run by ctest --output-on-failure, or on its own), Unity's summary (C projects' `make
// check`), and the compiler's and linker's errors when the tests did not build. A build that fails
// is a failure of the build, named by the file that does not compile ("build: src/add.cpp does
// not compile"), never "0 passed": no test ran.
// Pure: read by the workflow through testResults.ts.

export interface NativeTestCounts {
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

const ctestSummary = /^\s*\d+% tests passed, (\d+) tests? failed out of (\d+)/m;
const ctestListHeader = /^The following tests (FAILED|did not run):\s*$/;
const ctestListed = /^\s*\d+ - (.+?) \(([^)]+)\)\s*$/;
const gtestFailedTest = /^\[ {2}FAILED {2}\] ([\w/.]+\.[\w/]+)(?:, where .*)?(?: \(\d+ ms\))?\s*$/;
const gtestPassedSummary = /^\[ {2}PASSED {2}\] (\d+) tests?\./;
const gtestFailedSummary = /^\[ {2}FAILED {2}\] (\d+) tests?, listed below:/;
const gtestSkippedSummary = /^\[ {2}SKIPPED \] (\d+) tests?, listed below:/;
const unitySummary = /^(\d+) Tests (\d+) Failures (\d+) Ignored\s*$/;
const unityFailure = /^[^:\s]+:\d+:(\w+):FAIL\b/;
/** gcc's and clang's `file:line:col: error:` (and `fatal error:`), the file relative to /workspace. */
const compilerError =
  /^(?:\/workspace\/)?([^\s:][^:]*\.(?:c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|ipp|tpp|inl)):\d+(?::\d+)?: (?:fatal )?error: /i;
const linkerError = /(?:undefined reference to|collect2: error: ld returned|ld: cannot find|multiple definition of)/;

export function parseNativeTests(output: string): NativeTestCounts | null {
  const lines = output.split('\n').map((line) => line.replace(/\r$/, ''));
  return parseCtest(lines) ?? parseGtest(lines) ?? parseUnity(lines) ?? parseBuildFailure(lines);
}

function gtestFailures(lines: string[]): string[] {
  return unique(lines.map((line) => line.match(gtestFailedTest)?.[1]).filter((name) => name !== undefined));
}

function parseCtest(lines: string[]): NativeTestCounts | null {
  const text = lines.join('\n');
  const summary = text.match(ctestSummary);
  const noTests = /^No tests were found!!!$/m.test(text);
  if (!summary && !noTests) return null;
  const failed = Number(summary?.[1] ?? 0);
  const total = Number(summary?.[2] ?? 0);
  const failing: string[] = [];
  let skipped = 0;
  let list: string | null = null;
  for (const line of lines) {
    const header = line.match(ctestListHeader);
    if (header) {
      list = header[1] as string;
      continue;
    }
    const listed = list ? line.match(ctestListed) : null;
    if (!listed) {
      if (list && line.trim() && !/^\s+\d+ - /.test(line)) list = null;
      continue;
    }
    if (list === 'FAILED') failing.push(listed[1] as string);
    else if (/Skipped|Disabled/i.test(listed[2] as string)) skipped++;
  }
  // A test binary that ran many GoogleTest tests under one CTest name: its failing tests by name too.
  const names = unique([...failing, ...gtestFailures(lines)]);
  return { passed: Math.max(total - failed - skipped, 0), failed, skipped, failing: names };
}

function parseGtest(lines: string[]): NativeTestCounts | null {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let seen = false;
  for (const line of lines) {
    const pass = line.match(gtestPassedSummary);
    if (pass) {
      seen = true;
      passed += Number(pass[1]);
    }
    const fail = line.match(gtestFailedSummary);
    if (fail) {
      seen = true;
      failed += Number(fail[1]);
    }
    const skip = line.match(gtestSkippedSummary);
    if (skip) {
      seen = true;
      skipped += Number(skip[1]);
    }
  }
  // GoogleTest's [  PASSED  ] line counts skipped tests too.
  return seen ? { passed: Math.max(passed - skipped, 0), failed, skipped, failing: gtestFailures(lines) } : null;
}

function parseUnity(lines: string[]): NativeTestCounts | null {
  const counts: NativeTestCounts = { passed: 0, failed: 0, skipped: 0, failing: [] };
  let seen = false;
  for (const line of lines) {
    const failure = line.match(unityFailure);
    if (failure) counts.failing.push(failure[1] as string);
    const summary = line.match(unitySummary);
    if (!summary) continue;
    seen = true;
    const [total, failed, ignored] = [Number(summary[1]), Number(summary[2]), Number(summary[3])];
    counts.passed += Math.max(total - failed - ignored, 0);
    counts.failed += failed;
    counts.skipped += ignored;
  }
  return seen ? { ...counts, failing: unique(counts.failing) } : null;
}

/** The tests did not build: each file the compiler stopped at, or the link, is one failure. */
function parseBuildFailure(lines: string[]): NativeTestCounts | null {
  const files = unique(lines.map((line) => line.match(compilerError)?.[1]).filter((file) => file !== undefined));
  const failing = files.map((file) => `build: ${file} does not compile`);
  if (failing.length === 0 && lines.some((line) => linkerError.test(line)))
    failing.push('build: the tests do not link');
  if (failing.length === 0) return null;
  return { passed: 0, failed: failing.length, skipped: 0, failing };
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
