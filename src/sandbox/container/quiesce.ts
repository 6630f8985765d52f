// No host-side operation on a workspace folder while a process of its sandbox can run. The
// worker reads, writes, hashes, chmods and removes the bind-mounted folder by path; a process of
// the sandbox that outlived its command (it killed its own command wrapper, so the per-command
// stop never found it) could swap a folder for a symlink to a host path between the worker's
// check and its use. So before the worker touches the folder, every process of the sandbox user
// in the container is killed, and the worker waits until none is left that could still be in a
// system call; the container itself (its init and its idle main process, other users) stays up.
//
// Why this is enough: processes of the sandbox user come only from `docker exec` (the container's
// main process runs as nobody), and none of them can change its user (no capabilities,
// no-new-privileges). kill(-1, SIGKILL) reaches all of them at once (a fork that races it fails,
// its parent having a fatal signal pending), and a process that is dead or a zombie makes no more
// system calls. Until the next command starts, nothing but the worker changes the folder, so a
// check on the folder (paths.ts resolveInsideWorkspace, the lstat walks) still holds when it is used.
import type Docker from 'dockerode';
import type { SandboxUser } from './container.js';
import { execToEnd } from './exec.js';

/** Raised when processes of the sandbox user are still there after being killed (stuck in the kernel). */
export class SandboxNotQuietError extends Error {}

// Kill every process of this user (but this one), then wait until each is gone or a zombie; exit 1
// if some are still there after about 5 s. Reads /proc/<pid>/status: a process that made itself
// non-dumpable has its /proc folder owned by root, but its status still names its user.
const script = String.raw`
kill 'KILL', -1;
for my $round (1 .. 2500) {
  my $alive = 0;
  opendir(my $proc, '/proc') or exit 2;
  for my $pid (readdir $proc) {
    next unless $pid =~ /^\d+$/ && $pid != $$;
    open(my $fh, '<', "/proc/$pid/status") or next;
    local $/;
    my $status = <$fh>;
    close $fh;
    next unless defined $status && $status =~ /^Uid:\s+(\d+)\s+(\d+)/m && ($1 == $< || $2 == $<);
    next if $status =~ /^State:\s+[ZX]/m;
    $alive++;
  }
  closedir $proc;
  exit 0 unless $alive;
  kill 'KILL', -1 if $round % 50 == 0;
  select(undef, undef, undef, 0.002);
}
exit 1;
`;

/** Kills every process of the sandbox user in the container and returns once none can run any more. */
export async function stopSandboxUserProcesses(container: Docker.Container, user: SandboxUser): Promise<void> {
  const { exitCode } = await execToEnd(container, user, ['perl', '-e', script]);
  if (exitCode !== 0) {
    throw new SandboxNotQuietError(
      `processes of the sandbox user could not be stopped (exit code ${exitCode}): the workspace is not touched while they may run`,
    );
  }
}
