// The Node environment installs where the package manager puts it: /workspace/node_modules and each
// workspace member's, which the sandbox mounts as writable copies of the image's (nodeModulesMounts.ts).
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { planNode, workspaceMembers } from '../../src/sandbox/environment/node/nodePlan.js';
import { manifestCandidates } from '../../src/sandbox/environment/plan.js';
import { prepareNodeModulesMounts } from '../../src/sandbox/container/nodeModulesMounts.js';

const host = { nodeVersion: '20.19.5', today: new Date('2026-12-01') };

test('workspace members come from package.json workspaces or pnpm-workspace.yaml, matched against package.json files', () => {
  const files = [
    'package.json',
    'packages/a/package.json',
    'packages/b/package.json',
    'packages/b/node_modules/x/package.json',
    'packages/private-c/package.json',
    'tools/cli/package.json',
    'test/fixtures/app/package.json',
  ];
  const manifests = Object.fromEntries(
    files.filter((path) => !path.includes('node_modules')).map((path) => [path, '{}']),
  );
  assert.deepEqual(workspaceMembers(files, { workspaces: ['packages/*', '!packages/private-*'] }, manifests), [
    'packages/a',
    'packages/b',
  ]);
  assert.deepEqual(workspaceMembers(files, { workspaces: { packages: ['./tools/*'] } }, manifests), ['tools/cli']);
  const block = 'packages:\n  - \'packages/*\'\n  # the CLI too\n  - "tools/*"\ncatalog:\n  vitest: 2.1.9\n';
  assert.deepEqual(workspaceMembers(files, {}, { ...manifests, 'pnpm-workspace.yaml': block }), [
    'packages/a',
    'packages/b',
    'packages/private-c',
    'tools/cli',
  ]);
  assert.deepEqual(workspaceMembers(files, {}, { ...manifests, 'pnpm-workspace.yaml': "packages: ['tools/**']\n" }), [
    'tools/cli',
  ]);
  // No workspaces: no members, whatever package.json files the repository has.
  assert.deepEqual(workspaceMembers(files, {}, manifests), []);
  // The planner reads members' package.json files and pnpm-workspace.yaml, never node_modules'.
  const candidates = manifestCandidates([...files, 'pnpm-workspace.yaml']);
  assert.ok(candidates.includes('packages/a/package.json') && candidates.includes('pnpm-workspace.yaml'));
  assert.ok(!candidates.includes('packages/b/node_modules/x/package.json'));
});

test('a pnpm workspace whose root declares nothing installs with every member, each with a node_modules the sandbox mounts', () => {
  const manifests = {
    'package.json': JSON.stringify({ name: 'kit', private: true, scripts: { test: 'pnpm -r test' } }),
    'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n",
    'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
    'packages/core/package.json': JSON.stringify({
      name: '@kit/core',
      scripts: { test: 'node --test', prepare: 'tsc' },
    }),
    'packages/report/package.json': JSON.stringify({
      name: '@kit/report',
      dependencies: { '@kit/core': 'workspace:*' },
      devDependencies: { vitest: '2.1.9' },
    }),
  };
  const plan = planNode(Object.keys(manifests), manifests, host);
  assert.ok(plan, 'the members declare dependencies: an environment is made');
  assert.deepEqual(plan.nodeModules, ['node_modules', 'packages/core/node_modules', 'packages/report/node_modules']);
  assert.match(
    plan.script,
    /cp --parents 'package\.json' 'pnpm-lock\.yaml' 'pnpm-workspace\.yaml' 'packages\/core\/package\.json' 'packages\/report\/package\.json' \/opt\/env\//,
  );
  // A member's own lifecycle scripts need its sources, which the install has not: left out, as the root's are.
  assert.deepEqual(JSON.parse(plan.files['packages/core/package.json'] as string).scripts, { test: 'node --test' });
  assert.match(
    plan.script,
    /\nmkdir -p 'node_modules' 'packages\/core\/node_modules' 'packages\/report\/node_modules'\nnode \/env-input\/durable-debugger-node-modules\.cjs \/opt\/env \/workspace 'node_modules' 'packages\/core\/node_modules' 'packages\/report\/node_modules'\n/,
  );
  assert.equal(plan.testCommand, 'npm test');
});

test("the package's own bin entries become commands in node_modules/.bin that run the workspace's file", () => {
  const manifests = {
    'package.json': JSON.stringify({
      name: '@scope/duration-words',
      bin: { 'duration-words': './build/src/cli.js', '../escape': 'x.js', dw: '../outside.js' },
      devDependencies: { typescript: '5.4.5' },
    }),
  };
  const script = planNode(['package.json'], manifests, host)?.script ?? '';
  // One command: names and files that would leave node_modules/.bin or the workspace are left out.
  assert.equal(
    script.match(/node_modules\/\.bin\/[^ ]+ \]; then/g)?.join(),
    'node_modules/.bin/duration-words ]; then',
  );
  assert.match(script, /\nif \[ ! -e node_modules\/\.bin\/duration-words \]; then /);
  assert.match(
    script,
    /\nf=\/workspace\/build\/src\/cli\.js\n\[ -x "\$f" \] && exec "\$f" "\$@"\nexec node "\$f" "\$@"\n/,
  );
  const single = planNode(
    ['package.json'],
    { 'package.json': JSON.stringify({ name: '@s/tool', bin: 'cli.js', dependencies: { ms: '2' } }) },
    host,
  );
  assert.match(single?.script ?? '', /node_modules\/\.bin\/tool /);
});

test('mount points: made as real folders where every folder above is real; none through a symlink, a missing member or a bad name', async () => {
  const root = await mkdtemp(join(tmpdir(), 'node-modules-mounts-'));
  try {
    const workspace = join(root, 'workspace');
    await mkdir(join(workspace, 'packages', 'a'), { recursive: true });
    await mkdir(join(root, 'elsewhere'));
    await symlink(join(root, 'elsewhere'), join(workspace, 'packages', 'linked'));
    // What a sandbox command left where a mount point goes: a symlink out of the workspace.
    await mkdir(join(workspace, 'packages', 'b'));
    await symlink('/etc', join(workspace, 'packages', 'b', 'node_modules'));
    await writeFile(join(workspace, 'packages', 'file'), 'not a folder');
    const targets = await prepareNodeModulesMounts(workspace, [
      'node_modules',
      'packages/a/node_modules',
      'packages/b/node_modules',
      'packages/linked/node_modules',
      'packages/gone/node_modules',
      'packages/file/node_modules',
      '../node_modules',
      'packages/a/node_modules/x/node_modules',
      'packages/a',
    ]);
    assert.deepEqual(targets, [
      '/workspace/node_modules',
      '/workspace/packages/a/node_modules',
      '/workspace/packages/b/node_modules',
    ]);
    assert.ok((await lstat(join(workspace, 'packages', 'b', 'node_modules'))).isDirectory());
    assert.equal(await readlink(join(workspace, 'packages', 'linked')), join(root, 'elsewhere'));
    await assert.rejects(lstat(join(root, 'elsewhere', 'node_modules')));
    await assert.rejects(lstat(join(workspace, 'packages', 'gone')));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
