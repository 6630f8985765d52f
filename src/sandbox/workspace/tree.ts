// A workspace's content as a tree of entries, and its digest. The same digest is computed for
// a repository snapshot, for the workspace on disk, and after replaying a mutation log, so a
// sandbox can tell cheaply whether its workspace is the one the workflow expects.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { PathState } from '../../agent/workspace.js';
import { GitignoreRules } from './gitignore.js';
import { gitOutput } from './safeGit.js';
import { isBelowRealFolders } from './paths.js';
import { inBatches } from './inBatches.js';

export type TreeEntry =
  | { path: string; kind: 'file'; blob: string; size: number; executable: boolean }
  | { path: string; kind: 'symlink'; target: string };

export interface Tree {
  digest: string;
  entries: TreeEntry[];
}

/** What a mutation that gives a path this entry says (the entry without its path and size). */
export function stateOf(entry: TreeEntry): NonNullable<PathState> {
  return entry.kind === 'file'
    ? { kind: 'file', blob: entry.blob, executable: entry.executable }
    : { kind: 'symlink', target: entry.target };
}

/** Folders that are never part of a workspace: version control, dependencies, caches. */
export const ignoredFolders = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.tox',
  '.nox',
  '.venv',
  'venv',
  '.cache',
  '.durable-debugger',
]);

export function isIgnoredPath(relativePath: string): boolean {
  return relativePath.split('/').some((part) => ignoredFolders.has(part));
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A blob id or tree digest: 64 lowercase hex digits (anything else never reaches a path or a query). */
export function checkDigest(digest: string, what: 'blob id' | 'tree digest'): string {
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error(`not a ${what}: ${digest}`);
  return digest;
}

export function treeDigest(entries: TreeEntry[]): string {
  const lines = [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((entry) =>
      entry.kind === 'file'
        ? `F ${entry.executable ? 'x' : '-'} ${entry.blob} ${entry.path}`
        : `L ${sha256(entry.target)} ${entry.path}`,
    );
  return sha256(lines.join('\n'));
}

export interface ReadTreeLimits {
  maxFiles: number;
  maxTotalBytes: number;
}

export class TreeTooLargeError extends Error {}

export interface CachedHash {
  size: number;
  mtimeMs: number;
  /** Set by the kernel on every change, mtime's too: a command can put an old mtime back (`cp -p`, `touch -r`), never an old ctime. */
  ctimeMs: number;
  ino: number;
  blob: string;
}

/**
 * Reads the tree under `root`. `onFile` receives each file's content (to store it as a blob);
 * `cache` skips re-hashing files whose size, mtime, ctime and inode have not changed.
 */
export async function readTree(
  root: string,
  options: {
    limits?: ReadTreeLimits;
    onFile?: (blob: string, content: Buffer) => Promise<void>;
    cache?: Map<string, CachedHash>;
    paths?: string[];
    /** Called for every entry read (progress, for long reads). */
    onEntry?: () => void;
  } = {},
): Promise<Tree> {
  const paths = options.paths ?? (await walk(root));
  const entries: TreeEntry[] = [];
  let totalBytes = 0;
  if (options.limits && paths.length > options.limits.maxFiles) {
    throw new TreeTooLargeError(`it has ${paths.length} files, more than the limit of ${options.limits.maxFiles}`);
  }
  const realFolders = new Map<string, boolean>();
  await inBatches(paths, async (path) => {
    options.onEntry?.();
    // A listed path (git's index) below a folder that is now a symlink is not read through it.
    if (options.paths && !(await isBelowRealFolders(root, path, realFolders))) return;
    const absolute = join(root, path);
    const stats = await lstat(absolute).catch(() => null);
    if (!stats) return;
    if (stats.isSymbolicLink()) {
      entries.push({ path, kind: 'symlink', target: await readlink(absolute) });
      return;
    }
    if (!stats.isFile()) return;
    totalBytes += stats.size;
    if (options.limits && totalBytes > options.limits.maxTotalBytes) {
      throw new TreeTooLargeError(
        `its files add up to more than the limit of ${Math.round(options.limits.maxTotalBytes / 1024 / 1024)} MB`,
      );
    }
    const cached = options.cache?.get(path);
    let blob: string;
    if (
      cached &&
      cached.size === stats.size &&
      cached.mtimeMs === stats.mtimeMs &&
      cached.ctimeMs === stats.ctimeMs &&
      cached.ino === stats.ino &&
      !options.onFile
    ) {
      blob = cached.blob;
    } else {
      const content = await readRegularFile(absolute);
      if (content === null) return; // swapped for a link, a FIFO or a device since lstat: not part of the tree
      blob = sha256(content);
      await options.onFile?.(blob, content);
      options.cache?.set(path, {
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        ctimeMs: stats.ctimeMs,
        ino: stats.ino,
        blob,
      });
    }
    entries.push({ path, kind: 'file', blob, size: stats.size, executable: (stats.mode & 0o111) !== 0 });
  });
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { digest: treeDigest(entries), entries };
}

/**
 * A regular file's content, opened without following a final symlink and without blocking on a FIFO
 * or a device: null when the path is anything but a regular file (or has gone). Reads the size
 * fstat gave, so a file that grows meanwhile cannot make it read without end; `maxBytes` refuses a larger one.
 */
export async function readRegularFile(path: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOOP' || error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw error;
    },
  );
  if (!handle) return null;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return null;
    if (stats.size > maxBytes) throw new FileTooLargeError(path, stats.size, maxBytes);
    const content = Buffer.alloc(stats.size);
    let filled = 0;
    while (filled < content.length) {
      const { bytesRead } = await handle.read(content, filled, content.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return content.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

export class FileTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly size: number,
    readonly maxBytes: number,
  ) {
    super(`it is ${size} bytes, more than the ${maxBytes} read of such a file`);
  }
}

/**
 * Every file and symlink below `root`, relative, never following links: outside the folders
 * that are never part of a workspace, and outside what the .gitignore files ignore, except the
 * `tracked` paths (as in git, a tracked file counts even where a rule would ignore it).
 */
export async function walk(root: string, tracked: ReadonlySet<string> = new Set()): Promise<string[]> {
  const rules = new GitignoreRules(root);
  const trackedFolders = foldersOf(tracked);
  const found: string[] = [];
  async function visit(relative: string, insideIgnored: boolean): Promise<void> {
    // A folder that cannot be read is an error (the repository would look empty); one that vanished is not.
    const dirents = await readdir(join(root, relative), { withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
      },
    );
    for (const dirent of dirents) {
      const path = relative ? `${relative}/${dirent.name}` : dirent.name;
      if (dirent.isDirectory()) {
        if (ignoredFolders.has(dirent.name)) continue;
        const ignored = insideIgnored || (await rules.ignores(path, true));
        if (!ignored || trackedFolders.has(path)) await visit(path, ignored);
      } else if (dirent.isFile() || dirent.isSymbolicLink()) {
        if (tracked.has(path) || (!insideIgnored && !(await rules.ignores(path, false)))) found.push(path);
      }
    }
  }
  await visit('', false);
  return found.sort();
}

/** Every folder that holds one of the paths, at any depth. */
export function foldersOf(paths: ReadonlySet<string>): Set<string> {
  const folders = new Set<string>();
  for (const path of paths) {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1))
      folders.add(path.slice(0, slash));
  }
  return folders;
}

