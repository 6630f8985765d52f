// The run's patch, applied by the real `git apply` to a copy of the repository: binary files and
// text in other encodings come back byte for byte, UTF-8 text stays a readable diff, what test
// runs and commands left behind in files the agent never edited stays out unless asked for, and
// the changed lines are counted on the whole patch.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import iconv from 'iconv-lite';
import { diffLines } from '../../src/agent/parallelAttempts.js';
import type { Mutation } from '../../src/agent/workspace.js';
import {
  computePatch,
  patchForReport,
  undoOfByProducts,
  type PatchOptions,
} from '../../src/sandbox/workspace/patch.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { diffTrees, readTree, walk } from '../../src/sandbox/workspace/tree.js';

let scratch: string;
let store: FolderStore;
let counter = 0;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-patch-'));
  store = new FolderStore(join(scratch, 'store'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

type Files = Record<string, Buffer | string>;
type Change = { content: Buffer | string | null; madeBy?: Mutation['madeBy']; executable?: boolean };

async function writeFiles(root: string, files: Files): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/**
 * A repository of `files`, then `changes` made to it (each by a file tool unless it says
 * otherwise): the patch the run would report, and where the original and changed copies are.
 */
async function patchOf(files: Files, changes: Record<string, Change>, options: PatchOptions = {}) {
  counter += 1;
  const original = join(scratch, `original-${counter}`);
  const changed = join(scratch, `changed-${counter}`);
  await writeFiles(original, files);
  const snapshot = await readTree(original, { paths: await walk(original), onFile: (b, c) => store.putBlob(b, c) });
  await store.putTree(snapshot);
  await cp(original, changed, { recursive: true });
  for (const [path, change] of Object.entries(changes)) {
    if (change.content === null) await rm(join(changed, path));
    else await writeFiles(changed, { [path]: change.content });
    if (change.executable) await chmod(join(changed, path), 0o755);
  }
  const after = await readTree(changed, { paths: await walk(changed), onFile: (b, c) => store.putBlob(b, c) });
  const mutations: Mutation[] = diffTrees(snapshot.entries, after.entries).map(({ path, entry }) => ({
    path,
    after:
      entry === null
        ? null
        : entry.kind === 'file'
          ? { kind: 'file', blob: entry.blob, executable: entry.executable }
          : { kind: 'symlink', target: entry.target },
    toolUseId: `toolu_${path}`,
    ...(changes[path]?.madeBy ? { madeBy: changes[path]?.madeBy } : {}),
  }));
  const computed = await computePatch(store, snapshot.digest, mutations, options);
  return { ...computed, original, changed, snapshotId: snapshot.digest, mutations };
}

/** `git apply` of the patch on a fresh copy of the original; the copy's files by path. */
async function applied(original: string, patch: string): Promise<string> {
  const copy = `${original}-applied-${Math.random().toString(36).slice(2)}`;
  await cp(original, copy, { recursive: true });
  await writeFile(join(copy, '..', `${copy.split('/').at(-1)}.patch`), patch);
  execFileSync('git', ['apply', '--verbose', join(copy, '..', `${copy.split('/').at(-1)}.patch`)], {
    cwd: copy,
    stdio: 'pipe',
  });
  return copy;
}

async function sameBytes(copy: string, changed: string, paths: string[]): Promise<void> {
  for (const path of paths) {
    const expected = await readFile(join(changed, path)).catch(() => null);
    const actual = await readFile(join(copy, path)).catch(() => null);
    assert.ok(expected === null ? actual === null : actual?.equals(expected), `${path} has the expected bytes`);
  }
}

const pngBytes = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6,
]);
const sqlite = (rows: number) =>
  Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096 - 16, 0), Buffer.alloc(rows * 64, 0x2a)]);

