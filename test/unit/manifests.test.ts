// The manifests the environment step reads come from the repository's snapshot (issue 33 item 2):
// a symlink is followed only inside the repository, a file above its size limit is refused by name
// and size, and an error quotes a repository's value only as a short printable excerpt.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { excerpt, quoted } from '../../src/sandbox/environment/excerpt.js';
import {
  inputFileContent,
  manifestSizeLimits,
  readManifests,
  readSourceFiles,
  sourceReadLimits,
} from '../../src/sandbox/environment/manifests.js';
import { chooseNodeVersion } from '../../src/sandbox/environment/node/nodeVersion.js';
import { parseRepositoryConfig } from '../../src/sandbox/environment/plan.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { readTree } from '../../src/sandbox/workspace/tree.js';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'manifests-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A repository on disk, snapshotted into a real folder content store, as the worker does. */
async function snapshot(name: string, files: Record<string, string | Buffer>, links: Record<string, string>) {
  const repo = join(scratch, name);
  const store = new FolderStore(join(scratch, `${name}-store`));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(repo, path, '..'), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  for (const [path, target] of Object.entries(links)) await symlink(target, join(repo, path));
  const tree = await readTree(repo, { onFile: (blob, content) => store.putBlob(blob, content) });
  return { store, tree };
}

test('a manifest that links out of the repository is not read; one that links inside it is', async () => {
  await writeFile(join(scratch, 'outside.txt'), 'ANTHROPIC_API_KEY=sk-ant-outside\n');
  const { store, tree } = await snapshot(
    'links',
    { 'package.json': '{"name": "x"}', 'config/node-version': '20\n' },
    {
      '.nvmrc': '/proc/self/environ',
      '.node-version': '../outside.txt',
      '.tool-versions': 'config/node-version',
      'pyproject.toml': '/dev/zero',
    },
  );
  const manifests = await readManifests(store, tree.entries);
  assert.deepEqual(Object.keys(manifests).sort(), ['.tool-versions', 'package.json']);
  assert.equal(manifests['.tool-versions'], '20\n');
  assert.doesNotMatch(JSON.stringify(manifests), /ANTHROPIC|sk-ant/);
});

test('a binary manifest (bun.lockb) is read as base64, and the build gets its bytes back', async () => {
  const lockb = Buffer.from([0x23, 0x21, 0x00, 0xff, 0xfe, 0x80, 0x0a]);
  const { store, tree } = await snapshot('binary', { 'package.json': '{}', 'bun.lockb': lockb }, {});
  const manifests = await readManifests(store, tree.entries);
  assert.equal(manifests['bun.lockb'], lockb.toString('base64'));
  assert.deepEqual(inputFileContent('bun.lockb', manifests['bun.lockb'] as string), lockb);
  assert.equal(inputFileContent('package.json', manifests['package.json'] as string), '{}');
});

test('a manifest above its size limit is refused, naming the file and its size', async () => {
  const { store, tree } = await snapshot(
    'large',
    { 'package.json': Buffer.alloc(manifestSizeLimits.manifest + 1, 0x20) },
    {},
  );
  await assert.rejects(readManifests(store, tree.entries), /^Error: package\.json is 1\.0 MB, more than the 1\.0 MB/);
});

test('a bad value of a repository file is quoted as a short printable excerpt', () => {
  assert.equal(quoted('20'), '"20"');
  assert.equal(excerpt('a\u0000b\u001b[2J\u202e'), 'a\\u0000b\\u001b[2J\\u202e');
  assert.equal([...excerpt('x'.repeat(500))].length, 61);
  const environ = `SHELL=/bin/bash\u0000ANTHROPIC_API_KEY=sk-ant-${'k'.repeat(80)}\u0000`;
  assert.throws(
    () => chooseNodeVersion({ '.nvmrc': environ }, { nodeVersion: '22.1.0', today: new Date('2026-12-01') }),
    (error: Error) =>
      error.message.length < 200 && !error.message.includes('k'.repeat(30)) && !error.message.includes('\u0000'),
  );
  assert.throws(
    () => parseRepositoryConfig(`{"image": "${'s'.repeat(300)}\u0007`),
    (error: Error) => error.message.length < 300 && !error.message.includes('\u0007'),
  );
});

test("a warm-up's sources: the files it picks, never through a link, within the limits", async () => {
  await writeFile(join(scratch, 'secret.go'), 'package secret // sk-ant-outside\n');
  const { store, tree } = await snapshot(
    'sources',
    { 'a.go': 'package a\n', 'sub/b.go': 'package b\n', 'README.md': '# a\n' },
    { 'out.go': join(scratch, 'secret.go'), 'in.go': 'a.go' },
  );
  const sources = await readSourceFiles(store, tree.entries, (path) => path.endsWith('.go'));
  assert.deepEqual(sources, { 'a.go': 'package a\n', 'sub/b.go': 'package b\n' });
  const limits = { ...sourceReadLimits };
  try {
    sourceReadLimits.files = 1;
    assert.deepEqual(Object.keys(await readSourceFiles(store, tree.entries, (path) => path.endsWith('.go'))), ['a.go']);
  } finally {
    Object.assign(sourceReadLimits, limits);
  }
});
