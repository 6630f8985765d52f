// A durable-debugger worker: it runs the workflow and the model activities on the shared task
// queue, and sandbox activities on a queue of its own, so that every command of a run reaches
// the host that holds its container.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { createModelActivities } from '../activities/model.js';
import { createHostActivities, createSharedActivities } from '../activities/sandbox.js';
import { projectRoot, type Config } from './config.js';
import { createModelClient } from './model/anthropic.js';
import { sweepPeriodically } from './reaper.js';
import { connectDocker } from './sandbox/container.js';
import { SandboxHost } from './sandbox/sandboxHost.js';
import { ContentStore } from './sandbox/store.js';
import { ensureSearchAttributes } from './temporal/searchAttributes.js';

export const workflowsPath = join(projectRoot, 'workflows', 'index.ts');

let bundle: Promise<WorkflowBundleWithSourceMap> | null = null;
/** The workflow code, bundled once per process. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  return bundle;
}

const quietBundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error(message: string, meta?: Record<string, unknown>) {
    console.error(message, meta ?? '');
  },
};

export class WorkerSetupError extends Error {}

let runtimeInstalled = false;
/** The SDK logs at WARN and above (its INFO lines would drown the progress output). */
export function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    const level = (process.env.TEMPORAL_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN';
    Runtime.install({
      logger: new DefaultLogger(level, (entry) => {
        // Sandbox workers run activities only: that is by design, not worth a warning.
        if (entry.message.startsWith('No workflows registered')) return;
        console.error(`${entry.level} ${entry.message}`, entry.meta ?? '');
      }),
    });
  } catch {
    // Already installed by whoever created the first worker in this process.
  }
}

export interface WorkerOptions {
  config: Config;
  address: string;
  /** Overrides the model client (the demo and tests point it at the fake API). */
  anthropic?: Anthropic;
  describeAnswerer?: (model: string) => string;
  taskQueue?: string;
  log?: (line: string) => void;
}

export interface RunningWorker {
  taskQueue: string;
  hostTaskQueue: string;
  host: SandboxHost;
  /** Resolves when both workers stop. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export function hostTaskQueueFor(taskQueue: string, hostId: string): string {
  return `${taskQueue}/host/${hostId}`;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const taskQueue = options.taskQueue ?? config.taskQueue;
  installQuietRuntime();
  const docker = connectDocker();
  await checkDocker(docker, config.sandboxImage);

  await mkdir(config.workspaceRoot, { recursive: true });
  const scope = `${options.address}/${config.namespace}`;
  const host = new SandboxHost({
    docker,
    store: new ContentStore(config.storeRoot),
    workspaceRoot: config.workspaceRoot,
    hostId: config.hostId,
    image: config.sandboxImage,
    scope,
    repoRoots: config.repoRoots,
  });
  const clientConnection = await Connection.connect({ address: options.address });
  await ensureSearchAttributes(clientConnection, config.namespace);
  const client = new Client({ connection: clientConnection, namespace: config.namespace });
  const connection = await NativeConnection.connect({ address: options.address });
  const anthropic =
    options.anthropic ??
    (config.anthropic.apiKey
      ? createModelClient({ apiKey: config.anthropic.apiKey, baseURL: config.anthropic.baseURL, timeoutMs: config.anthropic.timeoutMs })
      : null);
  if (!anthropic) log('ANTHROPIC_API_KEY is not set: model calls on this worker will fail until it is.');

  const hostTaskQueue = hostTaskQueueFor(taskQueue, config.hostId);
  const sharedWorker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: {
      ...createModelActivities({
        temporal: client,
        anthropic,
        defaultModel: config.anthropic.model,
        describeAnswerer: options.describeAnswerer,
      }),
      ...createSharedActivities(host, hostTaskQueue, client),
    },
  });
  const hostWorker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: hostTaskQueue,
    activities: createHostActivities(host),
  });

  // What earlier runs left behind on this host, at startup and then every few minutes.
  const sweep = sweepPeriodically({ docker, client, scope, workspaceRoot: config.workspaceRoot, everyMs: config.reapEverySeconds * 1000, log });

  const done = Promise.all([sharedWorker.run(), hostWorker.run()]).finally(() => sweep.stop()).then(async () => {
    await connection.close();
    await clientConnection.close();
  });
  return {
    taskQueue,
    hostTaskQueue,
    host,
    done,
    async shutdown() {
      if (sharedWorker.getState() === 'RUNNING') sharedWorker.shutdown();
      if (hostWorker.getState() === 'RUNNING') hostWorker.shutdown();
      await done;
    },
  };
}

async function checkDocker(docker: ReturnType<typeof connectDocker>, image: string): Promise<void> {
  try {
    await docker.ping();
  } catch (error) {
    throw new WorkerSetupError(
      `The Docker engine does not answer (${(error as Error).message}). Run \`npm run setup\` to start it, or set DOCKER_HOST.`,
    );
  }
  try {
    await docker.getImage(image).inspect();
  } catch {
    throw new WorkerSetupError(`The sandbox image ${image} is missing. Run \`npm run setup\` to build it.`);
  }
}