test('a binary file the agent changed is a git binary patch: git apply gives back its exact bytes (and -R the old ones)', async () => {
  const { patch, original, changed } = await patchOf(
    { 'app.py': 'VERSION = 1\n', 'logo.png': pngBytes, 'old.bin': Buffer.from([0, 1, 2, 3]) },
    {
      'app.py': { content: 'VERSION = 2\n' },
      'logo.png': { content: Buffer.concat([pngBytes, Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44])]) },
      'icons/new.png': { content: pngBytes },
      'old.bin': { content: null },
    },
  );
  assert.doesNotMatch(patch, /^Binary files/m);
  assert.match(
    patch,
    /^diff --git a\/app\.py b\/app\.py\n--- a\/app\.py\n\+\+\+ b\/app\.py\n@@ -1 \+1 @@\n-VERSION = 1\n\+VERSION = 2\n/m,
  );
  assert.match(patch, /^index [0-9a-f]{40}\.\.[0-9a-f]{40} 100644\nGIT binary patch\nliteral \d+\n/m);
  const copy = await applied(original, patch);
  await sameBytes(copy, changed, ['app.py', 'logo.png', 'icons/new.png', 'old.bin']);
  execFileSync('git', ['apply', '-R', join(copy, '..', `${copy.split('/').at(-1)}.patch`)], {
    cwd: copy,
    stdio: 'pipe',
  });
  await sameBytes(copy, original, ['app.py', 'logo.png', 'icons/new.png', 'old.bin']);
});

test('an edit of a Latin-1 file applies byte for byte, and the patch shows the change decoded for people', async () => {
  const before = '# -*- coding: latin-1 -*-\n"""Tarifs."""\n\nTAUX = {"normal": 0.20, "réduit": 0.55}\n';
  const { patch, original, changed } = await patchOf(
    { 'tarifs.py': iconv.encode(before, 'latin1') },
    { 'tarifs.py': { content: iconv.encode(before.replace('0.55', '0.055'), 'latin1') } },
  );
  assert.match(
    patch,
    /^# tarifs\.py: latin-1 \(declared\) text, its change shown decoded; git apply uses the binary patch below\n# @@ -1,4 \+1,4 @@\n(# .*\n)*# -TAUX = \{"normal": 0\.20, "réduit": 0\.55\}\n# \+TAUX = \{"normal": 0\.20, "réduit": 0\.055\}\ndiff --git a\/tarifs\.py b\/tarifs\.py\nindex /,
  );
  await sameBytes(await applied(original, patch), changed, ['tarifs.py']);
  assert.equal(diffLines(patch), 2, 'counted by its decoded lines');
});

