// The integration-test harness: a real Temporal dev server (the Temporal CLI binary, started
// by @temporalio/testing), real Docker, and workers whose model client talks real HTTP to the
// fake Anthropic API.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { DebugInputJson } from '../src/agent/input.js';
import type { DebugReport } from '../src/agent/report.js';
import { startDebugRun } from '../src/client.js';
import { loadConfig, projectRoot, type Config } from '../src/config.js';
import { createModelClient } from '../src/model/anthropic.js';
import { modelEndpointId } from '../src/model/endpoint.js';
import { connectDocker, labels, listProjectContainers } from '../src/sandbox/container/container.js';
import { temporalCliPath } from '../src/temporal/embeddedServer.js';
import { devServerFlags } from '../src/temporal/serverSettings.js';
import { installQuietRuntime, startWorker, type RunningWorker, type WorkerOptions } from '../src/worker.js';
import { searchAttributes } from '../src/temporal/definitions.js';
import { FakeAnthropicApi, type FakeApiOptions } from '../src/demo/fakeAnthropicApi.js';
import { checkoutCli } from './checkoutCli.js';
import { freePort } from '../src/freePort.js';

export interface TestServer {
  env: TestWorkflowEnvironment;
  client: Client;
  address: string;
  /** The server's Prometheus metrics (its latency histograms), when started with `metrics`. */
  metricsUrl: string | null;
  /** The server's process (the benchmarks count its CPU); null where /proc cannot tell. */
  processId: number | null;
  /** A private data folder (content store, workspaces) removed by stop(). */
  home: string;
  config(overrides?: Record<string, string>): Config;
  stop(): Promise<void>;
}

/**
 * `persistent`: keep the server's database in a file (in `home`), as the embedded server does.
 * `extraArgs`: dev server flags instead of the product's dynamic config (src/temporal/serverSettings.ts).
 * `metrics`: serve the server's metrics on a known port (the benchmarks read its latency histograms),
 * or on this port. `port`: the frontend's port (default: a free one).
 */
