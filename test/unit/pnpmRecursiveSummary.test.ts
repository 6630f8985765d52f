// `pnpm -r test` prints each workspace member's lines behind "<folder> <script>: ": each member's
// runner is read alone and the counts added up (captured from pnpm 9.15.9 on fixture 32's shape).
/* eslint-disable no-irregular-whitespace -- vitest's output, as it printed it, holds non-breaking spaces */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTestOutput } from '../../src/agent/testResults.js';

const recursiveRun = `
> stats-kit@ test /repo
> pnpm -r test

Scope: 2 of 3 workspace projects
packages/core test$ node --test test/
packages/core test: TAP version 13
packages/core test: # Subtest: mean of a few values
packages/core test: ok 1 - mean of a few values
packages/core test:   ---
packages/core test:   duration_ms: 10.075239
packages/core test:   ...
packages/core test: # Subtest: median of an odd count is the middle value
packages/core test: ok 2 - median of an odd count is the middle value
packages/core test:   ---
packages/core test:   duration_ms: 0.25013
packages/core test:   ...
packages/core test: 1..2
packages/core test: # tests 2
packages/core test: # suites 0
packages/core test: # pass 2
packages/core test: # fail 0
packages/core test: # cancelled 0
packages/core test: # skipped 0
packages/core test: # todo 0
packages/core test: # duration_ms 402.667213
packages/core test: Done
packages/report test$ vitest run
packages/report test:  RUN  v2.1.9 /repo/packages/report
packages/report test:  ❯ test/report.test.js (2 tests | 1 failed) 11ms
packages/report test:    × report > tells the median of an even count as the mean of the middle two 8ms
packages/report test:      → expected 'n=4 mean=2.5 median=3' to be 'n=4 mean=2.5 median=2.5' // Object.is equality
packages/report test: ⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯
packages/report test:  FAIL  test/report.test.js > report > tells the median of an even count as the mean of the middle two
packages/report test: AssertionError: expected 'n=4 mean=2.5 median=3' to be 'n=4 mean=2.5 median=2.5' // Object.is equality
packages/report test: Expected: "n=4 mean=2.5 median=2.5"
packages/report test: Received: "n=4 mean=2.5 median=3"
packages/report test:  ❯ test/report.test.js:10:34
packages/report test:       8| 
packages/report test:       9|   it('tells the median of an even count as the mean of the middle two'…
packages/report test:      10|     expect(report([4, 1, 3, 2])).toBe('n=4 mean=2.5 median=2.5');
packages/report test:        |                                  ^
packages/report test:      11|   });
packages/report test:      12| });
packages/report test: ⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯
packages/report test:  Test Files  1 failed (1)
packages/report test:       Tests  1 failed | 1 passed (2)
packages/report test:    Start at  06:40:59
packages/report test:    Duration  634ms (transform 58ms, setup 0ms, collect 30ms, tests 11ms, environment 0ms, prepare 103ms)
packages/report test: Failed
/repo/packages/report:
 ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  @stats-kit/report@0.7.1 test: \`vitest run\`
Exit status 1
 ELIFECYCLE  Test failed. See above for more details.
`;

test('pnpm -r test: node:test in one member and vitest in another are both read and added up', () => {
  const summary = summarizeTestOutput(recursiveRun, 1);
  assert.equal(summary.recognized, true);
  assert.deepEqual(
    { passed: summary.passed, failed: summary.failed, failing: summary.failing },
    {
      passed: 3,
      failed: 1,
      failing: ['test/report.test.js > report > tells the median of an even count as the mean of the middle two'],
    },
  );
});
