// What the cluster's Temporal server and PostgreSQL did during a bench point, to say where they
// saturate: the server's own Prometheus metrics (persistence requests and their latency) and the
// CPU time of both processes (from /proc: the server, and PostgreSQL's postmaster with its backends).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporalServerPid } from '../deploy/cluster/clusterLauncher.js';
import { clusterAddresses, clusterPaths } from '../deploy/cluster/clusterSettings.js';
import { readServerMetrics } from '../deploy/cluster/serverMetrics.js';
import { sumOf } from '../src/temporal/prometheusText.js';

export interface ServerLoadSample {
  at: number;
  persistenceRequests: number;
  persistenceLatencySeconds: number;
  persistenceLatencyCount: number;
  cpuSeconds: { temporal: number; postgresql: number };
}

export interface ServerLoad {
  persistenceRequestsPerSecond: number;
  /** Mean latency of a persistence request (ms). */
  persistenceLatencyMs: number;
  /** Cores busy on average: the Temporal server, and PostgreSQL. */
  temporalCores: number;
  postgresqlCores: number;
}

const clockTicksPerSecond = 100;

export async function sampleServerLoad(): Promise<ServerLoadSample> {
  const samples = await readServerMetrics(clusterAddresses.serverMetrics);
  return {
    at: Date.now(),
    persistenceRequests: sumOf(samples, 'persistence_requests'),
    persistenceLatencySeconds: sumOf(samples, 'persistence_latency_sum'),
    persistenceLatencyCount: sumOf(samples, 'persistence_latency_count'),
    cpuSeconds: { temporal: cpuOf(temporalServerPid()), postgresql: postgresqlCpu() },
  };
}

export function serverLoadBetween(before: ServerLoadSample, after: ServerLoadSample): ServerLoad {
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  const count = after.persistenceLatencyCount - before.persistenceLatencyCount;
  return {
    persistenceRequestsPerSecond: (after.persistenceRequests - before.persistenceRequests) / seconds,
    persistenceLatencyMs:
      count > 0 ? ((after.persistenceLatencySeconds - before.persistenceLatencySeconds) / count) * 1000 : 0,
    temporalCores: (after.cpuSeconds.temporal - before.cpuSeconds.temporal) / seconds,
    postgresqlCores: (after.cpuSeconds.postgresql - before.cpuSeconds.postgresql) / seconds,
  };
}

/** utime + stime of a process, in seconds (0 when it is gone). */
function cpuOf(pid: number | null): number {
  if (!pid) return 0;
  const stat = statOf(pid);
  return stat ? (stat.utime + stat.stime) / clockTicksPerSecond : 0;
}

/** The cluster's postmaster (its data folder's postmaster.pid) and every backend it started. */
function postgresqlCpu(): number {
  const postmaster = Number(
    readFileSync(join(clusterPaths().postgresqlData, 'postmaster.pid'), 'utf8').split('\n')[0] ?? 0,
  );
  let seconds = cpuOf(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat?.ppid === postmaster) seconds += (stat.utime + stat.stime) / clockTicksPerSecond;
  }
  return seconds;
}

function statOf(pid: number): { ppid: number; utime: number; stime: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]) };
  } catch {
    return null;
  }
}