export async function startTestServer(
  options: {
    uiPort?: number;
    persistent?: boolean;
    extraArgs?: string[];
    metrics?: boolean | number;
    port?: number;
    /** Chooses the server's port for each attempt (tests take the first to see the start tried again). */
    choosePort?: () => Promise<number>;
  } = {},
): Promise<TestServer> {
  installQuietRuntime();
  const base = loadConfig();
  const home = await mkdtemp(join(tmpdir(), 'durable-debugger-test-'));
  // The server's ports are chosen below the kernel's ephemeral range (src/freePort.ts), but the dev
  // server picks its internal ones in it, where the suite's outgoing connections draw theirs: when
  // one was taken before the server bound it ("bind: address already in use"), the start fails and
  // is tried again on new ports, unless the caller chose them.
  const attempts = options.port || typeof options.metrics === 'number' ? 1 : 3;
  let metricsPort: number | null = null;
  let env: TestWorkflowEnvironment | undefined;
  for (let attempt = 1; !env; attempt++) {
    const port = options.port ?? (await (options.choosePort ?? freePort)());
    metricsPort = typeof options.metrics === 'number' ? options.metrics : options.metrics ? await freePort() : null;
    try {
      env = await TestWorkflowEnvironment.createLocal({
        server: {
          executable: { type: 'existing-path', path: temporalCliPath(base) },
          searchAttributes: Object.values(searchAttributes),
          ip: '127.0.0.1',
          port,
          ...(options.persistent ? { dbFilename: join(home, 'temporal.db') } : {}),
          ...(options.uiPort ? { ui: true, uiPort: options.uiPort } : {}),
          extraArgs: [
            ...(options.uiPort ? ['--ui-disable-news-fetch'] : []),
            ...(metricsPort ? ['--metrics-port', String(metricsPort)] : []),
            ...(options.extraArgs ?? devServerFlags({ databaseFile: Boolean(options.persistent) })),
          ],
        },
      });
    } catch (error) {
      if (attempt < attempts && /Failed to start ephemeral server/.test(String(error))) continue;
      await rm(home, { recursive: true, force: true });
      throw error;
    }
  }
  return {
    env,
    client: env.client,
    address: env.address,
    metricsUrl: metricsPort ? `http://127.0.0.1:${metricsPort}/metrics` : null,
    processId: devServerProcessId(env.address),
    home,
    config: (overrides = {}) =>
      loadConfig({
        ...process.env,
        DURABLE_DEBUGGER_HOME: home,
        TEMPORAL_ADDRESS: env.address,
        ANTHROPIC_API_KEY: '',
        ...overrides,
      }),
    async stop() {
      await env.teardown();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/** The `temporal server start-dev` process serving `address`'s port (the SDK does not say which it started). */
function devServerProcessId(address: string): number | null {
  const port = address.split(':').pop();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null; // not Linux
  }
  for (const entry of entries) {
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

let queueCounter = 0;
export function uniqueTaskQueue(name: string): string {
  queueCounter += 1;
  return `test-${name}-${process.pid}-${queueCounter}`;
}

export interface TestWorker {
  worker: RunningWorker;
  fake: FakeAnthropicApi;
  taskQueue: string;
  stop(): Promise<void>;
}

/** A worker on its own task queue whose model is the fake API. */
export async function startTestWorker(
  server: TestServer,
  options: {
    fake: FakeApiOptions | FakeAnthropicApi;
    taskQueue?: string;
    configOverrides?: Record<string, string>;
    timeoutMs?: number;
    apiKey?: string;
    onTranscript?: WorkerOptions['onTranscript'];
    onToolRun?: WorkerOptions['onToolRun'];
    onModelCall?: WorkerOptions['onModelCall'];
    cacheConversations?: boolean;
  },
): Promise<TestWorker> {
  const fake = options.fake instanceof FakeAnthropicApi ? options.fake : new FakeAnthropicApi(options.fake);
  const ownsFake = !(options.fake instanceof FakeAnthropicApi);
  if (ownsFake) await fake.start();
  const taskQueue = options.taskQueue ?? uniqueTaskQueue('run');
  const apiKey = options.apiKey ?? 'test-key';
  const worker = await startWorker({
    config: server.config(options.configOverrides),
    address: server.address,
    anthropic: createModelClient({ apiKey, baseURL: fake.url, timeoutMs: options.timeoutMs ?? 30_000 }),
    modelEndpoint: modelEndpointId({ apiKey, baseURL: fake.url }) as string,
    describeAnswerer: () => 'scripted responses (fake Anthropic API)',
    taskQueue,
    onTranscript: options.onTranscript,
    onToolRun: options.onToolRun,
    onModelCall: options.onModelCall,
    cacheConversations: options.cacheConversations,
  });
  return {
    worker,
    fake,
    taskQueue,
    async stop() {
      await worker.shutdown();
      if (ownsFake) await fake.stop();
    },
  };
}

export async function runToReport(
  server: TestServer,
  taskQueue: string,
  input: DebugInputJson,
  workflowId?: string,
): Promise<{ report: DebugReport; handle: WorkflowHandle }> {
  const handle = await startDebugRun(server.client, { input, taskQueue, workflowId });
  const report = (await handle.result()) as DebugReport;
  return { report, handle };
}

/** Containers with the project's label that belong to this test server. */
export async function containersOf(server: TestServer): Promise<number> {
  const containers = await listProjectContainers(connectDocker());
  return containers.filter((container) => container.Labels[labels.scope]?.startsWith(server.address)).length;
}

/** What `script` prints in a container of `image`, without network. */
export async function inImage(image: string, script: string): Promise<string> {
  const args = ['run', '--rm', '--network', 'none', '--entrypoint', 'sh', image, '-c', script];
  return (await promisify(execFile)('docker', args)).stdout;
}

export { freePort };

export interface WorkerProcess {
  hostId: string;
  child: ChildProcess;
  /** Everything the process printed. */
  output(): string;
  /** SIGKILL: the worker dies mid-flight, as on a crash or a lost machine. */
  kill(): Promise<void>;
  /** SIGTERM: a clean shutdown. */
  stop(): Promise<void>;
}

/**
 * A worker in a child process, started with the real `durable-debugger worker` command, on
 * `taskQueue`, with its own host id and workspace root (the content store is the server's,
 * shared like a volume), whose model is the fake API at `fakeUrl` (reached as a gateway).
 */
export async function startWorkerProcess(
  server: { address: string; home: string },
  options: {
    taskQueue: string;
    hostId: string;
    fakeUrl: string;
    env?: Record<string, string>;
    /** Runs the worker as this user (the test must run as root to use it). */
    user?: { uid: number; gid: number };
  },
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...checkoutCli, 'worker'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      DURABLE_DEBUGGER_HOME: server.home,
      DURABLE_DEBUGGER_WORKSPACES: join(server.home, 'workspaces', options.hostId),
      DURABLE_DEBUGGER_HOST_ID: options.hostId,
      DURABLE_DEBUGGER_TASK_QUEUE: options.taskQueue,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: options.fakeUrl,
      NO_COLOR: '1',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    // Generous: a worker bundles the workflow code as it starts, which takes long on a loaded machine.
    const timer = setTimeout(() => reject(new Error(`worker ${options.hostId} did not start:\n${output}`)), 180_000);
    const check = () => {
      if (!output.includes('Worker ready')) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker ${options.hostId} exited at start:\n${output}`));
    });
  });
  return {
    hostId: options.hostId,
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // A clean shutdown waits for running activities; do not wait forever.
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
