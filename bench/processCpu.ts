// CPU time a process spent, all its threads together, as the kernel counts it (/proc, Linux):
// on a machine with few cores, the CPU that the server and the worker each burn per iteration is
// what their latency is made of.
import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU milliseconds the process has used so far (10 ms ticks). */
export function processCpuMs(pid: number): number {
  // The fields after the command name (which may hold spaces) start at field 3: utime is 14, stime 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`no CPU times in /proc/${pid}/stat`);
  return ticks * 10;
}

/** Starts counting: the returned function gives the CPU milliseconds each process used since. */
export function countCpu(processIds: number[]): () => number[] {
  const before = processIds.map(processCpuMs);
  return () => processIds.map((pid, index) => processCpuMs(pid) - (before[index] as number));
}

/** The Temporal dev server (`temporal server start-dev`) serving `address`'s port, if one runs here. */
export function devServerProcessId(address: string): number | null {
  const port = address.split(':').pop();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // it ended meanwhile
    }
    if (args.includes('start-dev') && args[args.indexOf('--port') + 1] === port) return Number(entry);
  }
  return null;
}
