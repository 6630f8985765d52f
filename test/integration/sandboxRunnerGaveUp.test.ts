// A runner that gives up on its own timer (ava's "Timed out while running tests", as on a busy
// machine) gets a second run in the real sandbox, for the workflow's own test runs and for run_tests;
// one that gives up every time runs twice. The script stands in for ava (its real lines, counted in
// the container's /tmp), so that the first run gives up and the second does not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

const fakeAva = `echo run >> /tmp/runs
if [ "$1" = always ] || [ "$(wc -l < /tmp/runs)" -eq 1 ]; then
  printf '\\n\\n  \\342\\234\\230 Timed out while running tests\\n\\n  Failed to exit when running test.js\\n'
  exit 1
fi
printf '  \\342\\234\\224 adds\\n  \\342\\234\\224 subtracts\\n  \\342\\224\\200\\n\\n  2 tests passed\\n'
`;

let sandbox: TestSandbox;

before(async () => {
  sandbox = await startTestSandbox({ files: { 'fake-ava.sh': fakeAva }, testCommand: 'sh fake-ava.sh' });
});

after(async () => {
  await sandbox?.stop();
  await removeLeftoverTestSandboxes();
});

test('the workflow’s test run: ava that gave up once is read from its second run', { timeout: 60_000 }, async () => {
  await sandbox.run('rm -f /tmp/runs');
  const summary = await sandbox.host.runTestSuite(sandbox.sandboxId, sandbox.log.digest, sandbox.settings);
  assert.deepEqual([summary.recognized, summary.passed, summary.exitCode], [true, 2, 0], JSON.stringify(summary));
  assert.match((await sandbox.run('cat /tmp/runs')).content, /run\nrun/);
});

test('run_tests: the second run, with the line that says why', { timeout: 60_000 }, async () => {
  await sandbox.run('rm -f /tmp/runs');
  const outcome = await sandbox.tool('run_tests', {});
  assert.match(outcome.content, /Tests: 2 passed, 0 failed/);
  assert.match(outcome.content, /the test runner gave up waiting for its tests .* the tests ran a second time/);
});

test('a runner that gives up every time runs twice, and fails as it came', { timeout: 60_000 }, async () => {
  await sandbox.run('rm -f /tmp/runs');
  const settings = { ...sandbox.settings, testCommand: 'sh fake-ava.sh always' };
  const summary = await sandbox.host.runTestSuite(sandbox.sandboxId, sandbox.log.digest, settings);
  assert.deepEqual([summary.recognized, summary.exitCode], [false, 1]);
  assert.equal((await sandbox.run('wc -l < /tmp/runs')).content.match(/^\s*(\d+)\s*$/m)?.[1], '2');
});
