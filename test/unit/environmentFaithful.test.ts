// The environment installs what the tests need, never the project itself from an index, and
// carries the probes that check, in the built image, that the tests import the workspace's code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { nodeOwnNameProbe } from '../../src/sandbox/environment/node/nodeProbes.js';
import { pytestPythonPath, pythonTopLevelModules } from '../../src/sandbox/environment/python/pythonProbes.js';
import { pythonLock, workspaceFirst } from '../../src/sandbox/environment/python/pythonPlan.js';
import { readPythonProject, selectExtrasAndGroups } from '../../src/sandbox/environment/python/pythonProject.js';
import { toxDependencyGroups } from '../../src/sandbox/environment/python/toxConfig.js';
import {
  allowsPython,
  explainPythonMismatch,
  pythonVariantImage,
} from '../../src/sandbox/environment/python/pythonVersions.js';

// Shaped like pypa/packaging's: pytest (test) and Sphinx (docs, through furo) both depend on `packaging`.
const packagingLike = `[project]
name = "packaging"
dynamic = ["version"]
dependencies = []
[project.optional-dependencies]
cli = ["click"]
[dependency-groups]
test = ["pretend", "pytest>=6.2.0", "packaging[cli]"]
docs = ["furo"]
benchmark = ["asv"]
dev = [{ include-group = "test" }, { include-group = "benchmark" }]
`;
const packagingFiles = [
  'pyproject.toml',
  'src/packaging/__init__.py',
  'src/packaging/version.py',
  'tests/test_version.py',
];
const requirementsOf = (plan: ReturnType<typeof planEnvironment>) =>
  plan?.files['durable-debugger-requirements.txt']?.trim().split('\n') ?? [];

test('the test-ish groups and extras are installed (test, tests, testing, dev), not docs, lint or release groups', () => {
  const plan = planEnvironment(packagingFiles, { 'pyproject.toml': packagingLike });
  // dev includes test and benchmark; the project's own `packaging[cli]` brings its cli extra, never packaging itself.
  assert.deepEqual(requirementsOf(plan), ['pretend', 'pytest>=6.2.0', 'click', 'asv']);
  assert.equal(plan?.description, 'python · pip install (pyproject.toml dependencies) (group test, group dev)');
  assert.ok(!requirementsOf(plan).includes('furo'), 'the docs group is not installed');
});

test('durable-debugger.json names the groups and extras to install instead; a name the project lacks is refused', () => {
  const config = JSON.stringify({ groups: ['docs', 'test'], extras: ['cli'] });
  const plan = planEnvironment(packagingFiles, { 'pyproject.toml': packagingLike, 'durable-debugger.json': config });
  assert.deepEqual(requirementsOf(plan), ['click', 'pretend', 'pytest>=6.2.0', 'furo']);
  assert.match(plan?.description ?? '', /\(extra cli, group test, group docs\)/);
  assert.throws(
    () =>
      planEnvironment(packagingFiles, {
        'pyproject.toml': packagingLike,
        'durable-debugger.json': '{"groups": ["tests"]}',
      }),
    /durable-debugger\.json names the dependency group\(s\) tests, which the project does not define \(it defines test, docs, benchmark, dev\)/,
  );
  assert.throws(
    () =>
      planEnvironment(packagingFiles, { 'pyproject.toml': packagingLike, 'durable-debugger.json': '{"extras": "x"}' }),
    /extras must be a list of Python extra names/,
  );
});

test('a lock exports the selected groups and extras only, and never the project itself', () => {
  const uv = planEnvironment([...packagingFiles, 'uv.lock'], { 'pyproject.toml': packagingLike, 'uv.lock': '' });
  assert.match(
    uv?.script ?? '',
    /uv export --frozen --no-hashes --no-emit-project --no-emit-workspace --no-emit-package 'packaging' --no-default-groups --group 'test' --group 'dev' --format requirements-txt/,
  );
  const poetryProject = `[tool.poetry]
name = "wordcount"
[tool.poetry.dependencies]
python = "^3.9"
[tool.poetry.group.test.dependencies]
pytest = "^8"
[tool.poetry.group.docs.dependencies]
sphinx = "*"
[tool.poetry.dev-dependencies]
black = "*"
[tool.poetry.extras]
`;
  const poetry = planEnvironment(['pyproject.toml', 'poetry.lock'], {
    'pyproject.toml': poetryProject,
    'poetry.lock': '',
  });
  assert.match(poetry?.script ?? '', /poetry export --without-hashes --with 'test,dev' --format requirements\.txt/);
  assert.deepEqual(readPythonProject({ 'pyproject.toml': poetryProject }).ownNames, ['wordcount']);
  assert.equal(
    pythonLock({ 'pyproject.toml': packagingLike, 'uv.lock': '' })?.install.some((line) =>
      line.includes('--all-groups'),
    ),
    false,
  );
});

