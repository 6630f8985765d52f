// A plan's checks of its own install run at the end of its last build (buildChecks.ts): appended to
// the project's install when there is one, else to the install; with the sandbox's variables only;
// and what they print after their mark is the failure the report quotes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BuildChecksOutput, withBuildChecks } from '../../src/sandbox/environment/buildChecks.js';
import type { EnvironmentPlan, EnvironmentProbe } from '../../src/sandbox/environment/planTypes.js';

const check = (name: string): EnvironmentProbe => ({
  description: `${name} resolves to /workspace`,
  files: [],
  script: `echo checking ${name}`,
  advice: `advice for ${name}`,
});

const plan: EnvironmentPlan = {
  kind: 'python',
  description: 'python · pip install',
  files: {},
  script: 'set -e\npip install -r requirements.txt',
  needsRepository: false,
  toolchains: [],
  build: [],
  containerEnv: ['VIRTUAL_ENV=/opt/venv', "TOX_ENV_NAME=py311 it's"],
  probes: [],
};

test('checks run last in the project’s own install when there is one, else in the install; none, nothing changes', () => {
  assert.equal(withBuildChecks(plan), plan);
  const withProject = withBuildChecks({
    ...plan,
    projectInstall: { script: 'pip install -e .' },
    checks: [check('shop')],
  });
  assert.equal(withProject.script, plan.script, 'the dependencies’ build (and its image key) is untouched');
  assert.match(
    withProject.projectInstall?.script ?? '',
    /^pip install -e \.\necho @@durable-debugger-checks\ncd \/ && timeout -k 5 60 env -i /,
  );
  const alone = withBuildChecks({ ...plan, checks: [check('shop')] });
  assert.match(
    alone.script,
    /^set -e\npip install -r requirements\.txt\necho @@durable-debugger-checks\ncd \/ && timeout -k 5 60 env -i /,
  );
});

test('checks see the sandbox’s variables and nothing of the build’s settings', () => {
  const script = withBuildChecks({ ...plan, checks: [check('shop')] }).script;
  const line = script.split('\n').find((each) => each.startsWith('cd / && timeout -k 5 60 env -i ')) ?? '';
  assert.match(line, /'HOME=\/tmp'/, 'the sandbox’s home');
  assert.match(line, /'PATH=\/usr\/local\/bin:\/usr\/bin:\/bin'/);
  assert.match(line, /'VIRTUAL_ENV=\/opt\/venv'/);
  assert.match(line, /'TOX_ENV_NAME=py311 it'\\''s'/, 'the plan’s variables, quoted');
  assert.doesNotMatch(line, /PROXY|PIP_INDEX|npm_config/i);
});

test('only what the checks printed is their failure, with the advice of the one that failed', () => {
  const checks = [check('shop'), check('cart')];
  const output = new BuildChecksOutput();
  for (const line of ['Successfully installed shop-1.0', 'packages: 3']) assert.equal(output.read(line), false);
  assert.equal(output.failure(checks, 1), null, 'a build that failed before its checks is the install’s failure');
  assert.equal(output.read('@@durable-debugger-checks'), true, 'the mark is no line for people');
  output.read('python: `import cart` loads /opt/venv/lib/python3.11/site-packages/cart/__init__.py');
  output.read('@@durable-debugger-probe-failed:1');
  assert.equal(output.failure(checks, 0), null, 'checks that passed');
  assert.deepEqual(output.failure(checks, 1), {
    output: 'python: `import cart` loads /opt/venv/lib/python3.11/site-packages/cart/__init__.py',
    advice: ['advice for cart'],
  });
});

test('checks stopped at their time limit say so, with every check’s advice (which one hung is unknown)', () => {
  const checks = [check('shop'), check('cart')];
  const output = new BuildChecksOutput();
  output.read('@@durable-debugger-checks');
  assert.deepEqual(output.failure(checks, 124), {
    output: 'the checks did not end within 60 s',
    advice: ['advice for shop', 'advice for cart'],
  });
});
