// Docker's build API caps a RUN step's memory and CPU (`memory`, `cpuquota`) but has no pids limit:
// a fork bomb in a Dockerfile would fill the host's process table. What it has is `cgroupparent`:
// each RUN step's container is made inside that cgroup, and a pids.max set on the parent holds for
// all of them. That works where Docker manages cgroups itself (the cgroupfs driver) and this worker
// sees the same cgroup tree Docker does and may write it (root on the host, or a worker container
// given /sys/fs/cgroup). Elsewhere (the systemd driver, a read-only cgroup fs) the build still runs,
// with memory and CPU capped, and its log says that the pids cap is missing.
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';

const cgroupRoot = '/sys/fs/cgroup';

export interface BuildCgroup {
  /** The cgroup parent for the build API (`/name`), or null when none could be made. */
  parent: string | null;
  /** Why there is none, for the build's log. */
  note?: string;
  /** Removes the cgroup (and the empty ones Docker made beside it in other controllers). */
  close(): Promise<void>;
}

/** A cgroup `name` whose processes, all together, may be at most `pidsMax`. */
export async function openBuildCgroup(docker: Docker, name: string, pidsMax: number): Promise<BuildCgroup> {
  const none = (why: string): BuildCgroup => ({
    parent: null,
    note: `the Dockerfile's RUN steps have no pids limit on this host (${why}); memory and CPU are capped`,
    close: async () => undefined,
  });
  const info = (await docker.info().catch(() => null)) as { CgroupDriver?: string; CgroupVersion?: string } | null;
  if (info?.CgroupDriver !== 'cgroupfs')
    return none(`Docker's cgroup driver is ${info?.CgroupDriver ?? 'unknown'}, not cgroupfs`);
  const unified = info.CgroupVersion === '2';
  const pidsFolder = unified ? join(cgroupRoot, name) : join(cgroupRoot, 'pids', name);
  try {
    if (unified) {
      const controllers = await readFile(join(cgroupRoot, 'cgroup.subtree_control'), 'utf8');
      if (!controllers.split(/\s+/).includes('pids'))
        return none('the pids controller is not enabled for child cgroups');
    }
    await mkdir(pidsFolder);
    await writeFile(join(pidsFolder, 'pids.max'), String(pidsMax));
  } catch (error) {
    await rmdir(pidsFolder).catch(() => undefined);
    return none(`the cgroup ${pidsFolder} cannot be made: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return {
    parent: `/${name}`,
    async close() {
      // Docker makes the parent in every v1 controller it uses; each is empty once the build's containers are gone.
      const folders = unified
        ? [pidsFolder]
        : (await readdir(cgroupRoot).catch(() => [] as string[])).map((controller) =>
            join(cgroupRoot, controller, name),
          );
      for (const folder of folders) await rmdir(folder).catch(() => undefined);
    },
  };
}