test('PDM’s older [tool.pdm.dev-dependencies] are groups, the test-ish ones installed, its editable local paths left out; not with a uv.lock', () => {
  const pdmProject = `[project]
name = "retrying-fetch"
dependencies = ["requests>=2.31"]
[build-system]
requires = ["pdm-backend"]
build-backend = "pdm.backend"
[tool.pdm.dev-dependencies]
test = ["pytest>=8", "pytest-mock>=3.12", "-e file:///\${PROJECT_ROOT}/plugins/extra#egg=extra"]
lint = ["ruff>=0.4"]
`;
  const project = readPythonProject({ 'pyproject.toml': pdmProject });
  assert.deepEqual(project.groups, { test: ['pytest>=8', 'pytest-mock>=3.12'], lint: ['ruff>=0.4'] });
  assert.deepEqual(selectExtrasAndGroups(project, {}).groups, ['test']);
  const plan = planEnvironment(['pyproject.toml', 'src/retrying_fetch/__init__.py'], { 'pyproject.toml': pdmProject });
  assert.match(plan?.files['durable-debugger-requirements.txt'] ?? '', /^pytest-mock>=3\.12$/m);
  assert.doesNotMatch(plan?.files['durable-debugger-requirements.txt'] ?? '', /ruff|PROJECT_ROOT/);
  assert.deepEqual(readPythonProject({ 'pyproject.toml': pdmProject, 'uv.lock': '' }).groups, {});
});

test('Hatch’s environments are groups: hatch-test with Hatch’s own test tools unless replaced, default as dev; others not', () => {
  const hatchProject = (hatchTest: string) => `[project]
name = "shelf-life"
dependencies = []
[tool.hatch.envs.default]
dependencies = ["ipython"]
[tool.hatch.envs.hatch-test]
${hatchTest}
[tool.hatch.envs.types]
extra-dependencies = ["mypy>=1.10"]
`;
  assert.deepEqual(
    readPythonProject({ 'pyproject.toml': hatchProject('extra-dependencies = ["freezegun>=1.4"]') }).groups,
    {
      dev: ['ipython'],
      test: ['pytest', 'pytest-mock', 'pytest-rerunfailures', 'pytest-xdist', 'freezegun>=1.4'],
    },
  );
  assert.deepEqual(
    readPythonProject({ 'pyproject.toml': hatchProject('dependencies = ["pytest==8.3.4"]') }).groups.test,
    ['pytest==8.3.4'],
  );
  assert.deepEqual(readPythonProject({ 'pyproject.toml': hatchProject(''), 'uv.lock': '' }).groups, {});
});

test('a copy of the project that a dependency pulls from the index is removed, and the workspace goes ahead of site-packages', () => {
  const plan = planEnvironment(packagingFiles, { 'pyproject.toml': packagingLike });
  const script = plan?.script ?? '';
  const install = script.indexOf('pip install');
  const removal = script.indexOf("pip uninstall --yes --quiet --root-user-action=ignore 'packaging'");
  assert.ok(install >= 0 && removal > install, 'the own distribution is removed after the install');
  assert.match(script, /removing packaging \$version, pulled from the index by a dependency/);
  // setup.cfg and setup.py name the project too.
  assert.deepEqual(
    readPythonProject({ 'setup.cfg': '[metadata]\nname = Shop_Cart\n', 'setup.py': 'setup(name="shop-cart")' })
      .ownNames,
    ['shop-cart'],
  );
  // The .pth line is Python that puts the folder just before the first site-packages entry.
  assert.equal(
    workspaceFirst('/workspace/src'),
    'import sys; p = "/workspace/src"; p in sys.path or sys.path.insert(next((i for i, e in enumerate(sys.path) if e.endswith("-packages")), len(sys.path)), p)',
  );
});