/** The files git would track (tracked plus untracked-not-ignored), or null if `root` is not a git checkout. */
export async function gitListedFiles(root: string): Promise<string[] | null> {
  try {
    const stdout = await gitOutput(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']);
    const top = (await gitOutput(root, ['rev-parse', '--show-prefix'])).trim();
    if (top !== '') return null; // `root` is a subfolder of a larger checkout: walk it instead
    return [...new Set(stdout.split('\0').filter((path) => path && !isIgnoredPath(path)))].sort();
  } catch {
    return null;
  }
}

/**
 * Entries that differ between two trees, as the after-state of each changed path (null: removed),
 * in the order a replay applies them: removals first, deepest first, then the rest by path, so
 * that a folder's files are gone before a file or symlink takes the folder's place.
 */
export function diffTrees(before: TreeEntry[], after: TreeEntry[]): Array<{ path: string; entry: TreeEntry | null }> {
  const beforeByPath = new Map(before.map((entry) => [entry.path, entry]));
  const afterByPath = new Map(after.map((entry) => [entry.path, entry]));
  const changes: Array<{ path: string; entry: TreeEntry | null }> = [];
  for (const entry of after) {
    const previous = beforeByPath.get(entry.path);
    if (!previous || JSON.stringify(previous) !== JSON.stringify(entry)) changes.push({ path: entry.path, entry });
  }
  for (const entry of before) {
    if (!afterByPath.has(entry.path)) changes.push({ path: entry.path, entry: null });
  }
  const removals = changes.filter((change) => change.entry === null).sort((a, b) => depthFirst(a.path, b.path));
  const writes = changes.filter((change) => change.entry !== null).sort((a, b) => (a.path < b.path ? -1 : 1));
  return [...removals, ...writes];
}

/** Deeper paths first; paths of one depth in reverse order (a folder's entries before the folder's name). */
function depthFirst(a: string, b: string): number {
  const depth = (path: string) => path.split('/').length;
  return depth(b) - depth(a) || (a < b ? 1 : -1);
}
