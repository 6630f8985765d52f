// 8. The cluster point: runs per minute through the cluster of `npm run cluster` (Temporal's server
// on PostgreSQL) with 1, 2 and then 3 `durable-debugger worker` hosts, each with a data folder of
// its own and the content store in PostgreSQL, the model a scripted fake answering every call
// after seconds, as real models do. Each host holds `sandboxesPerHost` sandboxes at once (issue 26),
// so one host saturates and the others take what it cannot: the ratio of the points, measured in
// the same bench run, is the scaling.
// Skipped, with a line saying why, when no cluster runs and its binaries are not built (building
// them takes minutes: `npm run cluster` does it); a built but stopped cluster is started, and stopped after.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectClient, startDebugRun } from '../src/client.js';
import type { DebugReport } from '../src/agent/report.js';
import { clusterStatus, startCluster, stopCluster } from '../deploy/cluster/clusterLauncher.js';
import { clusterAddresses, clusterDatabaseUrl, clusterPaths } from '../deploy/cluster/clusterSettings.js';
import { FakeAnthropicApi } from '../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../src/demo/fixtures.js';
import { lastPreparedHost } from '../harness/reliability/scenarios.js';
import { startWorkerProcess, type WorkerProcess } from '../harness/devStack.js';
import { listFilesStep, repeatedStep } from './benchStack.js';
import { sampleServerLoad, serverLoadBetween, type ServerLoad } from './serverLoad.js';
import { number } from './stats.js';

// Real runs take 10 to 30 iterations of 3 to 10 s model calls: the model's time dominates a run,
// as it does here. 12 runs fill the hosts' room evenly: 6, 3 and 2 rounds of 2, 4 and 6 at once.
export const clusterBench = {
  modelLatencyMs: 4_000,
  runsPerBatch: 12,
  iterationsPerRun: 10,
  sandboxesPerHost: 2,
  hostCounts: [1, 2, 3],
} as const;

export interface ClusterPoint {
  hosts: number;
  runs: number;
  seconds: number;
  runsPerMinute: number;
  /** How many runs' sandboxes each host held. */
  sandboxesPerHost: Record<string, number>;
  /** What the Temporal server and PostgreSQL did meanwhile (their own metrics and CPU). */
  server: ServerLoad;
}

export type ClusterThroughputResult =
  | { skipped: string }
  | { address: string; modelLatencyMs: number; iterationsPerRun: number; points: ClusterPoint[]; scaling: number };

export async function measureClusterThroughput(progress: (line: string) => void): Promise<ClusterThroughputResult> {
  // The bench needs the Temporal server and PostgreSQL, not the Web UI server.
  const running = clusterStatus()
    .filter((part) => part.part !== 'uiServer')
    .every((part) => part.running);
  const { tools } = clusterPaths();
  const built = [tools.temporalServer, tools.schemaTool, tools.uiServer].every((file) => existsSync(file));
  if (!running && !built)
    return {
      skipped:
        'no cluster is running and its binaries are not built (`npm run cluster` builds and starts it, then `npm run bench -- cluster`)',
    };
  if (!running) await startCluster((line) => progress(`cluster: ${line}`));
  const folder = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-cluster-'));
  const repo = join(folder, 'bench_cluster');
  await cp((await loadFixture('01_off_by_one')).path, repo, { recursive: true });
  const fake = new FakeAnthropicApi({
    scripts: { bench_cluster: repeatedStep(listFilesStep, clusterBench.iterationsPerRun + 5) },
    latencyMs: clusterBench.modelLatencyMs,
  });
  await fake.start();
  const client = await connectClient(clusterAddresses.temporal, 'default');
  try {
    const points: ClusterPoint[] = [];
    for (const hosts of clusterBench.hostCounts) {
      progress(`cluster: ${clusterBench.runsPerBatch} runs with ${hosts} worker host(s)…`);
      points.push(await measurePoint(client, fake.url, repo, folder, hosts));
    }
    const [one, , three] = points as [ClusterPoint, ClusterPoint, ClusterPoint];
    return {
      address: clusterAddresses.temporal,
      modelLatencyMs: clusterBench.modelLatencyMs,
      iterationsPerRun: clusterBench.iterationsPerRun,
      points,
      scaling: three.runsPerMinute / one.runsPerMinute,
    };
  } finally {
    await client.connection.close();
    await fake.stop();
    await rm(folder, { recursive: true, force: true });
    if (!running) await stopCluster();
  }
}

