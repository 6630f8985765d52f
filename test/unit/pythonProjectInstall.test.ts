// The project's own editable install (issue 32 item 2): which projects get one, what the install
// does, the test requirements of a requirements/ folder, and the checkout's version read with git.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { manifestCandidates, planEnvironment } from '../../src/sandbox/environment/plan.js';
import {
  describeProjectVersion,
  fallbackProjectVersion,
  safeProjectVersion,
  versionFromDescribe,
} from '../../src/sandbox/workspace/projectVersion.js';

const hatchVcs = `[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "natsize"
dynamic = ["version"]

[project.optional-dependencies]
tests = ["pytest>=7"]
`;

test('a hatch-vcs project is installed editable in /workspace, with the checkout’s version given to the plugins that read git', () => {
  const plan = planEnvironment(['pyproject.toml', 'src/natsize/__init__.py'], { 'pyproject.toml': hatchVcs });
  assert.equal(plan?.kind, 'python');
  const script = plan?.projectInstall?.script ?? '';
  assert.match(script, /^cd \/workspace$/m);
  assert.match(script, /pip install [^\n]*--no-deps --editable \.; \} 2>\S+; then/);
  // pip is the venv's own, unpacked there from its wheel by the dependencies' build.
  assert.match(script, /\/opt\/venv\/bin\/python3 -m pip install /);
  assert.match(plan?.script ?? '', /-m zipfile -e \/toolchain\/pip\.whl "\$purelib"/);
  assert.doesNotMatch(script, /\/toolchain\//);
  assert.match(script, /version="\$\{DURABLE_DEBUGGER_PROJECT_VERSION:-0\.0\.0\}"/);
  assert.match(script, /export SETUPTOOLS_SCM_PRETEND_VERSION="\$version" PDM_BUILD_SCM_VERSION="\$version"/);
  // A failed install is said, not fatal: the workspace stays importable as before.
  assert.match(
    script,
    /else\n {2}cat \S+ >&2\n {2}why=\$\(.*\)\n {2}echo "project: its editable install failed \(pip install -e \.\$\{why:\+: \$why\}/,
  );
  // The dependencies' image does not depend on the repository: only the project's install does.
  assert.equal(plan?.needsRepository, false);
  assert.match(plan?.script ?? '', /durable-debugger-workspace\.pth/);
});

test('a failed editable install quotes the line of pip’s output that says why', async () => {
  const plan = planEnvironment(['pyproject.toml', 'src/natsize/__init__.py'], { 'pyproject.toml': hatchVcs });
  const whyLine = (plan?.projectInstall?.script ?? '').split('\n').find((line) => line.trim().startsWith('why=$('));
  assert.ok(whyLine);
  const folder = await mkdtemp(join(tmpdir(), 'pip-errors-'));
  after(() => rm(folder, { recursive: true, force: true }));
  const why = async (stderr: string) => {
    const file = join(folder, 'install.err');
    await writeFile(file, stderr);
    const line = whyLine.trim().replaceAll('/tmp/durable-debugger-project-install.err', file);
    return execFileSync('sh', ['-c', `${line}; printf %s "$why"`], { encoding: 'utf8' });
  };
  // pip 25's lines: a build requirement no index has (filelock's python-sbom), then a C extension
  // whose compiler is missing: the backend's own error, not pip's summary after it.
  const buildRequirement = [
    '  error: subprocess-exited-with-error',
    '  × pip subprocess to install build dependencies did not run successfully.',
    '  ╰─> [6 lines of output]',
    '      ERROR: Could not find a version that satisfies the requirement python-sbom[hatch] (from versions: none)',
    '      ERROR: No matching distribution found for python-sbom[hatch]',
    '      [end of output]',
    'error: subprocess-exited-with-error',
  ].join('\n');
  assert.equal(await why(buildRequirement), 'No matching distribution found for python-sbom[hatch]');
  const compiler = [
    "  Building editable for b (pyproject.toml): finished with status 'error'",
    '  error: subprocess-exited-with-error',
    "      error: command 'x86_64-linux-gnu-gcc' failed: No such file or directory",
    '  ERROR: Failed building editable for b',
    'ERROR: Could not build wheels for b, which is required to install pyproject.toml-based projects',
  ].join('\n');
  assert.equal(await why(compiler), "command 'x86_64-linux-gnu-gcc' failed: No such file or directory");
  assert.equal(await why('Traceback (most recent call last):\n'), '');
});

