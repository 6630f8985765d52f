// Commands in the sandbox can take permissions away from files they create (a test that leaves a
// `chmod 000` folder behind). The sandbox user owns those files, and a worker that is not root
// runs as that user: it gives itself access back before it reads or removes a workspace, so that
// hashing, rebuilding, patching and cleaning up never fail on them. (A root worker reads them anyway.)
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

export function isAccessError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EACCES' || code === 'EPERM';
}

/**
 * Gives the owner read, write and search access to every folder below `root` (and read access
 * to every file) that lacks it; never follows symlinks. Entries of other users are left as they are.
 */
export async function restoreOwnerAccess(root: string): Promise<void> {
  const visit = async (path: string): Promise<void> => {
    const stats = await lstat(path).catch(() => null);
    if (!stats || stats.isSymbolicLink()) return;
    if (stats.isDirectory()) {
      if ((stats.mode & 0o700) !== 0o700) await chmod(path, (stats.mode & 0o7777) | 0o700).catch(() => undefined);
      const names = await readdir(path).catch(() => [] as string[]);
      for (const name of names) await visit(join(path, name));
    } else if (stats.isFile() && (stats.mode & 0o600) !== 0o600) {
      await chmod(path, (stats.mode & 0o7777) | 0o600).catch(() => undefined);
    }
  };
  await visit(root);
}

/** Runs `work`; when it fails for lack of access below `root`, restores the owner's access and runs it once more. */
export async function withOwnerAccess<T>(root: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isAccessError(error)) throw error;
    await restoreOwnerAccess(root);
    return work();
  }
}

/** Removes a folder and everything in it, also what a command left without permissions. */
export async function removeFolder(path: string): Promise<void> {
  await withOwnerAccess(path, () => rm(path, { recursive: true, force: true }));
}
