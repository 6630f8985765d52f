// The Java environment's test command (java/surefireReports.ts) prints Surefire's XML reports after
// Maven ends; these captures are its real output around Maven 3.9.11 and Surefire 3.5.2 on a
// two-module reactor (test/unit/runnerOutput/captures.md). A module that did not build is a failure.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatTestSummary, summarizeTestOutput, verifyFix } from '../../src/agent/testResults.js';

const capture = (name: string) => readFileSync(new URL(`runnerOutput/${name}`, import.meta.url), 'utf8');

test('a reactor’s results come from each module’s Surefire reports', () => {
  const summary = summarizeTestOutput(capture('maven-surefire-reactor.txt'), 1);
  assert.equal(summary.recognized, true);
  assert.deepEqual(
    { passed: summary.passed, failed: summary.failed, skipped: summary.skipped, failing: summary.failing },
    { passed: 2, failed: 1, skipped: 1, failing: ['com.example.app.GreeterTest.fails'] },
  );
});

test('a module whose compile failed is a build failure named after it, not “0 passed”', () => {
  const summary = summarizeTestOutput(capture('maven-surefire-compile-error.txt'), 1);
  assert.equal(summary.recognized, true);
  assert.equal(summary.passed, 1);
  assert.equal(summary.failed, 1);
  assert.deepEqual(summary.failing, ['app (build failure: no Surefire reports)']);
  assert.match(formatTestSummary(summary), /app \(build failure: no Surefire reports\)/);
  // Fixing the compile error and the failing test is verified by names: the module's tests ran.
  const after = summarizeTestOutput(
    '[surefire-reports] app: 2 passed, 0 failed, 0 skipped\n[surefire-reports] core: 1 passed, 0 failed, 1 skipped\n[surefire-reports] total: 3 passed, 0 failed, 1 skipped, 0 not built (exit code 0)\n',
    0,
  );
  assert.equal(verifyFix(summary, after).fixed, true);
});

test('Maven’s console lines alone are not read as Surefire results', () => {
  const console = capture('maven-surefire-reactor.txt')
    .split('\n')
    .filter((line) => !line.startsWith('[surefire-reports] '))
    .join('\n');
  assert.equal(summarizeTestOutput(console, 1).failing.includes('com.example.app.GreeterTest.fails'), false);
});