test('with no test-ish extra or group, those that install pytest are the tests’ (idna’s `all`)', () => {
  const idna = `[project]
name = "idna"
requires-python = ">=3.10"
dynamic = ["version"]
[project.optional-dependencies]
all = ["ruff >= 0.16.0", "pytest >= 8.3.2", "hypothesis >= 6.141.1"]
speedups = ["idna-ext"]
[dependency-groups]
docs = ["sphinx"]
`;
  const project = readPythonProject({ 'pyproject.toml': idna });
  assert.deepEqual(selectExtrasAndGroups(project, {}), { extras: ['all'], groups: [] });
  const plan = planEnvironment(['pyproject.toml', 'idna/__init__.py', 'tests/test_idna.py'], {
    'pyproject.toml': idna,
  });
  assert.match(plan?.files['durable-debugger-requirements.txt'] ?? '', /^hypothesis >= 6\.141\.1$/m);
  assert.doesNotMatch(plan?.files['durable-debugger-requirements.txt'] ?? '', /idna-ext|sphinx/);
  // A test-ish name, or names durable-debugger.json gives, decide alone.
  const withTest = readPythonProject({ 'pyproject.toml': `${idna}test = ["pytest"]\n` });
  assert.deepEqual(selectExtrasAndGroups(withTest, {}), { extras: [], groups: ['test'] });
  assert.deepEqual(selectExtrasAndGroups(project, { extras: ['speedups'] }), { extras: ['speedups'], groups: [] });
});

test('requirements files for docs, linting or releases are left out', () => {
  const plan = planEnvironment(['requirements.txt', 'requirements-docs.txt', 'requirements_test.txt', 'a.py'], {
    'requirements.txt': 'requests\n',
    'requirements-docs.txt': 'sphinx\n',
    'requirements_test.txt': 'pytest\n',
  });
  assert.equal(plan?.description, 'python · pip install -r requirements.txt -r requirements_test.txt');
});

test('an include-group of an undefined group is an error only when that group is installed', () => {
  const pyproject =
    '[project]\nname = "x"\ndependencies = ["six"]\n[dependency-groups]\ndocs = [{ include-group = "nope" }]\n';
  assert.ok(planEnvironment(['pyproject.toml'], { 'pyproject.toml': pyproject }));
  const project = readPythonProject({ 'pyproject.toml': pyproject });
  assert.deepEqual(selectExtrasAndGroups(project, {}), { extras: [], groups: [] });
  assert.throws(
    () =>
      planEnvironment(['pyproject.toml', 'durable-debugger.json'], {
        'pyproject.toml': pyproject,
        'durable-debugger.json': '{"groups": ["docs"]}',
      }),
    /dependency group "docs" includes "nope", which is not defined/,
  );
});

test('the probes: every top-level package of the repository, from src/ or the root, with pytest’s pythonpath first', () => {
  assert.deepEqual(pythonTopLevelModules(packagingFiles), {
    root: 'src',
    modules: ['packaging'],
    files: ['src/packaging/__init__.py'],
  });
  assert.deepEqual(
    pythonTopLevelModules(['setup.py', 'conftest.py', 'test_calc.py', 'calc.py', 'shop/__init__.py', 'shop/cart.py'])
      .modules,
    ['calc', 'shop'],
  );
  assert.deepEqual(pytestPythonPath({ 'pyproject.toml': '[tool.pytest.ini_options]\npythonpath = ["src", "lib"]\n' }), [
    'src',
    'lib',
  ]);
  assert.deepEqual(
    pytestPythonPath({ 'setup.cfg': '[metadata]\nname=x\n[tool:pytest]\npythonpath = src\n  other\n' }),
    ['src', 'other'],
  );
  const python = planEnvironment(packagingFiles, { 'pyproject.toml': packagingLike })?.probes ?? [];
  assert.equal(python.length, 1);
  assert.match(python[0]?.script ?? '', /for name in \["packaging"\]:/);
  assert.deepEqual(python[0]?.files, ['src/packaging/__init__.py']);
  // A node package's own name; an image or setup commands the repository brings are probed for both, where present.
  assert.equal(nodeOwnNameProbe({ 'package.json': '{"name": "ms"}' }, false)?.files[0], 'package.json');
  assert.equal(nodeOwnNameProbe({ 'package.json': '{"name": "bad name; rm -rf /"}' }, false), null);
  const custom = planEnvironment([...packagingFiles, 'package.json', 'durable-debugger.json'], {
    'pyproject.toml': packagingLike,
    'package.json': '{"name": "packaging-docs"}',
    'durable-debugger.json': '{"setup": ["pip install ."]}',
  });
  assert.deepEqual(
    custom?.probes.map((probe) => probe.description),
    [
      "node: the package's own name resolves to /workspace",
      "python: the repository's top-level packages import from /workspace",
    ],
  );
  assert.ok(custom?.probes.every((probe) => probe.script.startsWith('command -v ')));
});