test('an edit of a UTF-16 file with CRLF applies byte for byte', async () => {
  const before = '\ufeff[Messages]\r\nbonjour=Bonjour {nom} !\r\ntotal=Total : {montant} €\r\n';
  const { patch, original, changed } = await patchOf(
    { 'fr.ini': iconv.encode(before, 'utf16le'), 'README.md': 'Tarifs\n' },
    { 'fr.ini': { content: iconv.encode(before.replace('{montant}', '{amount}'), 'utf16le') } },
  );
  assert.match(patch, /^# -total=Total : \{montant\} €\n# \+total=Total : \{amount\} €\n/m);
  await sameBytes(await applied(original, patch), changed, ['fr.ini', 'README.md']);
});

const byProductFiles = { 'inventory.py': 'LIMIT = 1\n', 'fixtures.db': sqlite(1), 'notes.txt': 'a\n' };
const byProductChanges: Record<string, Change> = {
  'inventory.py': { content: 'LIMIT = 2\n' },
  'fixtures.db': { content: sqlite(3), madeBy: 'test_run' },
  '.coverage': { content: sqlite(2), madeBy: 'test_run' },
  'junit.xml': { content: '<testsuite/>\n', madeBy: 'test_run' },
  'build/out.bin': { content: pngBytes, madeBy: 'command' },
  'generated.py': { content: 'GENERATED = True\n', madeBy: 'command' },
  'notes.txt': { content: null, madeBy: 'command' },
};

test('what only a test run changed, and binary files a command wrote, are left out unless all changes are asked for', async () => {
  const [files, changes] = [byProductFiles, byProductChanges];
  const fix = await patchOf(files, changes);
  assert.deepEqual(
    [...fix.patch.matchAll(/^diff --git a\/(\S+)/gm)].map((match) => match[1]),
    ['generated.py', 'inventory.py', 'notes.txt'],
  );
  assert.deepEqual(fix.leftOut, ['.coverage', 'build/out.bin', 'fixtures.db', 'junit.xml']);
  const copy = await applied(fix.original, fix.patch);
  await sameBytes(copy, fix.changed, ['inventory.py', 'generated.py', 'notes.txt']);
  await sameBytes(copy, fix.original, ['fixtures.db', '.coverage', 'junit.xml', 'build/out.bin']);

  const all = await patchOf(files, changes, { allChanges: true });
  assert.deepEqual(all.leftOut, []);
  await sameBytes(await applied(all.original, all.patch), all.changed, [...Object.keys(changes)]);
});

test("a verification's undoing gives what the patch leaves out its snapshot state back; the patch stays the same and still names them", async () => {
  const fix = await patchOf(byProductFiles, byProductChanges);
  const undo = await undoOfByProducts(store, fix);
  const snapshot = await store.getTree(fix.snapshotId);
  const database = snapshot.entries.find((entry) => entry.path === 'fixtures.db');
  assert.deepEqual(
    undo.map(({ path, after, madeBy }) => ({ path, after, madeBy })),
    [
      { path: '.coverage', after: null, madeBy: 'verification' },
      { path: 'build/out.bin', after: null, madeBy: 'verification' },
      {
        path: 'fixtures.db',
        after: { kind: 'file', blob: database?.kind === 'file' && database.blob, executable: false },
        madeBy: 'verification',
      },
      { path: 'junit.xml', after: null, madeBy: 'verification' },
    ],
  );
  const afterUndo = await computePatch(store, fix.snapshotId, [...fix.mutations, ...undo]);
  assert.equal(afterUndo.patch, fix.patch);
  assert.deepEqual(afterUndo.leftOut, fix.leftOut);
  // Nothing left to undo; a test run that writes .coverage again makes it one more time.
  assert.deepEqual(await undoOfByProducts(store, { ...fix, mutations: [...fix.mutations, ...undo] }), []);
  const coverage = fix.mutations.find((mutation) => mutation.path === '.coverage') as Mutation;
  const again = [...fix.mutations, ...undo, coverage];
  assert.deepEqual((await computePatch(store, fix.snapshotId, again)).leftOut, fix.leftOut);
  assert.deepEqual(
    (await undoOfByProducts(store, { ...fix, mutations: again })).map((mutation) => mutation.path),
    ['.coverage'],
  );
});

test('a binary file a file tool wrote, and a mode change, are kept', async () => {
  const { patch, original, changed, leftOut } = await patchOf(
    { 'run.sh': '#!/bin/sh\necho hi\n', 'data.bin': Buffer.from([1, 0, 2]) },
    {
      'run.sh': { content: '#!/bin/sh\necho hi\n', executable: true, madeBy: 'command' },
      'data.bin': { content: Buffer.from([1, 0, 3]) },
    },
  );
  assert.deepEqual(leftOut, []);
  assert.match(patch, /^diff --git a\/run\.sh b\/run\.sh\nold mode 100644\nnew mode 100755\n/m);
  const copy = await applied(original, patch);
  await sameBytes(copy, changed, ['data.bin']);
  assert.equal(
    execFileSync('stat', ['-c', '%a', join(copy, 'run.sh')])
      .toString()
      .trim(),
    '755',
  );
});

test('names with quotes, backslashes, tabs or non-ASCII letters apply under their own names', async () => {
  const names = ['say "hi".txt', 'back\\slash.txt', 'tab\there.txt', 'résumé.txt', 'with space.txt'];
  const { patch, original, changed } = await patchOf(
    Object.fromEntries(names.map((name) => [name, 'old\n'])),
    Object.fromEntries(names.map((name) => [name, { content: 'new\n' }])),
  );
  assert.match(patch, /^diff --git "a\/say \\"hi\\"\.txt" "b\/say \\"hi\\"\.txt"$/m);
  await sameBytes(await applied(original, patch), changed, names);
});

test('a path with a newline cannot smuggle a file into the patch: every path is quoted as git quotes it, and git apply changes exactly the files the run changed', async () => {
  // A Latin-1 file (a binary patch with a decoded view in comment lines) under a folder whose name
  // holds a newline and a whole diff header: written raw, the comment line would end at the
  // newline and git apply would create NOTES, a file the run never had.
  const folder =
    'legacy\ndiff --git a/NOTES b/NOTES\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1 @@\n+smuggled';
  const path = `${folder}/tarifs.py`;
  const before = '# -*- coding: latin-1 -*-\nTAUX = {"réduit": 0.55}\n';
  const { patch, original, changed } = await patchOf(
    { [path]: iconv.encode(before, 'latin1'), 'ünïcode\x01.txt': 'old\n' },
    {
      [path]: { content: iconv.encode(before.replace('0.55', '0.055'), 'latin1') },
      'ünïcode\x01.txt': { content: 'new\n' },
    },
  );
  assert.ok(
    !patch.split('\n').some((line) => line.startsWith('+++ b/NOTES')),
    'no line of the patch is the smuggled header',
  );
  assert.match(patch, /^# "legacy\\ndiff --git a\/NOTES b\/NOTES\\nnew file mode 100644\\n.*\/tarifs\.py": latin-1/m);
  assert.match(
    patch,
    /^diff --git "a\/\\303\\274n\\303\\257code\\001\.txt" "b\/\\303\\274n\\303\\257code\\001\.txt"$/m,
  );
  const copy = await applied(original, patch);
  await sameBytes(copy, changed, [path, 'ünïcode\x01.txt']);
  const touched = execFileSync(
    'git',
    ['apply', '--numstat', '-z', join(copy, '..', `${copy.split('/').at(-1)}.patch`)],
    {
      cwd: copy,
      encoding: 'utf8',
    },
  )
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.split('\t').slice(2).join('\t'))
    .sort();
  assert.deepEqual(touched, [path, 'ünïcode\x01.txt'].sort());
  assert.equal(await readFile(join(copy, 'NOTES')).catch(() => null), null, 'NOTES was never in the run');
});

test('a patch kept in the content store counts the changed lines of all of it, not of its preview', async () => {
  const files = Object.fromEntries(
    Array.from({ length: 40 }, (_, index) => [`module_${index}.py`, `${'x = 1\n'.repeat(2000)}`]),
  );
  const { patch } = await patchOf(
    files,
    Object.fromEntries(Object.keys(files).map((path) => [path, { content: `${'x = 2\n'.repeat(2000)}` }])),
  );
  const report = await patchForReport(store, { patch, leftOut: [] });
  assert.ok(report.fullPatch, 'kept in the store');
  assert.equal(report.fullPatch.changedLines, 40 * 4000);
  assert.ok(diffLines(report.patch) < 40 * 4000, 'the preview holds fewer');
});

test('UTF-8 with a byte-order mark, a file declared utf8, and ASCII in a Latin-1 file are diffed as text and apply', async () => {
  const { patch, original, changed } = await patchOf(
    {
      'bom.py': '\ufeffimport os\nVALUE = 1\n',
      'declared.py': '# -*- coding: utf8 -*-\nNAME = "café"\n',
      'ascii.py': '# -*- coding: latin-1 -*-\nRATE = 1\n',
    },
    {
      'bom.py': { content: '\ufeffimport sys\nVALUE = 1\n' },
      'declared.py': { content: '# -*- coding: utf8 -*-\nNAME = "crème"\n' },
      'ascii.py': { content: '# -*- coding: latin-1 -*-\nRATE = 2\n' },
    },
  );
  assert.doesNotMatch(patch, /GIT binary patch/);
  assert.match(patch, /^-\ufeffimport os\n\+\ufeffimport sys$/m);
  await sameBytes(await applied(original, patch), changed, ['bom.py', 'declared.py', 'ascii.py']);
});
