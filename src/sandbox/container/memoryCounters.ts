// The sandbox container's memory counters, read from its own cgroup (v2 or v1) from inside it:
// how many times the kernel's OOM killer struck, and the peak use. A test run that fails is
// checked, so that an out-of-memory end is named in words instead of "exit 137".
import type Docker from 'dockerode';
import type { SandboxUser } from './container.js';
import { demultiplexed, execToEnd } from './exec.js';

export interface MemoryCounters {
  /** Processes the OOM killer has killed in this container since it started. */
  oomKills: number;
  /** The most memory the container has used (page cache included), when the kernel says. */
  peakBytes: number | null;
}

// cgroup v2: memory.events and memory.peak; v1: memory.oom_control and memory.max_usage_in_bytes.
const command = [
  'sh',
  '-c',
  'for f in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do [ -r $f ] && cat $f; done; ' +
    'for f in /sys/fs/cgroup/memory.peak /sys/fs/cgroup/memory/memory.max_usage_in_bytes; do [ -r $f ] && echo "peak $(cat $f)"; done; true',
];

export function parseMemoryCounters(text: string): MemoryCounters {
  const oomKills = Number(text.match(/^oom_kill (\d+)$/m)?.[1] ?? 0);
  const peak = text.match(/^peak (\d+)$/m)?.[1];
  return { oomKills, peakBytes: peak === undefined ? null : Number(peak) };
}

export async function readMemoryCounters(container: Docker.Container, user: SandboxUser): Promise<MemoryCounters> {
  const { output } = await execToEnd(container, user, command);
  return parseMemoryCounters(demultiplexed(output));
}

/** V8 stops with exit 134 when its heap (about half the container's memory) is full. */
export function heapExhausted(output: string, exitCode: number | null): boolean {
  return (
    exitCode !== 0 &&
    /JavaScript heap out of memory|Reached heap limit Allocation failed|FATAL ERROR: .*Allocation failed/.test(output)
  );
}
