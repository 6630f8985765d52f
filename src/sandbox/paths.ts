// Every path the model gives is confined to the workspace. Paths are untrusted input: absolute
// paths, "..", and symlinks (from the repository or made by a command) that lead outside are
// refused with an explanation the model can act on.
import { realpath, lstat } from 'node:fs/promises';
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
