// The environment's installed Node tree where the installer puts it: each sandbox mounts a
// volume of its own over /workspace/node_modules (and each workspace member's), which Docker
// fills from the image's copy when the container is made. Writable for the tools' caches, gone
// with the container (removeContainer removes its volumes), and never part of the workspace
// folder: tree.ts leaves node_modules out of every listing, search, snapshot and patch, and on
// the host the folder stays an empty mount point.
import { lstat, mkdir, rm } from 'node:fs/promises';
import { posix } from 'node:path';
import { workspaceMountPoint } from './container.js';

/** A relative folder the sandbox may mount a volume at: ends in node_modules, with no other, no `..`. */
function isMountableFolder(folder: string): boolean {
  const parts = folder.split('/');
  return (
    parts.at(-1) === 'node_modules' &&
    parts.every(
      (part, index) =>
        part !== '' && part !== '.' && part !== '..' && (part !== 'node_modules' || index === parts.length - 1),
    ) &&
    /^[\w@.+/-]+$/.test(folder)
  );
}

/**
 * The container paths to mount the image's node_modules copies at, for the folders that can take
 * one now. Docker makes a missing mount point and resolves a symlink on the way inside the
 * container; so every folder above it must be a real folder of the workspace (a member the agent
 * removed, or made a symlink, gets none), and what stands at the mount point itself (ignored
 * content a command left) makes way for an empty folder. Run while no sandbox process runs.
 */
export async function prepareNodeModulesMounts(
  workspaceDir: string,
  folders: readonly string[] = [],
): Promise<string[]> {
  const targets: string[] = [];
  for (const folder of folders) {
    if (!isMountableFolder(folder)) continue;
    const parts = folder.split('/');
    let parentsAreFolders = true;
    for (let depth = 1; depth < parts.length; depth++) {
      const stats = await lstat(posix.join(workspaceDir, ...parts.slice(0, depth))).catch(() => null);
      if (!stats?.isDirectory()) {
        parentsAreFolders = false;
        break;
      }
    }
    if (!parentsAreFolders) continue;
    const mountPoint = posix.join(workspaceDir, folder);
    const stats = await lstat(mountPoint).catch(() => null);
    if (stats && !stats.isDirectory()) await rm(mountPoint, { force: true });
    if (!stats?.isDirectory()) await mkdir(mountPoint);
    targets.push(`${workspaceMountPoint}/${folder}`);
  }
  return targets;
}

/**
 * Folders outside the workspace (under /opt: a warm build cache such as Rust's target folder) that
 * each sandbox gets a writable copy of, filled from the image as node_modules are.
 */
export function writableCopyMounts(folders: readonly string[] = []): string[] {
  return folders.filter(
    (folder) => /^\/opt(\/[\w.+-]+)+$/.test(folder) && !folder.split('/').some((part) => part === '.' || part === '..'),
  );
}
