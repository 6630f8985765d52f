// The allow-list of repository roots (DURABLE_DEBUGGER_REPO_ROOTS): a run's `repo` must lie
// under one of them. Paths are compared after resolving symlinks, so neither `..` nor a
// symlink can lead out of a root.
import { realpath } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

/** Raised for a repository outside every allowed root; the message names the roots. */
export class RepoOutsideRootsError extends Error {}

/** The real path of `path`, or its plain absolute form when it does not exist. */
async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Checks `repo` against the allowed roots (null: unrestricted) and returns the real path to read
 * it from, so that what is read is what was checked. A path outside the roots is refused before
 * anything else is said about it (not even whether it exists).
 */
export async function confineToRepoRoots(repo: string, roots: readonly string[] | null): Promise<string> {
  const real = await realOrResolved(repo);
  if (roots === null) return resolve(repo);
  const realRoots = await Promise.all(roots.map(realOrResolved));
  if (realRoots.some((root) => isInside(real, root))) return real;
  throw new RepoOutsideRootsError(
    `repo: "${repo}" is outside the allowed repository roots (${roots.join(', ')}); ` +
      'put the repository under one of them, or ask whoever runs the workers to add its folder to DURABLE_DEBUGGER_REPO_ROOTS',
  );
}
