// CPU time a process spent, all its threads together, as the kernel counts it (/proc, Linux):
// on a machine with few cores, the CPU that the server and the worker each burn per iteration is
// what their latency is made of.
import { readFileSync } from 'node:fs';

/** User + system CPU milliseconds the process has used so far (10 ms ticks). */
export function processCpuMs(pid: number): number {
  // The fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`no CPU times in /proc/${pid}/stat`);
  return ticks * 10;
}

/** Runs `run`: its result, and the CPU milliseconds each of the processes used meanwhile. */
export async function measureCpu<T>(
  processIds: number[],
  run: () => Promise<T>,
): Promise<{ result: T; cpuMs: number[] }> {
  const before = processIds.map(processCpuMs);
  const result = await run();
  return { result, cpuMs: processIds.map((pid, index) => processCpuMs(pid) - (before[index] as number)) };
}
