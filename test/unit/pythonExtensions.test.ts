// A Python project with a C extension gets a compiler and Python's headers from Debian and a
// per-run in-place build, so the extension is built in the sandbox's own /workspace.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';

const fixture = join(import.meta.dirname, '..', '..', 'fixtures', '36_py_src_layout_c_extension');

test('setup.py’s Extension: gcc and python3-dev through apt, the build backend in the venv, build_ext --inplace before each test run', async () => {
  const manifests: Record<string, string> = {};
  for (const file of ['setup.py', 'pyproject.toml', 'requirements/tests.txt'])
    manifests[file] = await readFile(join(fixture, file), 'utf8');
  const plan = planEnvironment(
    ['setup.py', 'pyproject.toml', 'requirements/tests.txt', 'src/htmlmark/_speedups.c'],
    manifests,
  );
  assert.ok(plan);
  assert.equal(plan.kind, 'python');
  assert.deepEqual(plan.installers, ['pip', 'apt']);
  assert.match(plan.script, /install -y --no-install-recommends gcc libc6-dev python3-dev/);
  assert.ok(plan.script.indexOf('apt-get') < plan.script.indexOf('venv'), 'the compiler before the venv');
  assert.match(plan.files['durable-debugger-requirements.txt'] ?? '', /^setuptools>=70\.1$/m);
  assert.deepEqual(plan.build, ['python3 setup.py build_ext --inplace']);
  assert.match(plan.description, /apt gcc libc6-dev python3-dev/);
});

test('a pure-Python setup.py gets neither a compiler nor a per-run build', () => {
  const plan = planEnvironment(['setup.py'], {
    'setup.py': 'from setuptools import setup\nsetup(name="x", install_requires=["attrs"])\n',
  });
  assert.deepEqual(plan?.installers, ['pip']);
  assert.deepEqual(plan?.build, []);
});
