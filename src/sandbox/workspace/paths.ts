// Every path the model gives is confined to the workspace. Paths are untrusted input: absolute
// paths, "..", and symlinks (from the repository or made by a command) that lead outside are
// refused with an explanation the model can act on.
import { lstat, mkdir, realpath, unlink } from 'node:fs/promises';
import { posix, sep } from 'node:path';

export class PathRefusedError extends Error {}

/** The path as a clean relative POSIX path, or an error saying why it is not allowed. */
export function normalizeRelativePath(input: string): string {
  if (input.includes('\0')) throw new PathRefusedError('The path contains a NUL character.');
  const trimmed = input.trim();
  if (trimmed.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(trimmed) || trimmed.startsWith('~')) {
    throw new PathRefusedError(
      `"${input}" is an absolute path. Use a path relative to the repository root, e.g. "src/module.py".`,
    );
  }
  const normalized = posix.normalize(trimmed.replace(/\\/g, '/'));
  if (normalized === '..' || normalized.startsWith('../')) {
    throw new PathRefusedError(`"${input}" points outside the repository. Only files inside it can be used.`);
  }
  return normalized === '.' ? '' : normalized.replace(/\/$/, '');
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Resolves a relative path inside `root`, following symlinks, and refuses it if the real
 * location is outside `root`. For a path that does not exist yet, its nearest existing
 * parent must be inside.
 *
 * A check, then a use by path: sound only because nothing can change the folder in between.
 * The host touches a workspace only when no process of its sandbox runs (quiesce.ts, called
 * before every tool call and after every command) or when its container is gone (a rebuild, a
 * removal), and the worker itself makes no symlink it then follows.
 */
export async function resolveInsideWorkspace(
  root: string,
  input: string,
): Promise<{ relative: string; absolute: string }> {
  const relative = normalizeRelativePath(input);
  const realRoot = await realpath(root);
  const absolute = relative ? posix.join(realRoot, relative) : realRoot;
  let probe = absolute;
  for (;;) {
    const stats = await lstat(probe).catch(() => null);
    if (stats) {
      const real = await realpath(probe).catch(() => null);
      if (real === null) {
        throw new PathRefusedError(`"${input}" is a symlink that leads nowhere inside the repository.`);
      }
      if (!isInside(realRoot, real)) {
        throw new PathRefusedError(`"${input}" leads outside the repository (through a symlink), so it is refused.`);
      }
      break;
    }
    const parent = posix.dirname(probe);
    if (parent === probe || !isInside(realRoot, parent)) break;
    probe = parent;
  }
  return { relative, absolute };
}

/**
 * True when every folder leading to `relative` (a normalized path) is a real folder, never a
 * symlink or a file: only then is the entry at `relative` part of the workspace's tree (the
 * tree never looks through a symlink), and only then may it be removed or replaced.
 */
export async function isBelowRealFolders(
  root: string,
  relative: string,
  /** Folders already looked at, for many paths of one unchanging tree (a snapshot). */
  known?: Map<string, boolean>,
): Promise<boolean> {
  const parts = relative.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const folder = parts.slice(0, depth).join('/');
    let real = known?.get(folder);
    if (real === undefined) {
      real = (await lstat(posix.join(root, folder)).catch(() => null))?.isDirectory() ?? false;
      known?.set(folder, real);
    }
    if (!real) return false;
  }
  return true;
}

/**
 * Makes every folder leading to `relative` (a normalized path) a real folder: a file or symlink
 * in the way is removed (a tree that holds `relative` cannot hold them), and a symlink is never
 * followed, so nothing is ever created outside `root`.
 */
export async function makeRealFolders(root: string, relative: string): Promise<void> {
  const parts = relative.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const folder = posix.join(root, ...parts.slice(0, depth));
    const stats = await lstat(folder).catch(() => null);
    if (stats?.isDirectory()) continue;
    if (stats) await unlink(folder);
    await mkdir(folder);
  }
}
