import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTestSummary, summarizeTestOutput, verifyFix } from '../../src/agent/testResults.js';

const pytestFailing = `F....                                                                    [100%]
=================================== FAILURES ===================================
=========================== short test summary info ============================
FAILED test_buggy_code.py::test_max_at_the_end - assert 4 == 5
1 failed, 4 passed in 0.03s`;

test('pytest: counts and failing test names', () => {
  const summary = summarizeTestOutput(pytestFailing, 1);
  assert.equal(summary.failed, 1);
  assert.equal(summary.passed, 4);
  assert.deepEqual(summary.failing, ['test_buggy_code.py::test_max_at_the_end']);
});

test('node --test TAP output', () => {
  const output = `TAP version 13
# Subtest: sums
ok 1 - sums
# Subtest: awaits the result
not ok 2 - awaits the result
  ---
  ...
1..2
# tests 2
# pass 1
# fail 1
# skipped 0`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual([summary.passed, summary.failed], [1, 1]);
  assert.deepEqual(summary.failing, ['awaits the result']);
});

test('go test -v and cargo test', () => {
  const go = summarizeTestOutput(
    '=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/m\t0.01s',
    1,
  );
  assert.deepEqual([go.passed, go.failed, go.failing], [1, 1, ['example.com/m.TestB']]);
  const cargo = summarizeTestOutput(
    'test tests::a ... ok\ntest tests::b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out',
    101,
  );
  assert.deepEqual([cargo.passed, cargo.failed, cargo.failing], [1, 1, ['tests::b']]);
});

test('a fix is verified only when the failing tests pass and nothing else breaks', () => {
  const before = summarizeTestOutput(pytestFailing, 1);
  assert.equal(verifyFix(before, summarizeTestOutput('5 passed in 0.02s', 0)).fixed, true);
  assert.equal(verifyFix(before, summarizeTestOutput(pytestFailing, 1)).fixed, false);
  const broken = verifyFix(
    before,
    summarizeTestOutput('FAILED test_buggy_code.py::test_single_item - x\n1 failed, 4 passed in 0.1s', 1),
  );
  assert.equal(broken.fixed, false);
  assert.deepEqual(broken.newlyFailing, ['test_buggy_code.py::test_single_item']);
  assert.equal(verifyFix(before, summarizeTestOutput('3 passed in 0.02s', 0)).fixed, false, 'tests went missing');
  assert.equal(verifyFix(before, summarizeTestOutput('', null, true)).fixed, false, 'a timeout is not a fix');
});

test('colour codes are stripped before parsing (pytest with addopts = --color=yes)', () => {
  const coloured =
    '\x1b[31mFAILED\x1b[0m tests/test_jobs.py::\x1b[1mtest_first_result\x1b[0m - assert <coroutine>\n' +
    '\x1b[31m========================= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m2 passed\x1b[0m\x1b[31m in 0.05s\x1b[0m\x1b[31m ==========================\x1b[0m';
  const summary = summarizeTestOutput(coloured, 1);
  assert.deepEqual(
    [summary.passed, summary.failed, summary.failing],
    [2, 1, ['tests/test_jobs.py::test_first_result']],
  );
});

test('vitest: counts and failing test names (file > suite > test)', () => {
  const output = ` ❯ test/slug.test.ts (3 tests | 1 failed) 5ms
   × slugify > drops accents 3ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/slug.test.ts > slugify > drops accents
AssertionError: expected 'caf' to be 'cafe'

 Test Files  1 failed (1)
      Tests  1 failed | 2 passed (3)
   Start at  10:00:00
   Duration  300ms`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual(
    [summary.passed, summary.failed, summary.failing],
    [2, 1, ['test/slug.test.ts > slugify > drops accents']],
  );
});

test('jest: counts and failing test names', () => {
  const output = ` FAIL  test/cart.test.js
  ● cart › applies the discount once

    expect(received).toBe(expected)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 3 passed, 4 total
Snapshots:   0 total`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual([summary.passed, summary.failed, summary.failing], [3, 1, ['cart › applies the discount once']]);
});

