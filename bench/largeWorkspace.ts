// What a repository at the file limit costs on the worker's host, with file operations one at a
// time against in batches (src/sandbox/workspace/inBatches.ts), alternating in one run: the
// snapshot (every file read, hashed and stored), the workspace's rebuild from it (written, owned
// by the sandbox user, hashed) and a read of the workspace with nothing cached (the hash check
// after a worker restart).
//   node --import tsx bench/largeWorkspace.ts [files] [rounds]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileBatches } from '../src/sandbox/workspace/inBatches.js';
import { FolderStore } from '../src/sandbox/store/folderStore.js';
import { readTree } from '../src/sandbox/workspace/tree.js';
import { WorkspaceFolder } from '../src/sandbox/workspace/workspaceFolder.js';
import { alternately, figure, number } from './stats.js';

const files = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);
const batchSizes = [1, fileBatches.size];
const user = process.getuid?.() === 0 ? { uid: 1000, gid: 1000 } : { uid: process.getuid?.() ?? 0, gid: 0 };

interface Times {
  snapshotMs: number;
  rebuildMs: number;
  readMs: number;
}

const scratch = await mkdtemp(join(tmpdir(), 'bench-large-workspace-'));
try {
  const repo = join(scratch, 'repo');
  for (let index = 0; index < files; index++) {
    const path = join(repo, `pkg${index % 40}/module_${index}.py`);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `VALUE_${index} = ${index}\n`);
  }
  let run = 0;
  const measure = async (size: number): Promise<Times> => {
    fileBatches.size = size;
    run += 1;
    const store = new FolderStore(join(scratch, `store-${run}`));
    let started = Date.now();
    const tree = await readTree(repo, { onFile: (blob, content) => store.putBlob(blob, content) });
    await store.putTree(tree);
    const snapshotMs = Date.now() - started;
    started = Date.now();
    const workspace = join(scratch, `workspace-${run}`, 'workspace');
    await new WorkspaceFolder(workspace, store, user).rebuild(tree.digest, []);
    const rebuildMs = Date.now() - started;
    started = Date.now();
    const read = await new WorkspaceFolder(workspace, store, user).read();
    const readMs = Date.now() - started;
    if (read.digest !== tree.digest) throw new Error('the rebuilt workspace differs from its snapshot');
    await rm(join(scratch, `store-${run}`), { recursive: true, force: true });
    await rm(dirname(workspace), { recursive: true, force: true });
    return { snapshotMs, rebuildMs, readMs };
  };
  const [oneByOne, batched] = (await alternately(rounds, batchSizes, measure)) as [Times[], Times[]];
  console.log(
    `${files} files, median of ${rounds} alternating rounds (s): one at a time | ${fileBatches.size} at a time | ratio`,
  );
  for (const [label, key] of [
    ['snapshot', 'snapshotMs'],
    ['rebuild', 'rebuildMs'],
    ['read, nothing cached', 'readMs'],
  ] as const) {
    const [slow, fast] = [figure(oneByOne.map((t) => t[key])), figure(batched.map((t) => t[key]))];
    console.log(
      `  ${label.padEnd(22)} ${number(slow.median / 1000).padStart(6)} | ${number(fast.median / 1000).padStart(6)} | ${number(slow.median / fast.median, 2)}×`,
    );
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