test('node: a registry copy of the package itself, installed for a dependency, becomes a link to /workspace', () => {
  const plan = planEnvironment(['package.json', 'package-lock.json', 'index.js'], {
    'package.json': JSON.stringify({ name: 'ms', devDependencies: { debug: '4.3.7' } }),
    'package-lock.json': '{}',
  });
  assert.match(
    plan?.script ?? '',
    /if \[ -e node_modules\/ms \]; then\n.*\n {2}rm -rf node_modules\/ms && ln -s \/workspace node_modules\/ms\nfi/,
  );
  // Checked by its own build, on the install's copy of package.json: no probe container.
  assert.deepEqual(plan?.probes, []);
  assert.equal(plan?.checks?.[0]?.description, "node: the package's own name resolves to /workspace");
  assert.match(plan?.checks?.[0]?.script ?? '', /readFileSync\("\/opt\/env\/package\.json"/);
});

test('requires-python: which Pythons it allows, and what to do when the sandbox’s is not one of them', () => {
  assert.equal(allowsPython('>=3.12', '3.11.2'), false);
  assert.equal(allowsPython('>=3.8,<4', '3.11.2'), true);
  assert.equal(allowsPython('^3.9', '3.11.2'), true, 'Poetry’s caret');
  assert.equal(allowsPython('~3.10', '3.11.2'), false, 'Poetry’s tilde');
  assert.equal(allowsPython('not a specifier', '3.11.2'), null);
  assert.deepEqual(readPythonProject({ 'setup.cfg': '[options]\npython_requires = >=3.12\n' }).requiresPython, {
    specifier: '>=3.12',
    source: 'setup.cfg',
  });
  assert.equal(pythonVariantImage('durable-debugger-sandbox:1', '3.13'), 'durable-debugger-sandbox:1-python3.13');
  const sandbox = { image: 'durable-debugger-sandbox:1', version: '3.11.2' };
  assert.equal(
    explainPythonMismatch({ specifier: '>=3.12', source: 'pyproject.toml' }, sandbox),
    'pyproject.toml requires Python >=3.12, which excludes the sandbox\'s Python 3.11.2 (durable-debugger-sandbox:1). Build a sandbox image with Python 3.13 from Debian trixie, once, as root: durable-debugger setup --python 3.13 (it becomes durable-debugger-sandbox:1-python3.13, and runs that need it use it by themselves); or name an image that has such a Python (and sh, coreutils and your test runner) in durable-debugger.json ("image", with "setup" commands to install the dependencies) or build one with a durable-debugger.Dockerfile.',
  );
  assert.match(
    explainPythonMismatch({ specifier: '<3.10', source: 'setup.py' }, sandbox),
    /durable-debugger setup --python 3\.9 /,
  );
  assert.match(
    explainPythonMismatch({ specifier: '==3.12.*', source: 'pyproject.toml' }, sandbox),
    /No Debian suite on the package mirror has a Python it allows \(3\.13\.5 in trixie, 3\.11\.2 in bookworm, 3\.9\.2 in bullseye\): Name an image/,
  );
});

test('the dependency groups CI’s tox installs are the tests’: tox.toml’s, tox.ini’s, [tool.tox]’s (platformdirs: test, not dev)', () => {
  const platformdirs = `[project]
name = "platformdirs"
requires-python = ">=3.10"
dynamic = ["version"]
[dependency-groups]
dev = [{ include-group = "docs" }, { include-group = "test" }]
docs = ["sphinx>=9.1"]
test = ["pytest>=8", "pytest-mock>=3.15"]
`;
  const toxToml = 'env_list = ["3.13", "docs"]\n[env_run_base]\npackage = "wheel"\ndependency_groups = [ "test" ]\n';
  const plan = planEnvironment(['pyproject.toml', 'tox.toml', 'src/platformdirs/__init__.py'], {
    'pyproject.toml': platformdirs,
    'tox.toml': toxToml,
  });
  assert.match(plan?.description ?? '', /\(group test\)$/);
  assert.doesNotMatch(plan?.files['durable-debugger-requirements.txt'] ?? '', /sphinx/);
  const project = readPythonProject({ 'pyproject.toml': platformdirs });
  assert.deepEqual(
    toxDependencyGroups({ 'tox.ini': '[tox]\nenv_list = py3\n[testenv]\ndependency_groups =\n    test\n' }),
    ['test'],
  );
  assert.deepEqual(
    toxDependencyGroups({ 'pyproject.toml': `${platformdirs}[tool.tox.env_run_base]\ndependency_groups = ["test"]\n` }),
    ['test'],
  );
  assert.equal(toxDependencyGroups({ 'tox.ini': '[testenv]\ndeps = pytest\n' }), null);
  // Without tox's word, the test-ish names as before; a group tox names that the project lacks changes nothing.
  assert.deepEqual(selectExtrasAndGroups(project, {}).groups, ['dev', 'test']);
  assert.deepEqual(selectExtrasAndGroups(project, {}, [], ['nope']).groups, ['dev', 'test']);
});
