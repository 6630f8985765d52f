// A sandbox's workspace folder on this worker's host: built from a snapshot and a mutation
// log, hashed cheaply (file hashes are cached by size, mtime and inode), and owned by the
// sandbox user so that commands in the container can write to it.
import { chmod, lchown, lstat, mkdir, readdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Mutation } from '../../agent/workspace.js';
import type { SandboxUser } from '../container/container.js';
import { removeFolder, withOwnerAccess } from './ownerAccess.js';
import { inBatches } from './inBatches.js';
import { moveMtimePast, statBeforeWrite } from './mtimePast.js';
import { isBelowRealFolders, makeRealFolders, normalizeRelativePath } from './paths.js';
import type { ContentStore } from '../store/contentStore.js';
import { GitignoreRules } from './gitignore.js';
import { diffTrees, foldersOf, readTree, stateOf, walk, type CachedHash, type Tree } from './tree.js';

type HashCache = Map<string, CachedHash>;

export class WorkspaceFolder {
  private readonly hashCache: HashCache = new Map();
  /** The snapshot's paths: they count even where a .gitignore rule would ignore them (as tracked files do in git). */
  private tracked: Set<string> | null = null;

  constructor(
    readonly path: string,
    private readonly store: ContentStore,
    private readonly user: SandboxUser,
  ) {}

  /** The folder's tree: what its .gitignore files ignore (build artefacts) is not part of it. */
  async read(onEntry?: () => void): Promise<Tree> {
    return withOwnerAccess(this.path, async () => {
      const paths = await walk(this.path, await this.trackedPaths());
      return readTree(this.path, { cache: this.hashCache, paths, onEntry });
    });
  }

  /** Beside the folder, out of the container's reach: which snapshot the folder was built from. */
  private get snapshotRecord(): string {
    return posix.join(posix.dirname(this.path), 'snapshot.json');
  }

  /**
   * A check, for this moment's .gitignore files, of whether a path is left out of the tree
   * because a rule ignores it (the snapshot's own paths never are).
   */
  async ignoredCheck(): Promise<(path: string, isFolder: boolean) => Promise<boolean>> {
    const tracked = await this.trackedPaths();
    const trackedFolders = foldersOf(tracked);
    const rules = new GitignoreRules(this.path);
    return async (path, isFolder) =>
      !(isFolder ? trackedFolders : tracked).has(path) && (await rules.ignores(path, isFolder));
  }

  private async trackedPaths(): Promise<Set<string>> {
    if (!this.tracked) {
      const record = await readFile(this.snapshotRecord, 'utf8').catch(() => null);
      const snapshotId = record === null ? null : (JSON.parse(record) as { snapshotId: string }).snapshotId;
      const snapshot = snapshotId ? await this.store.getTree(snapshotId).catch(() => null) : null;
      this.tracked = new Set(snapshot?.entries.map((entry) => entry.path) ?? []);
    }
    return this.tracked;
  }

  /** The folder's tree, or null when the folder is not on this host. */
  async readIfPresent(onEntry?: () => void): Promise<Tree | null> {
    return (await lstat(this.path).then(
      () => true,
      () => false,
    ))
      ? this.read(onEntry)
      : null;
  }

  /**
   * Replaces the folder's content with the snapshot plus the mutations, in order. `onEntry` is
   * called for every file written, owned and hashed (a large repository takes a while).
   */
  async rebuild(snapshotId: string, mutations: Mutation[], onEntry: () => void = () => undefined): Promise<Tree> {
    const snapshot = await this.store.getTree(snapshotId);
    await removeFolder(this.path);
    // The user's code is the sandbox user's alone: others on this machine cannot list or read it.
    await mkdir(posix.dirname(this.path), { recursive: true, mode: 0o700 });
    await chmod(posix.dirname(this.path), 0o700);
    await mkdir(this.path, { mode: 0o700 });
    await writeFile(this.snapshotRecord, JSON.stringify({ snapshotId }));
    this.tracked = new Set(snapshot.entries.map((entry) => entry.path));
    this.hashCache.clear();
    // Files first, symlinks last: no file is ever written through a symlink.
    const files = snapshot.entries.filter((entry) => entry.kind === 'file');
    // A folder that holds only symlinks (commander's tests/fixtures/another-dir) is made too.
    const folders = new Set(snapshot.entries.map((entry) => posix.dirname(posix.join(this.path, entry.path))));
    await inBatches([...folders], async (folder) => {
      await mkdir(folder, { recursive: true });
    });
    await inBatches(files, async (entry) => {
      const absolute = posix.join(this.path, entry.path);
      await writeFile(absolute, await this.store.getBlob(entry.blob), { flag: 'wx' });
      if (entry.executable) await chmod(absolute, 0o755);
      onEntry();
    });
    for (const entry of snapshot.entries) {
      if (entry.kind === 'symlink') await symlink(entry.target, posix.join(this.path, entry.path));
    }
    for (const mutation of mutations) {
      await this.apply(mutation);
      onEntry();
    }
    await this.giveToSandboxUser('', onEntry);
    return this.read(onEntry);
  }

