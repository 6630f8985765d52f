// A durable-debugger worker: it runs the workflow on the shared task queue, sandbox activities
// on a queue of its own, so that every command of a run reaches the host that holds its
// container, and model calls on the queue of its model endpoint (src/agent/modelEndpoint.ts),
// so that a run is only ever answered with the model settings it was started with.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type ActivitySlotInfo,
  type CustomSlotSupplier,
  type InjectedSinks,
  type WorkflowBundleOption,
} from '@temporalio/worker';
import type { Sinks } from '@temporalio/workflow';
import { createAttemptActivities } from '../activities/attempts.js';
import { createModelActivities, type ModelActivityOptions } from '../activities/model.js';
import { createClaimActivities, createHostActivities, createSharedActivities } from '../activities/sandbox.js';
import { createSandboxQueueActivities } from '../activities/sandboxQueue.js';
import { defaultModelEndpoint, describeModelEndpoint, modelTaskQueueFor } from './agent/modelEndpoint.js';
import { projectRoot, type Config } from './config.js';
import { freePort } from './freePort.js';
import type { ModelClient } from './model/anthropic.js';
import type { PricingPlace } from './model/pricing.js';
import { connectModelProvider } from './model/providers.js';
import { sweepPeriodically } from './reaper.js';
import { connectDocker } from './sandbox/container/container.js';
import { defaultHostCapacity, type HostCapacity } from './sandbox/container/hostCapacity.js';
import { checkDocker as checkDockerEngine } from './setup/dockerEngine.js';
import { setupCommand } from './setup/parts.js';
import { checkSandboxImage } from './setup/sandboxImage.js';
import { SandboxHost } from './sandbox/sandboxHost.js';
import { openContentStore } from './sandbox/store/openStore.js';
import { admissionCounts } from './agent/admission.js';
import { connectTemporal } from './temporal/clientConnection.js';
import { runEndsOn } from './temporal/closedRuns.js';
import { sandboxAdmissionIdFor, sandboxClaimQueueFor, sandboxQueueQuery } from './temporal/definitions.js';
import { ensureSearchAttributes } from './temporal/searchAttributes.js';
import { WorkerMetrics } from './temporal/metrics.js';
import { workerHostIdentity } from './temporal/workerIdentity.js';
import { startTracing, workflowTracingModule } from './temporal/tracing.js';
import { closingViewSinks } from './temporal/closingViews.js';
import type { ServedRuns } from './temporal/servedRuns.js';

export const workflowsPath = join(projectRoot, 'workflows', 'index.ts');
/** The package ships the workflow code bundled at build time (scripts/build.ts), beside this module's bundle. */
const prebuiltBundlePath = fileURLToPath(new URL('./workflow-bundle.js', import.meta.url));
/** The same with the OpenTelemetry workflow interceptors, for workers that trace. */
const prebuiltTracedBundlePath = fileURLToPath(new URL('./workflow-bundle-traced.js', import.meta.url));

const bundles = new Map<boolean, Promise<WorkflowBundleOption>>();
/**
 * The workflow code: the package's prebuilt bundle, or in the checkout its sources bundled once
 * per process; `traced`: with the OpenTelemetry interceptors (src/temporal/tracing.ts).
 */