async function measurePoint(
  client: Awaited<ReturnType<typeof connectClient>>,
  fakeUrl: string,
  repo: string,
  folder: string,
  hosts: number,
): Promise<ClusterPoint> {
  // A task queue of this point alone: the other point's hosts, and anything else on the cluster, never take its tasks.
  const taskQueue = `durable-debugger-bench-${process.pid}-${hosts}`;
  const workers: WorkerProcess[] = [];
  try {
    for (let index = 1; index <= hosts; index++) {
      const hostId = `bench-${hosts}-${index}`;
      workers.push(
        await startWorkerProcess(
          { address: clusterAddresses.temporal, home: join(folder, hostId) },
          {
            taskQueue,
            hostId,
            fakeUrl,
            env: {
              DURABLE_DEBUGGER_STORE: clusterDatabaseUrl(),
              DURABLE_DEBUGGER_MAX_SANDBOXES: String(clusterBench.sandboxesPerHost),
            },
          },
        ),
      );
    }
    const started = Date.now();
    const loadBefore = await sampleServerLoad();
    const reports = await Promise.all(
      Array.from({ length: clusterBench.runsPerBatch }, async () => {
        const handle = await startDebugRun(client, {
          input: { repo, budgets: { maxIterations: clusterBench.iterationsPerRun } },
          taskQueue,
        });
        return { report: (await handle.result()) as DebugReport, handle };
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const server = serverLoadBetween(loadBefore, await sampleServerLoad());
    const short = reports.filter(({ report }) => report.iterations !== clusterBench.iterationsPerRun);
    if (short.length > 0)
      throw new Error(
        `cluster bench: ${short.length} runs did not do ${clusterBench.iterationsPerRun} iterations (${short[0]?.report.stopDetail})`,
      );
    const sandboxesPerHost: Record<string, number> = {};
    for (const { handle } of reports) {
      const holder = (await lastPreparedHost(handle)) ?? 'unknown';
      sandboxesPerHost[holder] = (sandboxesPerHost[holder] ?? 0) + 1;
    }
    return {
      hosts,
      runs: reports.length,
      seconds,
      runsPerMinute: (reports.length / seconds) * 60,
      sandboxesPerHost,
      server,
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}

export function formatClusterThroughput(result: ClusterThroughputResult): string[] {
  if ('skipped' in result) return [`8. Cluster: skipped: ${result.skipped}.`];
  return [
    `8. Cluster (${result.address}, Temporal on PostgreSQL): ${clusterBench.runsPerBatch} runs of ${result.iterationsPerRun} iterations started together, ` +
      `the model answering after ${result.modelLatencyMs} ms; worker hosts with data folders of their own and room for ${clusterBench.sandboxesPerHost} sandboxes each, content store in PostgreSQL`,
    ...result.points.map(
      (point) =>
        `  ${point.hosts} host${point.hosts === 1 ? ' ' : 's'}: ${number(point.runsPerMinute)} runs/min (${point.runs} runs in ${number(point.seconds)} s; sandboxes per host: ` +
        `${Object.entries(point.sandboxesPerHost)
          .map(([host, count]) => `${host} ${count}`)
          .join(', ')}); ` +
        `Temporal server ${number(point.server.temporalCores, 2)} cores, PostgreSQL ${number(point.server.postgresqlCores, 2)} cores, ` +
        `${number(point.server.persistenceRequestsPerSecond)} persistence requests/s at ${number(point.server.persistenceLatencyMs, 1)} ms`,
    ),
    `  3 hosts vs 1: ${number(result.scaling, 2)}× the runs per minute (all hosts of this bench share one machine's cores and Docker engine).`,
  ];
}
