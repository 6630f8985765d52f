// The sandbox's environment variables as the tests see them, on real Docker: `env` run by the
// real run_tests and run_command paths lists exactly the documented set (src/sandbox/container/sandboxEnv.ts,
// docs/environments.md), with nothing that changes what a program does (no NO_COLOR, FORCE_COLOR).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sandboxVariables } from '../../src/sandbox/container/sandboxEnv.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

/** Set by Docker (the container's host name) and by the shell the command runs in, not by us. */
const fromDockerAndShell = ['HOSTNAME', 'PWD', 'SHLVL', '_'];
// Each line of `env` between markers: the observation starts with a summary and an exit code.
const listing = "echo '--- env'; env | sort; echo '--- end'";

let sandbox: TestSandbox;

before(async () => {
  sandbox = await startTestSandbox({ testCommand: listing });
});

after(async () => {
  await sandbox?.stop();
  await removeLeftoverTestSandboxes();
});

function variables(observation: string): Map<string, string> {
  const body = observation.split('--- env\n')[1]?.split('\n--- end')[0];
  assert.ok(body, `no env listing in:\n${observation}`);
  return new Map(body.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

for (const tool of ['run_tests', 'run_command'] as const) {
  test(`${tool}: the programs see the documented set of variables and nothing else`, { timeout: 60_000 }, async () => {
    const outcome = await (tool === 'run_tests' ? sandbox.tool('run_tests', {}) : sandbox.run(listing));
    const seen = variables(outcome.content);
    const ours = [...seen.keys()].filter((name) => !fromDockerAndShell.includes(name)).sort();
    assert.deepEqual(ours, sandboxVariables.map((variable) => variable.name).sort(), 'the variables set');
    for (const variable of sandboxVariables) assert.equal(seen.get(variable.name), variable.value, variable.name);
  });
}
