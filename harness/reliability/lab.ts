// The reliability lab: every part in a process of its own, so that each can be killed for real.
// The embedded Temporal dev server on its database file (killed and restarted on the same file),
// or with `cluster`, the cluster of `npm run cluster` (Temporal's server on PostgreSQL, whose
// server process is killed and whose PostgreSQL is restarted), where each worker host has a data
// folder of its own and the content store is in PostgreSQL (nothing shared but the network). Workers
// started with the real `durable-debugger worker` command (killed with SIGKILL), the fake
// Anthropic API in this process (faults on demand), and the real Docker engine.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { connectClient, startDebugRun } from '../../src/client.js';
import type { DebugInputJson } from '../../src/agent/input.js';
import type { DebugReport } from '../../src/agent/report.js';
import { loadConfig } from '../../src/config.js';
import { connectDocker, labels, listProjectContainers } from '../../src/sandbox/container/container.js';
import { ensureTemporalServer, portAnswers } from '../../src/temporal/embeddedServer.js';
import { FakeAnthropicApi, type FakeApiOptions } from '../../src/demo/fakeAnthropicApi.js';
import {
  clusterStatus,
  startCluster,
  startPostgresql,
  startTemporalServer,
  stopPostgresql,
  temporalServerPid,
} from '../../deploy/cluster/clusterLauncher.js';
import { clusterAddresses, clusterDatabaseUrl, clusterPorts } from '../../deploy/cluster/clusterSettings.js';
import { freePort, startWorkerProcess, type WorkerProcess } from '../devStack.js';

/** Of this lab alone: a cluster is shared with whatever else runs on it. */
export const taskQueue = `durable-debugger-reliability-${process.pid}`;

export class Lab {
  client!: Client;
  address!: string;
  home!: string;
  fake!: FakeAnthropicApi;
  private serverPid: number | null = null;
  private port = 0;
  private uiPort = 0;
  private readonly workers = new Map<string, WorkerProcess>();
  /** The hosts this lab has started (their containers are the lab's to count). */
  private readonly hostIds = new Set<string>();
  /** True: on the cluster of `npm run cluster`, hosts sharing nothing; false: the embedded dev server. */
  readonly onCluster: boolean;

  constructor(options: { cluster?: boolean } = {}) {
    this.onCluster = Boolean(options.cluster);
  }

  async start(fakeOptions: FakeApiOptions): Promise<void> {
    this.home = await mkdtemp(join(tmpdir(), 'durable-debugger-reliability-'));
    if (this.onCluster) {
      // A cluster whose Temporal server and PostgreSQL run is used as it is (the lab needs no Web UI),
      // and left running; otherwise `npm run cluster`'s start builds and starts what is missing.
      const needed = clusterStatus().filter((part) => part.part !== 'uiServer');
      if (!needed.every((part) => part.running)) await startCluster((line) => console.log(`cluster: ${line}`));
      this.address = clusterAddresses.temporal;
      this.port = clusterPorts.frontendGrpc;
      this.client = await connectClient(this.address, 'default');
      this.fake = new FakeAnthropicApi(fakeOptions);
      await this.fake.start();
      return;
    }
    this.port = await freePort();
    this.uiPort = await freePort();
    this.address = `127.0.0.1:${this.port}`;
    await this.startServer();
    this.client = await connectClient(this.address, 'default');
    this.fake = new FakeAnthropicApi(fakeOptions);
    await this.fake.start();
  }

  async stop(): Promise<void> {
    for (const name of [...this.workers.keys()]) await this.stopWorker(name);
    // Whatever a failed scenario left behind (its leaks are already counted).
    for (const container of await this.leakedContainerInfos().catch(() => [])) {
      await connectDocker()
        .getContainer(container.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
    await this.client?.connection.close();
    await this.fake?.stop();
    // The cluster stays as the lab found it: running.
    if (this.onCluster) await this.startServer();
    else await this.killServer();
    await rm(this.home, { recursive: true, force: true });
  }

  /** The embedded dev server, as our commands start it: on a database file that survives its restarts. */
  async startServer(): Promise<void> {
    if (this.onCluster) return startTemporalServer();
    const config = loadConfig({
      ...process.env,
      TEMPORAL_ADDRESS: '',
      DURABLE_DEBUGGER_HOME: this.home,
      TEMPORAL_PORT: String(this.port),
      TEMPORAL_UI_PORT: String(this.uiPort),
    });
    const server = await ensureTemporalServer(config);
    this.serverPid = server.pid;
  }

  async killServer(): Promise<void> {
    if (this.onCluster) this.serverPid = temporalServerPid();
    if (this.serverPid === null) return;
    process.kill(this.serverPid, 'SIGKILL');
    this.serverPid = null;
    while (await portAnswers('127.0.0.1', this.port)) await sleep(100);
  }

  /** The cluster's PostgreSQL (Temporal's persistence and the content store) stopped and started again; returns how long it was down. */
  async restartPostgres(): Promise<number> {
    if (!this.onCluster)
      throw new Error('PostgreSQL is restarted on the cluster only (npm run reliability -- --cluster)');
    const started = Date.now();
    stopPostgresql();
    await sleep(2_000);
    await startPostgresql();
    return Date.now() - started;
  }

  /** A worker process; the same name means the same host id and workspace folder. */
  async startWorker(name: string): Promise<void> {
    const hostId = `reliability-${name}`;
    // On the cluster, each host has a data folder of its own and the content store is PostgreSQL.
    const place = this.onCluster ? { address: this.address, home: this.hostHome(name) } : this;
    const worker = await startWorkerProcess(place, {
      taskQueue,
      hostId,
      fakeUrl: this.fake.url,
      env: {
        ANTHROPIC_TIMEOUT_MS: '5000',
        ...(this.onCluster ? { DURABLE_DEBUGGER_STORE: clusterDatabaseUrl() } : {}),
      },
    });
    this.hostIds.add(hostId);
    this.workers.set(name, worker);
  }

  private hostHome(name: string): string {
    return join(this.home, 'hosts', name);
  }

  /** Where a worker of this lab keeps its workspace folders. */
  workspaceRootOf(name: string): string {
    return join(this.onCluster ? this.hostHome(name) : this.home, 'workspaces', `reliability-${name}`);
  }

  async killWorker(name: string): Promise<void> {
    await this.workers.get(name)?.kill();
    this.workers.delete(name);
  }

  async stopWorker(name: string): Promise<void> {
    await this.workers.get(name)?.stop();
    this.workers.delete(name);
  }

  async startRun(input: DebugInputJson, workflowId: string): Promise<WorkflowHandle> {
    return startDebugRun(this.client, { input, taskQueue, workflowId });
  }

  /** Waits for a run's report, riding out a server that is down for a while. */
  async reportOf(handle: WorkflowHandle, timeoutMs = 300_000): Promise<DebugReport> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return (await handle.result()) as DebugReport;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        const name = (error as Error).name;
        if (name === 'WorkflowFailedError') throw error;
        await sleep(1_000);
      }
    }
  }

  /** Containers of this lab's runs that are still there. */
  async leakedContainers(): Promise<string[]> {
    return (await this.leakedContainerInfos()).map((container) => container.Names[0] ?? container.Id);
  }

  private async leakedContainerInfos() {
    const containers = await listProjectContainers(connectDocker());
    return containers.filter(
      (container) =>
        container.Labels[labels.scope] === `${this.address}/default` &&
        // The cluster is shared: only containers of this lab's hosts count.
        (!this.onCluster || this.hostIds.has(container.Labels[labels.host] ?? '')),
    );
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