test('a src-layout library with no dependencies, its test requirements in requirements/tests.txt, gets an environment', () => {
  const files = [
    'pyproject.toml',
    'setup.py',
    'requirements/tests.in',
    'requirements/tests.txt',
    'requirements/docs.txt',
    'requirements/typing.txt',
    'requirements/base.txt',
    'src/htmlmark/__init__.py',
    'tests/conftest.py',
  ];
  assert.deepEqual(
    manifestCandidates(files).filter((path) => path.startsWith('requirements/')),
    ['requirements/tests.txt', 'requirements/docs.txt', 'requirements/typing.txt', 'requirements/base.txt'],
  );
  const manifests = {
    'pyproject.toml':
      '[project]\nname = "htmlmark"\nversion = "2.3.1"\n\n[build-system]\nrequires = ["setuptools>=70.1"]\n',
    'setup.py': 'from setuptools import setup\nsetup()\n',
    'requirements/tests.txt': '-r base.txt\n-e .\npytest==9.2.0\n',
    'requirements/base.txt': 'iniconfig==2.3.1\n',
    'requirements/docs.txt': 'sphinx==8.2.3\n',
    'requirements/typing.txt': 'mypy==1.18.2\n',
  };
  const plan = planEnvironment(files, manifests);
  assert.equal(plan?.description, 'python · pip install -r requirements/tests.txt');
  assert.match(plan?.script ?? '', / -r requirements\/tests\.txt$/m);
  assert.doesNotMatch(plan?.script ?? '', /docs\.txt|typing\.txt/);
  // The file it includes is an input too; the project itself (-e .) is left to the editable install.
  assert.equal(plan?.files['requirements/tests.txt'], '-r base.txt\npytest==9.2.0\n');
  assert.equal(plan?.files['requirements/base.txt'], 'iniconfig==2.3.1\n');
  assert.ok(plan?.projectInstall, 'the project is installed editable');
});

test('requirements/dev.txt is used only when the folder has no tests file', () => {
  const manifests = { 'requirements/dev.txt': 'pytest\ntox\n', 'requirements/docs.txt': 'sphinx\n' };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.equal(plan?.description, 'python · pip install -r requirements/dev.txt');
  const both = { ...manifests, 'requirements/test.txt': 'pytest\n' };
  assert.equal(planEnvironment(Object.keys(both), both)?.description, 'python · pip install -r requirements/test.txt');
});