  /** Applies mutations to the folder as it is (a verification's undoing), each path the sandbox user's; its tree after them. */
  async applyAll(mutations: Mutation[], onEntry: () => void = () => undefined): Promise<Tree> {
    await this.applyEach(mutations, onEntry);
    return this.read(onEntry);
  }

  private async applyEach(mutations: Mutation[], onEntry: () => void = () => undefined): Promise<void> {
    for (const mutation of mutations) {
      await this.apply(mutation);
      if (mutation.after) await this.giveToSandboxUser(mutation.path);
      onEntry();
    }
  }

  /**
   * Gives one path the state a mutation says, never following a symlink: a symlink or file where
   * the path needs a folder is replaced by one, and a removal below a symlink or a file is a no-op
   * (the entry is already out of the tree). So mutations of one change apply in any order, and a
   * log written by older code (a folder that became a symlink, listed before its removed files)
   * replays too.
   */
  private async apply(mutation: Mutation): Promise<void> {
    const relative = normalizeRelativePath(mutation.path);
    if (relative === '') throw new Error('a mutation names the workspace itself, not a path in it');
    const absolute = posix.join(this.path, relative);
    const after = mutation.after;
    if (after === null) {
      if (!(await isBelowRealFolders(this.path, relative))) return;
      // A folder is no entry of the tree: its files have mutations of their own.
      const stats = await lstat(absolute).catch(() => null);
      if (stats && !stats.isDirectory()) await unlink(absolute);
      return;
    }
    await makeRealFolders(this.path, relative);
    const previous = await statBeforeWrite(absolute);
    // What is there goes, a folder with all it holds: a tree with this entry holds nothing below it.
    await rm(absolute, { recursive: true, force: true });
    if (after.kind === 'symlink') {
      await symlink(after.target, absolute);
    } else {
      await writeFile(absolute, await this.store.getBlob(after.blob), { flag: 'wx' });
      await moveMtimePast(absolute, previous);
      if (after.executable) await chmod(absolute, 0o755);
    }
  }

  /**
   * The mutations that turn `before` into the folder's current content. Changed files are
   * stored as blobs so that any worker can replay them.
   */
  async capture(before: Tree, toolUseId: string): Promise<{ tree: Tree; mutations: Mutation[] }> {
    const after = await this.read();
    if (after.digest === before.digest) return { tree: after, mutations: [] };
    const mutations: Mutation[] = [];
    for (const change of diffTrees(before.entries, after.entries)) {
      const entry = change.entry;
      if (entry?.kind === 'file')
        await this.store.putBlob(entry.blob, await readFile(posix.join(this.path, entry.path)));
      mutations.push({ path: change.path, after: entry ? stateOf(entry) : null, toolUseId });
    }
    return { tree: after, mutations };
  }

  /** Restores paths to their state in `before` (used to undo forbidden changes). */
  async restore(before: Tree, paths: string[]): Promise<void> {
    const byPath = new Map(before.entries.map((entry) => [entry.path, entry]));
    await this.applyEach(
      paths.map((path) => {
        const entry = byPath.get(path);
        return { path, toolUseId: 'restore', after: entry ? stateOf(entry) : null };
      }),
    );
  }

  /** Makes a path (and the folders leading to it; everything for '') owned by the sandbox user. */
  async giveToSandboxUser(relative: string, onEntry: () => void = () => undefined): Promise<void> {
    if (process.getuid?.() !== 0) return; // not root: the sandbox runs as our own user
    const parts = relative.split('/').filter(Boolean);
    const chain = [this.path, ...parts.map((_, index) => posix.join(this.path, ...parts.slice(0, index + 1)))];
    for (const path of chain) await lchown(path, this.user.uid, this.user.gid).catch(() => undefined);
    if (relative === '') await chownRecursive(this.path, this.user, onEntry);
  }
}

async function chownRecursive(root: string, user: SandboxUser, onEntry: () => void): Promise<void> {
  const visit = async (folder: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true });
    await inBatches(entries, async (dirent) => {
      const path = posix.join(folder, dirent.name);
      await lchown(path, user.uid, user.gid);
      onEntry();
      if (dirent.isDirectory()) await visit(path);
    });
  };
  await lchown(root, user.uid, user.gid);
  await visit(root);
}
