// A runner that found no tests and failed for it, as each runner prints it (captured from pytest
// 9.2, jest 30, vitest 4, mocha 11; unittest's from Python 3.12's): the run ends before any model
// call when the baseline says so (workflows/failures.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeNoTests } from '../../src/agent/baselineProblems.js';
import { summarizeTestOutput } from '../../src/agent/testResults.js';

const esc = '\u001b';

test('each runner’s "no tests" line is found, and quoted in why the run ends', () => {
  const cases: Array<[string, number, string]> = [
    [
      'collected 0 items\n\n============================ no tests ran in 0.05s =============================\n',
      5,
      '============================ no tests ran in 0.05s =============================',
    ],
    ['\nno tests ran in 0.01s\n', 5, 'no tests ran in 0.01s'],
    [
      '\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n',
      5,
      'NO TESTS RAN',
    ],
    [
      'No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\nIn /workspace\n  2 files checked.\n',
      1,
      'No tests found, exiting with code 1',
    ],
    [
      `${esc}[1m${esc}[30m${esc}[46m RUN ${esc}[49m${esc}[39m${esc}[22m ${esc}[36mv4.1.12 ${esc}[39m\n\n${esc}[31mNo test files found, exiting with code 1\n${esc}[39m\n`,
      1,
      'No test files found, exiting with code 1',
    ],
    ['Error: No test files found: "test"\n', 1, 'Error: No test files found: "test"'],
  ];
  for (const [output, exitCode, line] of cases) {
    const summary = summarizeTestOutput(output, exitCode);
    assert.equal(summary.noTests, line, output);
    const why = describeNoTests(summary) ?? '';
    assert.ok(why.startsWith(`the test command ran no tests: its runner said "${line}" (exit code ${exitCode})`), why);
    assert.match(why, /--test-command/);
  }
});

test('a run that ran tests, passed with none, or timed out is not one without tests', () => {
  // Some tests ran (a pytester test printed an inner session's line): the counts are the tests'.
  const inner = '----- Captured stdout call -----\nno tests ran in 0.01s\n==== 1 failed in 0.1s ====\n';
  assert.equal(summarizeTestOutput(inner, 1).noTests, undefined);
  // Exit 0 (jest --passWithNoTests, unittest before 3.12, go's "no test files"): CI accepts it too.
  assert.equal(summarizeTestOutput('no tests ran in 0.01s\n', 0).noTests, undefined);
  assert.equal(summarizeTestOutput('Ran 0 tests in 0.000s\n\nOK\n', 0).noTests, undefined);
  assert.equal(summarizeTestOutput('No tests found, exiting with code 1\n', 1, true).noTests, undefined);
  // A test that prints the words is not the runner saying them.
  assert.equal(summarizeTestOutput('    assert "no tests ran in 0.01s" in out\n', 1).noTests, undefined);
  assert.equal(describeNoTests(summarizeTestOutput('FAILED', 1)), null);
});