test('a project with no dependencies at all but a build backend still gets an environment with itself installed', () => {
  const setupPy = planEnvironment(['setup.py', 'tool.py'], {
    'setup.py': 'from setuptools import setup\nsetup(name="tool")\n',
  });
  assert.equal(setupPy?.description, 'python · pip install -e . (the project itself: no dependencies declared)');
  assert.match(setupPy?.projectInstall?.script ?? '', /echo "project: tool \$\(/);
  const backend = planEnvironment(['pyproject.toml', 'flat.py'], {
    'pyproject.toml': '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n',
  });
  assert.ok(backend?.projectInstall);
  // A pyproject.toml that only configures tools is no project pip can install: nothing to build.
  assert.equal(
    planEnvironment(['pyproject.toml', 'a.py'], { 'pyproject.toml': '[tool.black]\nline-length = 100\n' }),
    null,
  );
  // Nor is a bare requirements file's folder: its environment has no project install.
  assert.equal(planEnvironment(['requirements.txt'], { 'requirements.txt': 'attrs\n' })?.projectInstall, undefined);
});

test('git describe turned into the version setuptools-scm would give', () => {
  assert.equal(versionFromDescribe('v1.4.2-0-gabc1234\n'), '1.4.2');
  assert.equal(versionFromDescribe('1.4.2-3-gabc1234'), '1.4.3.dev3+gabc1234');
  assert.equal(versionFromDescribe('release-2.0-0-g0123456'), '2.0');
  assert.equal(versionFromDescribe('v2.0.0rc1-2-g0123456'), '2.0.0rc1.dev2+g0123456');
  assert.equal(versionFromDescribe('nightly-0-g0123456'), fallbackProjectVersion);
  assert.equal(versionFromDescribe('v1.0$(reboot)-0-g0123456'), fallbackProjectVersion);
  assert.equal(versionFromDescribe(''), fallbackProjectVersion);
  assert.equal(safeProjectVersion("1.0'; rm -rf /"), fallbackProjectVersion);
  assert.equal(safeProjectVersion(undefined), fallbackProjectVersion);
  assert.equal(safeProjectVersion('1.4.3.dev3+gabc1234'), '1.4.3.dev3+gabc1234');
});

const scratch = await mkdtemp(join(tmpdir(), 'project-version-'));
after(() => rm(scratch, { recursive: true, force: true }));

test('the version of a real git checkout: its tag, commits after it, and 0.0.0 without a tag, inside another checkout or without git', async () => {
  const repo = join(scratch, 'repo');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, stdio: 'pipe' });
  execFileSync('git', ['init', '-q', repo]);
  await writeFile(join(repo, 'pyproject.toml'), hatchVcs);
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  assert.equal(await describeProjectVersion(repo), fallbackProjectVersion, 'no tag yet');
  git('tag', 'v1.4.2');
  assert.equal(await describeProjectVersion(repo), '1.4.2');
  await writeFile(join(repo, 'README.md'), 'natsize\n');
  git('add', '.');
  git('commit', '-q', '-m', 'second');
  const hash = git('rev-parse', '--short=7', 'HEAD').toString().trim();
  assert.equal(await describeProjectVersion(repo), `1.4.3.dev1+g${hash}`);
  // A tag that is shell code, not a version, never reaches the build's script.
  git('tag', 'v2$(id)');
  assert.equal(await describeProjectVersion(repo), fallbackProjectVersion);
  // A folder inside the checkout is no checkout of its own (setuptools-scm finds no version there either).
  execFileSync('mkdir', ['-p', join(repo, 'packages', 'natsize')]);
  assert.equal(await describeProjectVersion(join(repo, 'packages', 'natsize')), fallbackProjectVersion);
  const plain = join(scratch, 'plain');
  execFileSync('mkdir', ['-p', plain]);
  assert.equal(await describeProjectVersion(plain), fallbackProjectVersion, 'a folder that is no checkout');
});

test('the version file a version plugin writes on install is kept aside and put into the workspace before each test run', () => {
  const hatchHook = `${hatchVcs}\n[tool.hatch.version]\nsource = "vcs"\n\n[tool.hatch.build.hooks.vcs]\nversion-file = "src/natsize/_version.py"\n`;
  const plan = planEnvironment(['pyproject.toml', 'src/natsize/__init__.py'], { 'pyproject.toml': hatchHook });
  const script = plan?.projectInstall?.script ?? '';
  assert.match(
    script,
    /if \[ -f 'src\/natsize\/_version\.py' \]; then mkdir -p "\/opt\/durable-debugger-version-files\/\$\(dirname 'src\/natsize\/_version\.py'\)" && cp 'src\/natsize\/_version\.py' '\/opt\/durable-debugger-version-files\/src\/natsize\/_version\.py'/,
  );
  // After the install, whose plugin writes it.
  assert.ok(script.indexOf('--editable .') < script.indexOf('_version.py'));
  assert.deepEqual(plan?.build, ['cp -rn /opt/durable-debugger-version-files/. . 2>/dev/null || true']);
  // setuptools-scm's names, in pyproject.toml or setup.py; a path out of the repository is not taken.
  const scm = (table: string) =>
    planEnvironment(['pyproject.toml', 'pkg/__init__.py'], {
      'pyproject.toml': `[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "pkg"\ndynamic = ["version"]\n${table}`,
    });
  assert.match(
    scm('[tool.setuptools_scm]\nversion_file = "pkg/_version.py"\n')?.projectInstall?.script ?? '',
    /cp 'pkg\/_version\.py'/,
  );
  assert.match(
    scm('[tool.setuptools_scm]\nwrite_to = "pkg/version.py"\n')?.projectInstall?.script ?? '',
    /cp 'pkg\/version\.py'/,
  );
  assert.deepEqual(scm('[tool.setuptools_scm]\nwrite_to = "../outside.py"\n')?.build, []);
  assert.deepEqual(scm('')?.build, []);
  const setupPy = planEnvironment(['setup.py', 'pkg/__init__.py'], {
    'setup.py':
      'from setuptools import setup\nsetup(name="pkg", use_scm_version={"write_to": "pkg/_version.py"}, setup_requires=["setuptools_scm"])\n',
  });
  assert.match(setupPy?.projectInstall?.script ?? '', /cp 'pkg\/_version\.py'/);
});
