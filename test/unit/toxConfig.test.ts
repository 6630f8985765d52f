import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { toxExtras, toxRequirements, toxTestDeps, toxTestEnv } from '../../src/sandbox/environment/python/toxConfig.js';

const toxIni = `[tox]
envlist = py39, py312, lint

[testenv]
deps =
    pytest>=7  # the runner
    freezegun==1.5.1
    py39: backports.zoneinfo
    -r{toxinidir}/requirements-test.txt
    -e .
    .[tests]
    {[base]deps}
extras = tests
setenv =
    REMIND_CONFIG = {toxinidir}/tests/remind.ini
    PYTHONHASHSEED=0
    py39: OLD_PYTHON = 1
    PATH = {toxinidir}/bin:{env:PATH}
    LD_PRELOAD = {toxinidir}/hook.so
    COVERAGE_FILE = {envtmpdir}/.coverage
commands = pytest {posargs}

[testenv:lint]
deps = ruff
`;

test('tox.ini: [testenv] deps, without factor-conditional lines, other substitutions, the project itself or other environments', () => {
  assert.deepEqual(toxTestDeps(toxIni), ['pytest>=7', 'freezegun==1.5.1', '-r ./requirements-test.txt']);
  assert.deepEqual(toxTestDeps('[testenv]\r\ndeps = pytest\r\ncommands = pytest\r\n'), ['pytest']);
  assert.deepEqual(toxTestDeps('[testenv:py]\ndeps = pytest\n'), []);
  assert.deepEqual(toxTestDeps('[pytest]\ntestpaths = tests\n'), []);
  assert.deepEqual(toxTestDeps(undefined), []);
});

test('a project tested through tox gets its [testenv] deps, and the files they name with -r', () => {
  const manifests = {
    'setup.cfg': '[options]\ninstall_requires =\n    python-dateutil>=2.8\n',
    'pyproject.toml': '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n',
    'tox.ini': toxIni,
    'requirements-test.txt': 'hypothesis\n',
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  // requirements-test.txt is installed as the repository's own already: tox's -r of it is not repeated.
  assert.equal(plan?.files[toxRequirements], 'pytest>=7\nfreezegun==1.5.1\n');
  assert.equal(plan?.files['requirements-test.txt'], 'hypothesis\n');
  assert.match(plan?.description ?? '', /\(tox\.ini \[testenv\] deps\)/);
  assert.match(
    plan?.script ?? '',
    new RegExp(`-r durable-debugger-requirements\\.txt -r requirements-test\\.txt -r ${toxRequirements}`),
  );
  // pytest is tox's: not added again.
  assert.doesNotMatch(plan?.files['durable-debugger-requirements.txt'] ?? '', /^pytest$/m);
});

test('when tox names the requirements files it installs, the root’s others are left out (wcwidth’s wheels and update pins)', () => {
  const manifests = {
    'pyproject.toml': '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n',
    'tox.ini': '[testenv]\ndeps = -r requirements-tests39.txt\n       setuptools\ncommands = pytest\n',
    'requirements.txt': 'six\n',
    'requirements-tests39.txt': 'pytest==8.4.2\npackaging==25.0\n',
    'requirements-wheels.txt': 'build==1.6.1\npackaging==26.3\n',
    'requirements-update.txt': 'jinja2==3.1.6\n',
    'requirements-develop.txt': 'jinja2>=3\n',
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.match(
    plan?.script ?? '',
    /-r requirements-tests39\.txt -r requirements\.txt -r durable-debugger-tox-deps\.txt/,
  );
  assert.doesNotMatch(plan?.script ?? '', /requirements-(wheels|update|develop)\.txt/);
  // Without a runner naming files, every root requirements file but the docs' and lint's is the tests'.
  const { 'tox.ini': _tox, ...untested } = manifests;
  assert.match(
    planEnvironment(Object.keys(untested), untested)?.script ?? '',
    /-r requirements-develop\.txt -r requirements-tests39\.txt -r requirements-update\.txt -r requirements-wheels\.txt -r requirements\.txt/,
  );
});

test('after Poetry installs the lock, pip is skipped only when every file it would install is satisfied, the requirements files too', () => {
  const manifests = {
    'pyproject.toml': '[tool.poetry]\nname = "ledger"\n[tool.poetry.dependencies]\npython = "^3.9"\nsix = "^1.15"\n',
    'poetry.lock': '# lock\n',
    'requirements-dev.txt': 'freezegun\n',
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.match(
    plan?.script ?? '',
    /durable-debugger-installed-already\.py durable-debugger-requirements\.txt requirements-dev\.txt \/tmp\/durable-debugger-locked\.txt; then/,
  );
});

test('tox.ini: [testenv] setenv for the sandbox, {toxinidir} as the workspace; the sandbox’s own and the loader’s variables are not the repository’s to set', () => {
  assert.deepEqual(toxTestEnv(toxIni, '/workspace'), ['REMIND_CONFIG=/workspace/tests/remind.ini', 'PYTHONHASHSEED=0']);
  assert.deepEqual(
    toxTestEnv(
      '[testenv]\nsetenv =\n    HOME=/root\n    BASH_ENV={toxinidir}/x.sh\n    GCONV_PATH=/workspace\n',
      '/workspace',
    ),
    [],
  );
  const plan = planEnvironment(['setup.py', 'tox.ini'], {
    'setup.py': 'from setuptools import setup\nsetup()\n',
    'tox.ini': toxIni,
  });
  assert.ok(plan?.containerEnv.includes('REMIND_CONFIG=/workspace/tests/remind.ini'), String(plan?.containerEnv));
  assert.ok(plan?.containerEnv.includes('VIRTUAL_ENV=/opt/venv'));
  // As an activated venv: its console scripts (the project's own CLI, black, tox) are commands.
  assert.ok(plan?.containerEnv.includes('PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin'), String(plan?.containerEnv));
});

test('tox.ini: the lines conditional on the test environments’ factor are kept (pyparsing 3.3’s unit envs)', () => {
  const pyparsing = `[tox]
envlist =
    py39-unit,py{310,311,312,313,314,314t,315,315t,py3}-{unit,doctest},mypy-check

[testenv]
deps =
    unit: pytest
    unit-!py315t: matplotlib; implementation_name != 'pypy' and python_version <= '3.15'
    doctest: sphinx
    py39: importlib-resources
    py312,test: hypothesis
    {py310,py311}-unit: railroad-diagrams
    {py310,py311}-doctest: docutils
extras = unit: diagrams
setenv =
    PYTHONPATH = {env:PYTHONPATH}{:}{toxinidir}
    unit: PYTHONWARNINGS = error
commands =
    unit: pytest tests examples/tiny/tests {posargs}
`;
  assert.deepEqual(toxTestDeps(pyparsing), [
    'pytest',
    "matplotlib; implementation_name != 'pypy' and python_version <= '3.15'",
    'hypothesis',
    'railroad-diagrams',
  ]);
  assert.deepEqual(toxExtras(pyparsing), ['diagrams']);
  assert.deepEqual(toxTestEnv(pyparsing, '/workspace'), ['PYTHONWARNINGS=error']);
});
