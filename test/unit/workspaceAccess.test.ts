// A workspace holds the user's code: its folders are the sandbox user's alone (mode 0700), so that
// other users of the worker's machine can neither list nor read it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { readTree } from '../../src/sandbox/workspace/tree.js';
import { WorkspaceFolder } from '../../src/sandbox/workspace/workspaceFolder.js';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'workspace-access-'));
  await chmod(root, 0o755); // as a worker's data folder usually is: others may pass through it
});
after(() => rm(root, { recursive: true, force: true }));

test('a workspace and its sandbox folder are created 0700, owned by the sandbox user', async () => {
  const store = new FolderStore(join(root, 'store'));
  const repository = join(root, 'repository');
  await mkdir(join(repository, 'src'), { recursive: true });
  await writeFile(join(repository, 'src', 'secret.py'), 'API_TOKEN = "do-not-share"\n');
  const snapshot = await readTree(repository, { onFile: (blob, content) => store.putBlob(blob, content) });
  await store.putTree(snapshot);
  const asRoot = process.getuid?.() === 0;
  const sandboxUser = asRoot
    ? { uid: 1000, gid: 1000 }
    : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const folder = new WorkspaceFolder(join(root, 'workspaces', 'sandbox-1', 'workspace'), store, sandboxUser);
  await folder.rebuild(snapshot.digest, []);
  for (const path of [folder.path, dirname(folder.path)]) {
    assert.equal((await stat(path)).mode & 0o777, 0o700, `${path} is 0700`);
  }
  assert.equal((await stat(folder.path)).uid, sandboxUser.uid);
  // A rebuild (a reset, another worker) keeps it so.
  await chmod(dirname(folder.path), 0o755);
  await folder.rebuild(snapshot.digest, []);
  assert.equal((await stat(dirname(folder.path))).mode & 0o777, 0o700);
  if (asRoot) {
    // Another user of the machine cannot list it or read the code.
    const other = { uid: 1001, gid: 1001 };
    for (const args of [
      ['ls', folder.path],
      ['cat', join(folder.path, 'src', 'secret.py')],
    ]) {
      const result = spawnSync(args[0] as string, args.slice(1), { ...other, encoding: 'utf8' });
      assert.notEqual(result.status, 0, `${args.join(' ')} as uid 1001 succeeded: ${result.stdout}`);
      assert.match(result.stderr, /Permission denied/);
    }
  }
});
