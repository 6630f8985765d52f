// Replaying a workspace's mutation log (snapshot + every change the run captured) must give the
// workspace the run saw, whatever the changes were: a folder that becomes a symlink (inside or
// outside the workspace) or a file, a file that becomes a folder, renames, deletions. Checked on
// real folders (no container): the three shapes that broke every later rebuild, then a seeded
// property test over random sequences of changes. Reproduce a failure with REPLAY_SEED=<seed>.
import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Mutation } from '../../src/agent/workspace.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { readTree, type Tree } from '../../src/sandbox/workspace/tree.js';
import { WorkspaceFolder } from '../../src/sandbox/workspace/workspaceFolder.js';

let root: string;
let store: FolderStore;
let outside: string;
const user = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
let folders = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'workspace-replay-'));
  store = new FolderStore(join(root, 'store'));
  outside = join(root, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'x.py'), 'outside the workspace\n');
});
after(() => rm(root, { recursive: true, force: true }));

/** A workspace as a run has it: built from a snapshot of `files`, each change captured into the log. */
async function runWorkspace(files: Record<string, string>) {
  const number = ++folders;
  const repository = join(root, `repository-${number}`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repository, path)), { recursive: true });
    await writeFile(join(repository, path), content);
  }
  const snapshot = await readTree(repository, { onFile: (blob, content) => store.putBlob(blob, content) });
  await store.putTree(snapshot);
  const live = new WorkspaceFolder(join(root, `live-${number}`, 'workspace'), store, user);
  let tree: Tree = await live.rebuild(snapshot.digest, []);
  const log: Mutation[] = [];
  return {
    path: live.path,
    repository,
    log,
    /** Makes a change on disk (as a command in the sandbox would) and captures it into the log. */
    async change(work: (path: string) => Promise<void>, id = `toolu_${log.length}`): Promise<void> {
      await work(live.path);
      const captured = await live.capture(tree, id);
      tree = captured.tree;
      log.push(...captured.mutations);
    },
    tree: () => tree,
    /** Another host's rebuild from the snapshot and the log. */
    async replay(): Promise<{ tree: Tree; folder: string }> {
      const other = new WorkspaceFolder(join(root, `replay-${++folders}`, 'workspace'), store, user);
      return { tree: await other.rebuild(snapshot.digest, log), folder: other.path };
    },
  };
}

test('a folder that holds only symlinks is made with them (commander’s tests/fixtures/another-dir)', async () => {
  const repository = join(root, 'only-symlinks');
  await mkdir(join(repository, 'fixtures', 'other-dir'), { recursive: true });
  await mkdir(join(repository, 'fixtures', 'another-dir'));
  await writeFile(join(repository, 'fixtures', 'pm'), '#!/usr/bin/env node\n');
  await symlink('../pm', join(repository, 'fixtures', 'other-dir', 'pm'));
  await symlink('../other-dir/pm', join(repository, 'fixtures', 'another-dir', 'pm'));
  const snapshot = await readTree(repository, { onFile: (blob, content) => store.putBlob(blob, content) });
  await store.putTree(snapshot);
  const live = new WorkspaceFolder(join(root, 'only-symlinks-live', 'workspace'), store, user);
  const tree = await live.rebuild(snapshot.digest, []);
  assert.equal(tree.digest, snapshot.digest);
  assert.equal(await readFile(join(live.path, 'fixtures', 'another-dir', 'pm'), 'utf8'), '#!/usr/bin/env node\n');
});

test('a folder that becomes a symlink to another folder of the workspace replays without deleting through it', async () => {
  const run = await runWorkspace({ 'src/x.py': 'x = 1\n', 'lib/x.py': 'y = 2\n' });
  await run.change(async (path) => {
    await rm(join(path, 'src'), { recursive: true });
    await symlink('lib', join(path, 'src'));
  });
  const replayed = await run.replay();
  assert.equal(replayed.tree.digest, run.tree().digest);
  assert.equal(await readFile(join(replayed.folder, 'lib', 'x.py'), 'utf8'), 'y = 2\n');
});

test('a folder that becomes a symlink outside the workspace replays, and nothing outside is touched', async () => {
  const run = await runWorkspace({ 'src/x.py': 'x = 1\n', 'README.md': 'r\n' });
  await run.change(async (path) => {
    await rm(join(path, 'src'), { recursive: true });
    await symlink(outside, join(path, 'src'));
  });
  const replayed = await run.replay();
  assert.equal(replayed.tree.digest, run.tree().digest);
  assert.equal(await readFile(join(outside, 'x.py'), 'utf8'), 'outside the workspace\n');
});

