// The reliability lab: every part in a process of its own, so that each can be killed for real.
// The embedded Temporal dev server on its database file (killed and restarted on the same file), workers
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
import { connectDocker, labels, listProjectContainers } from '../../src/sandbox/container.js';
import { ensureTemporalServer, portAnswers } from '../../src/temporal/embeddedServer.js';
import { FakeAnthropicApi, type FakeApiOptions } from '../../src/demo/fakeAnthropicApi.js';
import { freePort, startWorkerProcess, type WorkerProcess } from '../support/harness.js';

export const taskQueue = 'durable-debugger-reliability';

export class Lab {
  client!: Client;
  address!: string;
  home!: string;
  fake!: FakeAnthropicApi;
  private serverPid: number | null = null;
  private port = 0;
  private uiPort = 0;
  private readonly workers = new Map<string, WorkerProcess>();

  async start(fakeOptions: FakeApiOptions): Promise<void> {
    this.home = await mkdtemp(join(tmpdir(), 'durable-debugger-reliability-'));
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
      await connectDocker().getContainer(container.Id).remove({ force: true }).catch(() => undefined);
    }
    await this.client?.connection.close();
    await this.fake?.stop();
    await this.killServer();
    await rm(this.home, { recursive: true, force: true });
  }

  /** The embedded dev server, as our commands start it: on a database file that survives its restarts. */
  async startServer(): Promise<void> {
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
    if (this.serverPid === null) return;
    process.kill(this.serverPid, 'SIGKILL');
    this.serverPid = null;
    while (await portAnswers('127.0.0.1', this.port)) await sleep(100);
  }

  /** A worker process; the same name means the same host id and workspace folder. */
  async startWorker(name: string): Promise<void> {
    const worker = await startWorkerProcess(this, {
      taskQueue,
      hostId: `reliability-${name}`,
      fakeUrl: this.fake.url,
      env: { ANTHROPIC_TIMEOUT_MS: '5000' },
    });
    this.workers.set(name, worker);
  }

  /** Where a worker of this lab keeps its workspace folders. */
  workspaceRootOf(name: string): string {
    return join(this.home, 'workspaces', `reliability-${name}`);
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
    return containers.filter((container) => container.Labels[labels.scope] === `${this.address}/default`);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