test('mocha: counts and failing test names', () => {
  const output = `  newestSatisfying
    ✔ ignores versions out of range
    1) picks the newest match


  1 passing (8ms)
  1 failing

  1) newestSatisfying
       picks the newest match:
     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual(
    [summary.passed, summary.failed, summary.failing],
    [1, 1, ['newestSatisfying picks the newest match']],
  );
});

test('uvu: counts and failing test names, with and without a suite', () => {
  // As uvu 0.5 prints it (colours stripped).
  const output = `index.js
• • ✘ ✘ • • •   (5 / 7)

   FAIL  "month and day"
    Expected values to be strictly equal:  (is)

        ++01    (Expected)
        --00    (Actual)
           ^
    at assert (/workspace/node_modules/uvu/assert/index.js:33:8)


   FAIL  dates  "full date"
    Expected values to be strictly equal:  (is)


  Total:     7
  Passed:    5
  Skipped:   0
  Duration:  12.42ms

`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual(
    [summary.passed, summary.failed, summary.skipped, summary.failing],
    [5, 2, 0, ['month and day', 'dates > full date']],
  );
  assert.equal(summary.recognized, true);
});

test('bun test: counts, failing tests named with their file, and a file that failed to load', () => {
  const output = [
    'bun test v1.4.5 (a7733435c)',
    '',
    'test/a.test.ts:',
    '(pass) slug > lowercases [0.12ms]',
    '24 |   });',
    'error: expect(received).toBe(expected)',
    '(fail) slug > collapses dashes [2.49ms]',
    '(skip) slug > unicode',
    '',
    'test/b.test.ts:',
    '(fail) collapses dashes [0.30ms]',
    '(todo) later',
    '',
    'test/c.test.ts:',
    '',
    '# Unhandled error between tests',
    '-------------------------------',
    "error: Cannot find package 'dayjs' from '/workspace/src/c.ts'",
    '-------------------------------',
    '',
    ' 1 pass',
    ' 1 skip',
    ' 1 todo',
    ' 3 fail',
    ' 1 error',
    ' 4 expect() calls',
    'Ran 5 tests across 3 files. [26.00ms]',
  ].join('\n');
  const summary = summarizeTestOutput(output, 1);
  assert.equal(summary.recognized, true);
  assert.deepEqual([summary.passed, summary.failed, summary.skipped], [1, 3, 2]);
  assert.deepEqual(summary.failing, [
    'test/a.test.ts > slug > collapses dashes',
    'test/b.test.ts > collapses dashes',
    'test/c.test.ts',
  ]);
  assert.equal(summary.missingModule, 'dayjs');
});

test('a test run that cannot import a dependency says which one', () => {
  const pytest = summarizeTestOutput(
    "ImportError while importing test module '/workspace/tests/test_schedule.py'.\nE   ModuleNotFoundError: No module named 'dateutil'\n=========================== short test summary info ============================\nERROR tests/test_schedule.py\n1 error in 0.10s",
    2,
  );
  assert.equal(pytest.missingModule, 'dateutil');
  assert.match(formatTestSummary(pytest), /could not import "dateutil": no such module is installed/);
  const node = summarizeTestOutput("Error: Cannot find module 'semver'\nRequire stack:\n- /workspace/src/pick.js", 1);
  assert.equal(node.missingModule, 'semver');
  assert.equal(
    summarizeTestOutput("Error: Cannot find module './pick.js'", 1).missingModule,
    undefined,
    'the code’s own files are not dependencies',
  );
  const vitest = summarizeTestOutput(
    'Error: Failed to resolve import "dayjs" from "src/when.ts". Does the file exist?\n Test Files  1 failed (1)',
    1,
  );
  assert.equal(vitest.missingModule, 'dayjs');
  // setuptools-scm 10's network tests without a network: a host, not a module.
  const offline = summarizeTestOutput(
    "E   urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve 'pypi.org' ([Errno -3] Temporary failure in name resolution)\nFAILED testing_scm/test_regressions.py::test_pip_download - urllib3.exceptions.NameResolutionError\n1 failed, 199 passed in 30.1s",
    1,
  );
  assert.equal(offline.missingModule, undefined);
});

test('a test run that ran out of memory says so, with the limit and how to raise it, and is never a verified fix', () => {
  const killed = summarizeTestOutput('collected 5 items\n', 137, false, { how: 'killed', limitMb: 512 });
  assert.equal(
    formatTestSummary(killed),
    'Tests: the test run ran out of memory (512 MB): the kernel killed a process of it (exit 137); raise it with --memory (run, start), sandbox.memoryMb in the run input, or "sandbox": {"memoryMb": 2048} in durable-debugger.json. This is the sandbox\'s limit: unless the code under test is expected to use that much (a runaway allocation would be a bug), the suite cannot finish here, and neither can the verification of a fix.',
  );
  // A jest whose worker was killed still prints counts; the summary keeps them.
  const heap = summarizeTestOutput('Tests:       1 failed, 20 passed, 21 total\n', 1, false, {
    how: 'heap',
    limitMb: 1024,
  });
  assert.match(formatTestSummary(heap), /^Tests: the test run ran out of memory \(1024 MB\): Node’s heap, about half/);
  assert.match(formatTestSummary(heap), / 20 passed, 1 failed before it ended\./);
  const before = summarizeTestOutput('1 failed, 1 passed in 0.1s\nFAILED t.py::a\n', 1);
  const verdict = verifyFix(
    before,
    summarizeTestOutput('2 passed in 0.1s\n', 137, false, { how: 'killed', limitMb: 256 }),
  );
  assert.equal(verdict.fixed, false);
  assert.match(verdict.reason, /^the test run ran out of memory \(256 MB\)/);
});

test('a parametrized pytest id with spaces is read whole, up to " - " (click’s pager tests)', () => {
  const output = [
    "FAILED tests/test_utils/test_echo_via_pager.py::test_echo_via_pager[test0- less ] - AssertionError: Unexpected pager output in test case 'Plain string argument'",
    'FAILED tests/test_utils/test_echo_via_pager.py::test_echo_via_pager[test0-less] - AssertionError: Unexpe...',
    'ERROR tests/test_db.py::test_query[select 1]',
    '2 failed, 2410 passed, 1 error in 41.2s',
  ].join('\n');
  assert.deepEqual(summarizeTestOutput(output, 1).failing, [
    'tests/test_utils/test_echo_via_pager.py::test_echo_via_pager[test0- less ]',
    'tests/test_utils/test_echo_via_pager.py::test_echo_via_pager[test0-less]',
    'tests/test_db.py::test_query[select 1]',
  ]);
});