test('a folder replaced by a file, and a file replaced by a folder, replay', async () => {
  const run = await runWorkspace({ 'src/x.py': 'x = 1\n', build: 'a file\n' });
  await run.change(async (path) => {
    await rm(join(path, 'src'), { recursive: true });
    await writeFile(join(path, 'src'), 'now a file\n');
    await rm(join(path, 'build'));
    await mkdir(join(path, 'build'));
    await writeFile(join(path, 'build', 'out.txt'), 'inside\n');
  });
  const replayed = await run.replay();
  assert.equal(replayed.tree.digest, run.tree().digest);
});

test('a log in the order older code wrote it (a new symlink before the files it replaced) replays too', async () => {
  const run = await runWorkspace({ 'src/x.py': 'x = 1\n', 'lib/x.py': 'y = 2\n', 'out/o.txt': 'o\n' });
  await run.change(async (path) => {
    await rm(join(path, 'src'), { recursive: true });
    await symlink('lib', join(path, 'src'));
    await rm(join(path, 'out'), { recursive: true });
    await writeFile(join(path, 'out'), 'a file\n');
  });
  // Older code sorted a change's mutations by path alone: `src` before `src/x.py`.
  run.log.sort((a, b) => (a.path < b.path ? -1 : 1));
  assert.deepEqual(
    run.log.map((mutation) => `${mutation.path} ${mutation.after?.kind ?? 'removed'}`),
    ['out file', 'out/o.txt removed', 'src symlink', 'src/x.py removed'],
  );
  const replayed = await run.replay();
  assert.equal(replayed.tree.digest, run.tree().digest);
  assert.equal(await readFile(join(replayed.folder, 'lib', 'x.py'), 'utf8'), 'y = 2\n');
});

test('a snapshot never reads a listed path through a folder that became a symlink', async () => {
  const repository = join(root, 'checkout');
  await mkdir(join(repository, 'conf'), { recursive: true });
  await writeFile(join(repository, 'conf', 'x.py'), 'tracked\n');
  await writeFile(join(repository, 'main.py'), 'main\n');
  // git's index still lists conf/x.py after conf became a symlink to a folder outside.
  await rm(join(repository, 'conf'), { recursive: true });
  await symlink(outside, join(repository, 'conf'));
  const tree = await readTree(repository, { paths: ['conf', 'conf/x.py', 'main.py'] });
  assert.deepEqual(
    tree.entries.map((entry) => `${entry.kind} ${entry.path}`),
    ['symlink conf', 'file main.py'],
  );
});

// ── The property: any sequence of changes replays to the workspace the run saw ─────────────────

/** A small seeded generator (mulberry32): the same seed gives the same sequences. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  return { below, pick: <T>(items: readonly T[]): T => items[below(items.length)] as T };
}
type Random = ReturnType<typeof randomSource>;

const names = ['a', 'b', 'c', 'x.py'] as const;
const randomPath = (random: Random) => Array.from({ length: 1 + random.below(3) }, () => random.pick(names)).join('/');

/** What is at a path, never looking through a symlink or a file: null for nothing (or nothing reachable). */
async function kindAt(workspace: string, path: string): Promise<'file' | 'folder' | 'symlink' | null> {
  const parts = path.split('/');
  for (let depth = 1; depth <= parts.length; depth++) {
    const stats = await lstat(join(workspace, ...parts.slice(0, depth))).catch(() => null);
    if (!stats) return null;
    if (depth < parts.length && !stats.isDirectory()) return null;
    if (depth === parts.length) return stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'folder' : 'file';
  }
  return null;
}

/** Makes the folders leading to `path` real folders (what a command's `mkdir -p` after `rm` does), never through a symlink. */
async function foldersTo(workspace: string, path: string): Promise<void> {
  const parts = path.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const folder = join(workspace, ...parts.slice(0, depth));
    const stats = await lstat(folder).catch(() => null);
    if (stats?.isDirectory()) continue;
    if (stats) await rm(folder);
    await mkdir(folder);
  }
}

/** Clears `path` (whatever it is) and the way to it, ready for something new. */
async function clear(workspace: string, path: string): Promise<void> {
  await foldersTo(workspace, path);
  await rm(join(workspace, path), { recursive: true, force: true });
}

