import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEnvironment } from '../../src/agent/environment.js';
import { EnvironmentConfigError, explainInstallFailure, manifestCandidates, planEnvironment, pyprojectRequirements, setupCfgRequirements, setupPyRequirements } from '../../src/sandbox/environmentPlan.js';

const requirementsOf = (plan: ReturnType<typeof planEnvironment>) => plan?.files['durable-debugger-requirements.txt']?.trim().split('\n') ?? [];

test('a repository without declared dependencies needs no environment', () => {
  assert.equal(planEnvironment(['a.py', 'test_a.py'], {}), null);
  assert.equal(planEnvironment(['pyproject.toml', 'src/shop/cart.py'], { 'pyproject.toml': '[project]\nname = "shop"\n' }), null);
  assert.equal(planEnvironment(['package.json'], { 'package.json': '{"scripts":{"test":"node --test"}}' }), null);
});

test('pyproject: PEP 621 dependencies, test extras and dependency groups; pytest added when not pinned; src-layout importable', () => {
  const pyproject = `[project]
name = "billing"
dependencies = ["attrs>=23", "python-dateutil"]
[project.optional-dependencies]
test = ["pytest-cov"]
docs = ["sphinx"]
[dependency-groups]
dev = ["hypothesis", { include-group = "test" }]
`;
  const plan = planEnvironment(['pyproject.toml', 'src/billing/__init__.py'], { 'pyproject.toml': pyproject });
  assert.equal(plan?.kind, 'python');
  assert.deepEqual(requirementsOf(plan), ['attrs>=23', 'python-dateutil', 'pytest-cov', 'hypothesis', 'pytest']);
  assert.match(plan?.script ?? '', /echo \/workspace\/src > /);
  assert.equal(plan?.description, 'python · pip install (pyproject.toml dependencies)');
});

test('requirements files: local paths dropped (the project is made importable instead), the repository’s pytest pin kept', () => {
  const plan = planEnvironment(['requirements.txt', 'app.py'], { 'requirements.txt': '-e .\npytest==8.3.4\npytest-asyncio==0.24.0\n' });
  assert.equal(plan?.files['requirements.txt'], 'pytest==8.3.4\npytest-asyncio==0.24.0\n');
  assert.deepEqual(requirementsOf(plan), ['']);
  assert.match(plan?.script ?? '', / -r requirements\.txt/);
  assert.match(plan?.script ?? '', /echo \/workspace > /);
});

test('setup.cfg and setup.py install_requires', () => {
  assert.deepEqual(setupCfgRequirements('[options]\ninstall_requires =\n    requests>=2\n    click\n[options.extras_require]\ntest =\n    pytest\ndocs = sphinx\n'), ['requests>=2', 'click', 'pytest']);
  assert.deepEqual(setupPyRequirements('setup(name="x", install_requires=["requests", \'click>=8\'])'), ['requests', 'click>=8']);
  assert.deepEqual(pyprojectRequirements('[project]\nname = "Self-Pkg"\ndependencies = ["self_pkg[extra]", "six"]\n'), ['six']);
});

test('node: npm ci with the lockfile, npm install without; npm test is the test command', () => {
  const manifest = JSON.stringify({ scripts: { test: 'vitest run' }, devDependencies: { vitest: '3.2.4' } });
  const locked = planEnvironment(['package.json', 'package-lock.json'], { 'package.json': manifest, 'package-lock.json': '{}' });
  assert.equal(locked?.kind, 'node');
  assert.equal(locked?.description, 'node · npm ci');
  assert.equal(locked?.testCommand, 'npm test');
  assert.deepEqual(Object.keys(locked?.files ?? {}), ['package.json', 'package-lock.json']);
  assert.match(locked?.script ?? '', /ln -s \/opt\/env\/node_modules \/node_modules/);
  const unlocked = planEnvironment(['package.json'], { 'package.json': manifest });
  assert.equal(unlocked?.description, 'node · npm install');
});

test('the repository’s choice comes first, and the run’s input overrides it', () => {
  const config = JSON.stringify({ setup: ['pip install -e .'], testCommand: 'make test' });
  const files = ['durable-debugger.json', 'requirements.txt'];
  const manifests = { 'durable-debugger.json': config, 'requirements.txt': 'requests\n' };
  const plan = planEnvironment(files, manifests);
  assert.equal(plan?.kind, 'custom');
  assert.equal(plan?.testCommand, 'make test');
  assert.equal(plan?.needsRepository, true);
  const image = planEnvironment(files, manifests, { image: 'python:3.12', setup: undefined });
  assert.equal(image?.kind, 'custom', 'setup from the file still applies, on the image the input names');
  assert.equal(image?.baseImage, 'python:3.12');
  assert.equal(planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"image":"node:22"}' })?.kind, 'image');
});

test('a bad durable-debugger.json says what is wrong', () => {
  assert.throws(() => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"setup": 3}' }), EnvironmentConfigError);
  assert.throws(() => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"install": "x"}' }), /unknown field\(s\) install/);
  assert.throws(() => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{' }), /not valid JSON/);
});

test('manifest candidates and the environment line', () => {
  assert.deepEqual(manifestCandidates(['requirements-dev.txt', 'docs/requirements.txt', 'package.json', 'src/a.py']), ['requirements-dev.txt', 'package.json']);
  const base = { image: 'durable-debugger-env:1', containerEnv: [], kind: 'python' as const, description: 'python · pip install -r requirements.txt', packages: 23 };
  assert.equal(describeEnvironment({ ...base, reused: false, buildMs: 41_200 }), 'environment: built in 41 s (python, 23 packages)');
  assert.equal(describeEnvironment({ ...base, reused: true, buildMs: 0 }), 'environment: reused (python, 23 packages)');
});

test('a failed install says whether the registries were unreachable', () => {
  const offline = explainInstallFailure('python · pip install -r requirements.txt', 1, [
    "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'",
    'ERROR: No matching distribution found for attrs',
  ]);
  assert.match(offline, /^The package registries could not be reached/);
  assert.match(offline, /No matching distribution found for attrs$/);
  const missing = explainInstallFailure('python · pip install -r requirements.txt', 1, ['ERROR: No matching distribution found for no-such-package']);
  assert.match(missing, /^Installing the repository's dependencies failed \(python · pip install -r requirements.txt, exit code 1\)/);
});
