// Each runner real repositories use, read from its real output (test/unit/runnerOutput, captured
// from the runners themselves): counts and failing test names, colours or not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { summarizeTestOutput } from '../../src/agent/testResults.js';

interface Expected {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

const captures: Expected[] = [
  {
    file: 'ava.txt',
    passed: 3,
    failed: 3,
    skipped: 1,
    failing: ['strings › joins words', 'math › multiplies numbers', 'math › divides numbers'],
  },
  { file: 'ava-pass.txt', passed: 2, failed: 0, skipped: 0, failing: [] },
  {
    file: 'ava-tap.txt',
    passed: 3,
    failed: 3,
    skipped: 1,
    failing: ['strings › joins words', 'math › multiplies numbers', 'math › divides numbers'],
  },
  { file: 'tap.txt', passed: 2, failed: 1, skipped: 0, failing: ['multiplies numbers'] },
  { file: 'tap-pass.txt', passed: 2, failed: 0, skipped: 0, failing: [] },
  { file: 'tape.txt', passed: 2, failed: 1, skipped: 0, failing: ['multiplies numbers'] },
  { file: 'tape-pass.txt', passed: 2, failed: 0, skipped: 0, failing: [] },
  { file: 'uvu.txt', passed: 1, failed: 1, skipped: 0, failing: ['multiplies numbers'] },
  // The suite around the failing test is not a failing test of its own.
  { file: 'nodetest.txt', passed: 2, failed: 1, skipped: 0, failing: ['multiplies numbers'] },
  { file: 'nodetest-spec.txt', passed: 2, failed: 1, skipped: 0, failing: ['multiplies numbers'] },
  { file: 'jest.txt', passed: 2, failed: 1, skipped: 1, failing: ['math › multiplies numbers'] },
  {
    file: 'vitest.txt',
    passed: 1,
    failed: 2,
    skipped: 0,
    failing: ['math.test.js > math > multiplies numbers', 'math.test.js > top level fails'],
  },
  { file: 'mocha.txt', passed: 1, failed: 1, skipped: 1, failing: ['math multiplies numbers'] },
  {
    file: 'pytest.txt',
    passed: 1,
    failed: 2,
    skipped: 1,
    failing: ['test_math.py::MathTest::test_multiplies', 'test_math.py::test_plain_function'],
  },
  { file: 'unittest.txt', passed: 1, failed: 1, skipped: 1, failing: ['test_math.MathTest.test_multiplies'] },
  { file: 'unittest-plain.txt', passed: 1, failed: 1, skipped: 1, failing: ['test_math.MathTest.test_multiplies'] },
];

for (const expected of captures) {
  test(`${expected.file}: the summary and the failing tests are read`, () => {
    const output = readFileSync(new URL(`runnerOutput/${expected.file}`, import.meta.url), 'utf8');
    const summary = summarizeTestOutput(output, expected.failed ? 1 : 0);
    assert.equal(summary.recognized, true, 'a summary was recognized');
    const { passed, failed, skipped, failing } = summary;
    const { file: _file, ...counts } = expected;
    assert.deepEqual({ passed, failed, skipped, failing }, counts);
  });
}