/** Existing entries (files, folders, symlinks), never looking through a symlink. */
async function entriesOf(workspace: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (relative: string) => {
    for (const dirent of await readdir(join(workspace, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${dirent.name}` : dirent.name;
      found.push(path);
      if (dirent.isDirectory()) await visit(path);
    }
  };
  await visit('');
  return found.sort();
}

/** One random change, made as a command in the sandbox would make it; returns what it did. */
async function randomChange(random: Random, workspace: string): Promise<string> {
  const existing = await entriesOf(workspace);
  const target = existing.length > 0 && random.below(3) > 0 ? random.pick(existing) : randomPath(random);
  const kind = await kindAt(workspace, target);
  switch (random.below(7)) {
    case 0: {
      const content = `${target} ${random.below(4)}\n`;
      await clear(workspace, target);
      await writeFile(join(workspace, target), content);
      if (random.below(3) === 0) await chmod(join(workspace, target), 0o755);
      return `write ${target}`;
    }
    case 1:
      if (kind) await rm(join(workspace, target), { recursive: true, force: true });
      return `remove ${target}`;
    case 2: {
      const destination = randomPath(random);
      if (!kind || destination === target || destination.startsWith(`${target}/`)) return `rename ${target} (skipped)`;
      await clear(workspace, destination);
      // Clearing the way may have removed the source (it was on the way): then nothing moves.
      if (!(await kindAt(workspace, target))) return `rename ${target} (gone)`;
      await rename(join(workspace, target), join(workspace, destination));
      return `rename ${target} -> ${destination}`;
    }
    case 3: {
      const link = random.pick(['a', 'b/c', '../a', '.', 'x.py', 'nowhere/else', outside, '/etc']);
      await clear(workspace, target);
      await symlink(link, join(workspace, target));
      return `symlink ${target} -> ${link}`;
    }
    case 4: {
      await clear(workspace, target);
      await mkdir(join(workspace, target));
      const inside = `${target}/${random.pick(names)}`;
      await writeFile(join(workspace, inside), `${inside}\n`);
      return `folder ${target} with ${inside}`;
    }
    case 5:
      if (kind === 'file') await chmod(join(workspace, target), random.below(2) ? 0o755 : 0o644);
      return `chmod ${target}`;
    default:
      await foldersTo(workspace, `${target}/-`);
      return `empty folder ${target}`;
  }
}

const sequences = Number(process.env.REPLAY_SEQUENCES ?? 1000);

/** One sequence: a random repository, random changes captured into the log, then a replay on another host. */
async function replaySequence(seed: number, sequence: number): Promise<void> {
  const random = randomSource(seed ^ Math.imul(sequence + 1, 0x9e3779b9));
  const files: Record<string, string> = {};
  for (let count = 0; count < 2 + random.below(4); count++) {
    const path = randomPath(random);
    if (Object.keys(files).some((other) => other.startsWith(`${path}/`) || path.startsWith(`${other}/`))) continue;
    files[path] = `${path}\n`;
  }
  const steps: string[] = [];
  const where = () =>
    `REPLAY_SEED=${seed} REPLAY_SEQUENCE=${sequence}: files ${Object.keys(files).join(' ')}; captures: ${steps.join(' | ')}`;
  try {
    const run = await runWorkspace(files);
    for (let capture = 0; capture < 1 + random.below(5); capture++) {
      const made: string[] = [];
      await run.change(async (workspace) => {
        for (let change = 0; change < 1 + random.below(3); change++) made.push(await randomChange(random, workspace));
      });
      steps.push(made.join(', '));
    }
    const replayed = await run.replay();
    assert.deepEqual(replayed.tree.entries, run.tree().entries, where());
    assert.equal(replayed.tree.digest, run.tree().digest, where());
    for (const folder of [run.repository, dirname(run.path), dirname(replayed.folder)])
      await rm(folder, { recursive: true });
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    throw new Error(`${where()}: ${(error as Error).message}`, { cause: error });
  }
}

test(`property: ${sequences} random sequences of writes, removals, renames and folder/file/symlink swaps replay exactly`, async () => {
  const seed = Number(process.env.REPLAY_SEED ?? Math.floor(Math.random() * 2 ** 32));
  const only = process.env.REPLAY_SEQUENCE;
  const outsideBefore = await entriesOf(outside);
  // Eight at a time: each waits mostly on the file system.
  const numbers = only === undefined ? Array.from({ length: sequences }, (_, index) => index) : [Number(only)];
  for (let first = 0; first < numbers.length; first += 8) {
    const results = await Promise.allSettled(numbers.slice(first, first + 8).map((n) => replaySequence(seed, n)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }
  assert.deepEqual(await entriesOf(outside), outsideBefore, 'nothing outside the workspaces changed');
});
