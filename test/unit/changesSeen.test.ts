// Changes seen by what caches a file by its size and times: Python's bytecode cache, which trusts
// the source's mtime in whole seconds, after an edit or a restore of the same length within that
// second (src/sandbox/workspace/mtimePast.ts); the workspace's own hashes, after a command put the
// old size and mtime back.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { editFileForTool, writeFileForTool } from '../../src/sandbox/workspace/fileTools.js';
import { readTree } from '../../src/sandbox/workspace/tree.js';
import { WorkspaceFolder } from '../../src/sandbox/workspace/workspaceFolder.js';

const run = promisify(execFile);

/** Python as the sandbox runs it: writing bytecode (a developer's shell may turn that off). */
async function python(cwd: string, code: string): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'PYTHONDONTWRITEBYTECODE'));
  const { stdout } = await run('python3', ['-c', code], { cwd, env });
  return stdout.trim();
}

const addTwoAndThree = (workspace: string) => python(workspace, 'import calc; print(calc.add(2, 3))');

/** A workspace folder below `scratch`, its blobs in a store beside it, owned by whoever runs the test. */
async function workspaceFolderIn(scratch: string): Promise<{ folder: WorkspaceFolder; store: FolderStore }> {
  const store = new FolderStore(join(scratch, 'store'));
  const folder = new WorkspaceFolder(join(scratch, 'files'), store, {
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  });
  await mkdir(folder.path);
  return { folder, store };
}

/** Waits for the start of a second, so that what follows happens within one. */
async function startOfASecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
}

test('an edit and a rewrite within the second of the bytecode Python compiled: the next import runs the new code', async () => {
  const workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-bytecode-'));
  try {
    await startOfASecond();
    await writeFile(join(workspace, 'calc.py'), 'def add(a, b):\n    return a - b\n');
    assert.equal(await addTwoAndThree(workspace), '-1');
    assert.equal((await readdir(join(workspace, '__pycache__'))).length, 1, 'compiled into __pycache__');
    const before = await stat(join(workspace, 'calc.py'));
    await editFileForTool(workspace, { path: 'calc.py', old_string: 'a - b', new_string: 'a + b' });
    const after = await stat(join(workspace, 'calc.py'));
    assert.equal(after.size, before.size);
    assert.notEqual(Math.floor(after.mtimeMs / 1000), Math.floor(before.mtimeMs / 1000));
    assert.equal(await addTwoAndThree(workspace), '5');
    await writeFileForTool(workspace, { path: 'calc.py', content: 'def add(a, b):\n    return a * b\n' });
    assert.equal(await addTwoAndThree(workspace), '6');
    // Two edits with no import between: the second, back in the wall clock's second, still moves past the first.
    await editFileForTool(workspace, { path: 'calc.py', old_string: 'a * b', new_string: 'a - b' });
    await editFileForTool(workspace, { path: 'calc.py', old_string: 'a - b', new_string: 'a % b' });
    assert.equal(await addTwoAndThree(workspace), '2');
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});

test('a test file a command changed and ran, restored within the same second: the next import runs the restored file', async () => {
  const workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-restore-'));
  try {
    const { folder, store } = await workspaceFolderIn(workspace);
    await startOfASecond();
    await writeFile(join(folder.path, 'test_calc.py'), 'EXPECTED = 5\n');
    // The snapshot's blobs, which a restore reads, stored as the run's snapshot stores them.
    const before = await readTree(folder.path, { onFile: (blob, content) => store.putBlob(blob, content) });
    // What a command that loosens the test and runs it leaves: the changed file, compiled.
    await writeFile(join(folder.path, 'test_calc.py'), 'EXPECTED = 6\n');
    assert.equal(await python(folder.path, 'import test_calc; print(test_calc.EXPECTED)'), '6');
    await folder.restore(before, ['test_calc.py']);
    assert.equal(await python(folder.path, 'import test_calc; print(test_calc.EXPECTED)'), '5');
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});

test('a file put back to its old size and mtime (`cp -p`, `touch -r`) is read anew: the tree does not keep its old hash', async () => {
  const workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-hash-cache-'));
  try {
    const { folder } = await workspaceFolderIn(workspace);
    const file = join(folder.path, 'calc.py');
    await writeFile(file, 'def add(a, b):\n    return a - b\n');
    const before = await folder.read();
    const { ino } = await stat(file);
    await run('cp', ['-p', file, join(workspace, 'calc.py.orig')]);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a later command, past the clock's tick
    await writeFile(file, 'def add(a, b):\n    return a + b\n');
    await run('touch', ['-r', join(workspace, 'calc.py.orig'), file]); // the old mtime, to the nanosecond
    const now = await stat(file, { bigint: true });
    const old = await stat(join(workspace, 'calc.py.orig'), { bigint: true });
    assert.deepEqual(
      [now.ino, now.size, now.mtimeNs],
      [BigInt(ino), old.size, old.mtimeNs],
      'the same file, size and mtime',
    );
    const after = await folder.read();
    assert.notEqual(after.digest, before.digest);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});