export function workflowBundle(traced = false): Promise<WorkflowBundleOption> {
  const prebuilt = traced ? prebuiltTracedBundlePath : prebuiltBundlePath;
  let bundle = bundles.get(traced);
  if (!bundle) {
    bundle = existsSync(prebuilt)
      ? Promise.resolve({ codePath: prebuilt })
      : bundleWorkflowCode({
          workflowsPath,
          logger: quietBundlerLogger,
          ...(traced ? { workflowInterceptorModules: [workflowTracingModule()] } : {}),
        });
    bundles.set(traced, bundle);
  }
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
/** The port the runtime serves Prometheus metrics on, and its address, once installed with them. */
let metricsPort: number | null = null;
let metricsAddress: string | null = null;
/** Where the metrics listen: loopback by default (DURABLE_DEBUGGER_METRICS_BIND opens them to the network). */
const metricsBindAddress = (bind: string, port: number) => (isIPv6(bind) ? `[${bind}]:${port}` : `${bind}:${port}`);
/**
 * The SDK logs at WARN and above (its INFO lines would drown the progress output). With
 * `metricsPort`, the SDK's runtime metrics and ours (src/temporal/metrics.ts) are served on it
 * at /metrics. The runtime is installed once per process: the first call decides.
 */
export function installQuietRuntime(options: { metricsPort?: number; metricsBind?: string } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const bindAddress =
    options.metricsPort === undefined
      ? null
      : metricsBindAddress(options.metricsBind ?? '127.0.0.1', options.metricsPort);
  try {
    const level = (process.env.TEMPORAL_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN';
    Runtime.install({
      logger: new DefaultLogger(level, (entry) => {
        // Sandbox workers run activities only: that is by design, not worth a warning.
        if (entry.message.startsWith('No workflows registered')) return;
        console.error(`${entry.level} ${entry.message}`, entry.meta ?? '');
      }),
      ...(bindAddress !== null
        ? {
            telemetryOptions: {
              metrics: {
                prometheus: { bindAddress, countersTotalSuffix: true },
              },
            },
          }
        : {}),
    });
    metricsPort = options.metricsPort ?? null;
    metricsAddress = bindAddress;
  } catch {
    // Already installed by whoever created the first worker in this process.
  }
}

/** Every few seconds: this host's sandboxes, and the runs of the task queue that hold one or wait (from its sandbox queue). */
function watchGauges(metrics: WorkerMetrics, client: Client, host: SandboxHost, taskQueue: string) {
  const queue = client.workflow.getHandle(sandboxAdmissionIdFor(taskQueue));
  const tags = { task_queue: taskQueue };
  const update = async () => {
    metrics.host(
      { sandboxes: host.capacity.sandboxes, capacity: host.capacity.limits.sandboxes },
      { ...tags, host: host.options.hostId },
    );
    const state = await queue.query(sandboxQueueQuery).catch(() => null);
    if (state) {
      const counts = admissionCounts(state);
      metrics.queue({ active: counts.holdingSandbox, waiting: counts.waiting }, tags);
    }
  };
  let updating: Promise<void> | null = null;
  const tick = () => {
    updating ??= update().finally(() => (updating = null));
  };
  tick();
  const timer = setInterval(tick, 3_000);
  timer.unref();
  return {
    /** Stops; resolves once an update under way is over (it uses the worker's connection). */
    stop: async () => {
      clearInterval(timer);
      await updating;
    },
  };
}

export interface WorkerOptions {
  config: Config;
  address: string;
  /** Overrides the model client (the demo and tests point it at the fake API); needs `modelEndpoint`. */
  anthropic?: ModelClient;
  /** Where the overriding client's calls are answered, for their price (default: the Anthropic API). */
  pricingPlace?: PricingPlace;
  /** The endpoint the overriding client serves (default: derived from the config's base URL and key). */
  modelEndpoint?: string;
  /**
   * Also serve the default endpoint: runs that name none (Temporal CLI). True for the `worker`
   * and `dev` commands; false for the worker a `run` command starts for its own run.
   */
  serveDefaultEndpoint?: boolean;
  describeAnswerer?: (model: string) => string;
  taskQueue?: string;
  /**
   * The worker of a CLI command (run, resume, raise-budget, mcp): every activity of the runs its
   * user's commands start (snapshot, sandbox, model calls with its key) on their private queue,
   * refused for any other run; on the shared task queue it takes workflow tasks only (no I/O).
   */
  servedRuns?: ServedRuns;
  log?: (line: string) => void;
  /** Told how each model call got its conversation (cache or transcript query) and how long it took. */
  onTranscript?: ModelActivityOptions['onTranscript'];
  /** Told how long each tool call took in the sandbox host (the bench's breakdown). */
  onToolRun?: (tool: string, ms: number) => void;
  /** Told how long each model call's activity function took, and the model request within it. */
  onModelCall?: ModelActivityOptions['onModelCall'];
  /** False: model calls read the transcript query every time (for measuring what the cache saves). */
  cacheConversations?: boolean;
  /**
   * How long a shutdown lets the activities under way finish before cancelling them (default: none).
   * The background worker (src/cli/backgroundWorkerProcess.ts) stops when idle, and an activity taken
   * just before must end as if nothing happened.
   */
  shutdownGraceMs?: number;
}

export interface RunningWorker {
  taskQueue: string;
  hostTaskQueue: string;
  /** The model endpoint this worker serves (null without a model client), and whether it serves the default one. */
  modelEndpoint: string | null;
  servesDefaultEndpoint: boolean;
  host: SandboxHost;
  /** Where Prometheus metrics are served (host:port), or null. */
  metricsAddress: string | null;
  /** Resolves when all its workers (workflows, sandbox host, model endpoints) stop. */
  done: Promise<void>;
  shutdown(): Promise<void>;
  /** The activities its workers run now (the background worker is idle only at none). */
  activitiesInFlight(): number;
}

export function hostTaskQueueFor(taskQueue: string, hostId: string): string {
  return `${taskQueue}/host/${hostId}`;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const served = options.servedRuns ?? null;
  const taskQueue = served?.queue ?? options.taskQueue ?? config.taskQueue;
  installQuietRuntime({
    metricsPort: config.metricsPort === 0 ? await freePort(config.metricsBind) : config.metricsPort,
    metricsBind: config.metricsBind,
  });
  if (config.metricsPort !== undefined && !metricsAddress)
    log('Metrics are not served: the Temporal runtime of this process was set up before, without them.');
  else if (metricsAddress) log(`Prometheus metrics on http://${metricsAddress}/metrics`);
  const metrics = new WorkerMetrics(Runtime.instance().metricMeter);
  const docker = connectDocker();
  // The checks and connections do not depend on each other: side by side, they take the time of the slowest.
  const [clientConnection, connection] = await connectWhileChecking(options.address, [
    checkDocker(docker, config.sandboxImage),
    mkdir(config.workspaceRoot, { recursive: true }),
  ]);
  await ensureSearchAttributes(clientConnection, config.namespace);
  const client = new Client({ connection: clientConnection, namespace: config.namespace });
  const store = openContentStore(config.contentStore);
  const scope = `${options.address}/${config.namespace}`;
  const host = new SandboxHost({
    docker,
    store,
    workspaceRoot: config.workspaceRoot,
    hostId: config.hostId,
    image: config.sandboxImage,
    scope,
    environmentRoot: join(config.home, 'environment-builds'),
    toolchainDir: config.toolchainDir,
    repoRoots: config.repoRoots,
    allowedImages: config.allowedImages,
    setupCredentials: config.setupCredentials,
    capacity: { ...defaultHostCapacity(), ...definedOnly(config.capacity) },
  });
  await host.countHeldSandboxes();
  if (options.anthropic && !options.modelEndpoint)
    throw new Error('startWorker: a model client override needs its modelEndpoint');
  // The configured provider (none for the Anthropic API without a key), unless the caller brings a client.
  const provider = options.anthropic ? null : await connectModelProvider(config.anthropic);
  const modelEndpoint = options.anthropic ? (options.modelEndpoint as string) : (provider?.endpointId ?? null);
  const anthropic = options.anthropic ?? provider?.client ?? null;
  const pricingPlace = options.pricingPlace ?? provider?.place;

  const hostTaskQueue = hostTaskQueueFor(taskQueue, config.hostId);
  // The `hosts` command finds this host, and its metrics, by the identity its workers poll with.
  const identity = workerHostIdentity({
    pid: process.pid,
    machine: hostname(),
    hostId: config.hostId,
    metricsPort,
    metricsHost: config.metricsHost,
  });
  // The workflow worker loads its bundle in a thread of its own: the other workers are made meanwhile.
  // Spans of the workflow and of every activity, over OTLP when an endpoint is configured.
  const tracing = config.tracesEndpoint
    ? startTracing(config.tracesEndpoint, { hostId: config.hostId, taskQueue })
    : null;
  if (tracing) log(`Traces go to ${config.tracesEndpoint} (OTLP/HTTP).`);
  const grace = options.shutdownGraceMs ? { shutdownGraceTime: options.shutdownGraceMs } : {};
  const activityInterceptors = [
    ...(served ? [served.interceptor(client)] : []),
    ...(tracing ? [tracing.activityInterceptors] : []),
  ];
  const traced = activityInterceptors.length ? { interceptors: { activity: activityInterceptors } } : {};
  // What workflows tell this process beside their history: the closing views always, spans when traced.
  const sinks = { ...closingViewSinks, ...(tracing?.sinks ?? {}) } as InjectedSinks<Sinks>;
  const sharedWorker = workflowBundle(tracing !== null).then((bundle) =>
    Worker.create({
      connection,
      namespace: config.namespace,
      taskQueue,
      identity,
      ...grace,
      workflowBundle: bundle,
      ...traced,
      sinks,
      activities: {
        ...createSharedActivities(host, hostTaskQueue, client),
        ...createAttemptActivities(client),
        ...createSandboxQueueActivities(client, config.admissionLimits),
      },
    }),
  );
  // A CLI's worker runs workflow tasks of the shared queue (its runs live there, and a closed run's
  // queries are answered by replay); their activities go to the queues their inputs name.
  const workflowsOnly = served
    ? workflowBundle(tracing !== null).then((bundle) =>
        Worker.create({
          connection,
          namespace: config.namespace,
          taskQueue: config.taskQueue,
          identity,
          ...grace,
          workflowBundle: bundle,
          sinks,
        }),
      )
    : null;
  const hostWorker = Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: hostTaskQueue,
    identity,
    ...grace,
    ...traced,
    activities: createHostActivities(host, options.onToolRun, metrics, runEndsOn(client, taskQueue)),
  });
  // Polls for sandbox claims only while this host has room: a full host leaves them to others.
  const claimWorker = Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: sandboxClaimQueueFor(taskQueue),
    identity,
    ...grace,
    activities: createClaimActivities(host, hostTaskQueue),
    ...(served ? { interceptors: { activity: [served.interceptor(client)] } } : {}),
    tuner: {
      activityTaskSlotSupplier: claimSlots(host.capacity),
      workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
      localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
      nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
    },
  });
  // Awaited below; until then a failure must not count as unhandled.
  for (const pending of [sharedWorker, hostWorker, claimWorker, workflowsOnly]) pending?.catch(() => undefined);
  const modelQueues: string[] = [];
  let servesDefaultEndpoint = false;
  if (anthropic && modelEndpoint) {
    modelQueues.push(modelTaskQueueFor(taskQueue, modelEndpoint));
    if (!served && (options.serveDefaultEndpoint ?? true) && modelEndpoint !== defaultModelEndpoint) {
      const other = await otherEndpointServingDefault(client, config.namespace, taskQueue, modelEndpoint);
      if (other) {
        log(
          `Not serving the default model endpoint: a worker with other model settings (${other}) serves it. ` +
            'Runs started without an endpoint (the Temporal CLI) go to that worker; runs started by `durable-debugger run`/`start` with these settings come here.',
        );
      } else {
        modelQueues.push(modelTaskQueueFor(taskQueue, defaultModelEndpoint));
        servesDefaultEndpoint = true;
      }
    }
    log(
      `Model calls: ${describeModelEndpoint(modelEndpoint)}${servesDefaultEndpoint ? ' and the default endpoint' : ''}` +
        `${provider ? ` (${provider.description})` : ''}.`,
    );
  } else {
    log(
      'ANTHROPIC_API_KEY is not set: this worker answers no model calls; runs wait for a worker that does ' +
        '(one with ANTHROPIC_API_KEY, or `durable-debugger dev --scripted` for the fixtures).',
    );
  }
  const modelWorkers = await Promise.all(
    modelQueues.map((modelQueue) =>
      Worker.create({
        connection,
        namespace: config.namespace,
        taskQueue: modelQueue,
        // Other workers read the endpoint from this identity (see otherEndpointServingDefault).
        identity: `${process.pid}@${hostname()} model:${modelEndpoint}`,
        ...grace,
        // A streamed reply's heartbeats reach the server this often, for `watch` (else every 16 s).
        ...(config.streamReplies ? { maxHeartbeatThrottleInterval: '2 seconds' } : {}),
        ...traced,
        activities: createModelActivities({
          temporal: client,
          anthropic: anthropic as ModelClient,
          place: pricingPlace,
          defaultModel: config.anthropic.model,
          describeAnswerer: options.describeAnswerer,
          onTranscript: options.onTranscript,
          onModelCall: options.onModelCall,
          cacheConversations: options.cacheConversations,
          metrics,
          streamReplies: config.streamReplies,
        }),
      }),
    ),
  );

  // What earlier runs left behind on this host, at startup and then every few minutes.
  const sweep = sweepPeriodically({
    docker,
    client,
    scope,
    workspaceRoot: config.workspaceRoot,
    everyMs: config.reapEverySeconds * 1000,
    log,
    capacity: host.capacity,
    taskQueue,
  });

  const gauges = metricsAddress ? watchGauges(metrics, client, host, taskQueue) : null;

  const workers = [
    await sharedWorker,
    await hostWorker,
    await claimWorker,
    ...modelWorkers,
    ...(workflowsOnly ? [await workflowsOnly] : []),
  ];
  const done = Promise.all(workers.map((worker) => worker.run()))
    .finally(async () => {
      await sweep.stop();
      await gauges?.stop();
    })
    .then(async () => {
      await connection.close();
      await clientConnection.close();
      await store.close();
      await tracing?.shutdown();
    });
  return {
    taskQueue,
    hostTaskQueue,
    modelEndpoint: anthropic ? modelEndpoint : null,
    servesDefaultEndpoint,
    host,
    metricsAddress,
    done,
    async shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
      // The environment builds' clean-ups, and the build networks kept warm between builds.
      await host.environments.close();
    },
    activitiesInFlight: () => workers.reduce((sum, worker) => sum + worker.getStatus().numInFlightActivities, 0),
  };
}

