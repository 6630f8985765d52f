// Commands in the sandbox can take permissions away from files they create (a test that leaves a
// `chmod 000` folder behind). The sandbox user owns those files, and a worker that is not root
// runs as that user: it gives itself access back before it reads or removes a workspace, so that
// hashing, rebuilding, patching and cleaning up never fail on them. (A root worker reads them anyway.)
// What root made (an environment build runs as root) such a worker removes through a container.
import { chmod, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { labels, projectLabel, removeContainer } from '../container/container.js';

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

/** A Docker engine and an image on it: how a worker that is not root removes what root made (an environment setup's files). */
export interface RootRemover {
  docker: Docker;
  image: string;
}

/**
 * Removes a folder and everything in it, also what a command left without permissions; with
 * `asRoot`, also what another user (root, in an environment build) left, through a short-lived
 * container: a worker that is not root cannot remove those itself.
 */
export async function removeFolder(path: string, asRoot?: RootRemover): Promise<void> {
  try {
    await withOwnerAccess(path, () => rm(path, { recursive: true, force: true }));
  } catch (error) {
    if (!asRoot || !isAccessError(error)) throw error;
    await removeContentsAsRoot(path, asRoot);
    await rm(path, { recursive: true, force: true });
  }
}

/** Empties `folder` as root in a container with nothing but it (no network, no capability but those to remove). */
async function removeContentsAsRoot(folder: string, { docker, image }: RootRemover): Promise<void> {
  const container = await docker.createContainer({
    Image: image,
    Cmd: ['sh', '-c', 'rm -rf -- /remove/..?* /remove/.[!.]* /remove/*'],
    User: '0:0',
    Labels: { [labels.project]: projectLabel, [labels.created]: new Date().toISOString() },
    HostConfig: {
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      CapAdd: ['DAC_OVERRIDE', 'FOWNER'],
      SecurityOpt: ['no-new-privileges'],
      Binds: [`${folder}:/remove:rw`],
      LogConfig: { Type: 'none', Config: {} },
    },
  });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    if (StatusCode !== 0) throw new Error(`removing ${folder} as root failed (exit code ${StatusCode})`);
  } finally {
    await removeContainer(docker, container.id);
  }
}