/** Both connections to the server, made while the checks run; when anything fails, what opened is closed. */
async function connectWhileChecking(
  address: string,
  checks: Promise<unknown>[],
): Promise<[Connection, NativeConnection]> {
  const [client, native, ...rest] = await Promise.allSettled([
    connectTemporal({ address }),
    NativeConnection.connect({ address }),
    ...checks,
  ] as const);
  const failure = [client, native, ...rest].find((result) => result.status === 'rejected');
  if (client.status === 'fulfilled' && native.status === 'fulfilled' && !failure) return [client.value, native.value];
  if (client.status === 'fulfilled') await client.value.close().catch(() => undefined);
  if (native.status === 'fulfilled') await native.value.close().catch(() => undefined);
  throw (failure as PromiseRejectedResult).reason;
}

/** The claim queue's task slots: one for each sandbox this host still has room for. */
function claimSlots(capacity: HostCapacity): CustomSlotSupplier<ActivitySlotInfo> {
  return {
    type: 'custom',
    reserveSlot: async (_context, signal) => {
      await capacity.reserveClaim(signal);
      return {};
    },
    tryReserveSlot: () => (capacity.tryReserveClaim() ? {} : null),
    markSlotUsed: () => undefined,
    releaseSlot: () => capacity.releaseClaim(),
  };
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Pollers seen this recently still count (they long-poll for about a minute). */
const recentPollerMs = 90_000;

/**
 * The endpoint of another worker that serves the default endpoint with other settings, if any:
 * then this one leaves it alone, so that runs without an endpoint are answered by one kind of
 * worker (never half by a script and half by Claude, or with two people's keys).
 */
async function otherEndpointServingDefault(
  client: Client,
  namespace: string,
  taskQueue: string,
  ownEndpoint: string,
): Promise<string | null> {
  const response = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: modelTaskQueueFor(taskQueue, defaultModelEndpoint) },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const now = Date.now();
  for (const poller of response.pollers ?? []) {
    const endpoint = poller.identity?.match(/ model:(\S+)$/)?.[1];
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    if (endpoint && endpoint !== ownEndpoint && now - seconds * 1000 < recentPollerMs) return endpoint;
  }
  return null;
}

/** Before any run starts: the engine answers and has the sandbox image, else the one command that fixes it. */
async function checkDocker(docker: ReturnType<typeof connectDocker>, image: string): Promise<void> {
  for (const check of [() => checkDockerEngine(docker), () => checkSandboxImage(docker, image)]) {
    const result = await check();
    if (result.status === 'fail')
      throw new WorkerSetupError(`${result.name}: ${result.detail}. To fix it: ${result.fix ?? setupCommand}`);
  }
}
