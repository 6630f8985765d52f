// 6. The dispatch floor: how long the same Temporal server takes per iteration of a trivial
// workflow (two no-op activities per iteration: two workflow tasks and two activity tasks, the
// shape of one agent iteration), run by three workers side by side, alternating:
//   - the TypeScript SDK (the one our worker uses, @temporalio/worker) in this process,
//   - Python's temporalio SDK (another SDK on the same server),
//   - a bare loop of gRPC calls with no SDK worker at all, a poll always waiting before its task
//     exists: what the server itself needs to hand a task to a waiting poller.
// If the bare loop sees a few ms per task, the rest of the agent's dispatch time is the worker's.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { loadConfig } from '../src/config.js';
import type { TestServer } from '../harness/devStack.js';
import { measureCpu } from './processCpu.js';
import { serverTaskTimeFigures, serverTaskTimeRows, withServerTimes, type ServerTaskTimes } from './serverTaskTimes.js';
import { alternately, figure, figureTable, number, type Figure } from './stats.js';
import { taskTimings } from './workflowTimeline.js';

export const floorIterations = 30;
const here = dirname(fileURLToPath(import.meta.url));
/** The Python SDK version the floor is measured with (installed by the bench into the installation's tools). */
export const pythonSdk = 'temporalio==1.35.0';

export interface FloorSample {
  /** Per iteration: first activity scheduled → last activity scheduled, over the iterations between. */
  msPerIteration: number;
  /** Per iteration: every task's scheduled → started. */
  waitingMs: number;
  /** Median scheduled → started of one workflow task, and of one activity task. */
  workflowTaskWaitMs: number;
  activityTaskWaitMs: number;
  /** Median started → completed of one workflow task, and of one activity task (a no-op: the SDK's and server's share). */
  workflowTaskMs: number;
  activityTaskMs: number;
}

export type FloorFigures = Record<keyof FloorSample, Figure>;
export interface DispatchFloorResult {
  iterations: number;
  /**
   * `server`: the server's own handling of each variant's tasks (its latency histograms), when its
   * metrics are served; `cpu`: CPU milliseconds per iteration that the server process and the
   * worker's process used, when the server's process is known.
   */
  variants: Array<{
    name: string;
    figures: FloorFigures;
    server?: Record<keyof ServerTaskTimes, Figure>;
    cpu?: { serverMs: Figure; workerMs: Figure };
  }>;
  /** Why a variant is missing (the Python SDK could not be installed), if one is. */
  note?: string;
}

/** A worker that runs one trivial workflow of `iterations` iterations and names its workflow id. */
export interface FloorRunner {
  name: string;
  /** The process its worker runs in (default: this one). */
  processId?: number;
  run(iterations: number): Promise<string>;
  close(): Promise<void>;
}

export function floorSample(events: Parameters<typeof taskTimings>[0]): FloorSample {
  const tasks = taskTimings(events);
  const activities = tasks.filter((task) => task.kind !== 'workflow task');
  const first = activities[0];
  const last = activities[activities.length - 1];
  if (!first || !last || activities.length < 4) throw new Error(`a trivial run with ${activities.length} activities`);
  const iterations = (activities.length - 1) / 2;
  const inWindow = tasks.filter((task) => task.scheduledAt >= first.scheduledAt && task.scheduledAt < last.scheduledAt);
  const median = (values: number[]) => figure(values).median;
  const workflowTasks = inWindow.filter((task) => task.kind === 'workflow task');
  return {
    msPerIteration: (last.scheduledAt - first.scheduledAt) / iterations,
    waitingMs: inWindow.reduce((sum, task) => sum + task.startedAt - task.scheduledAt, 0) / iterations,
    workflowTaskWaitMs: median(workflowTasks.map((task) => task.startedAt - task.scheduledAt)),
    activityTaskWaitMs: median(
      inWindow.filter((task) => task.kind !== 'workflow task').map((task) => task.startedAt - task.scheduledAt),
    ),
    activityTaskMs: median(
      inWindow.filter((task) => task.kind !== 'workflow task').map((task) => task.closedAt - task.startedAt),
    ),
    workflowTaskMs: median(workflowTasks.map((task) => task.closedAt - task.startedAt)),
  };
}

/**
 * The trivial workflow on a TypeScript SDK worker in this process, with the given worker options.
 * `agentShaped`: its activities go to two other task queues, each served by a worker of its own
 * in this process (as src/worker.ts serves the agent's model and sandbox-host queues), so that
 * none is handed over eagerly: the floor of the agent's own iteration. `toolHeartbeat`: its runTool
 * heartbeats once, at its start, as the agent's tool calls did (what one heartbeat per iteration costs).
 */
export async function typescriptFloorRunner(
  client: Client,
  address: string,
  name: string,
  options: Partial<WorkerOptions> = {},
  shape: { agentShaped?: boolean; toolHeartbeat?: boolean } = {},
): Promise<FloorRunner> {
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `floor-typescript-${process.pid}-${name.replace(/\W+/g, '-')}`;
  const queues = { model: `${taskQueue}/model`, host: `${taskQueue}/host` };
  const noop = async () => {};
  const workers = [
    await Worker.create({
      connection,
      namespace: client.options.namespace,
      taskQueue,
      workflowBundle: await floorBundle(),
      activities: { noop },
      ...options,
    }),
  ];
  if (shape.agentShaped) {
    for (const [queue, activities] of [
      [queues.model, { callModel: noop }],
      [queues.host, { runTool: shape.toolHeartbeat ? heartbeatOnce : noop }],
    ] as const) {
      workers.push(
        await Worker.create({
          connection,
          namespace: client.options.namespace,
          taskQueue: queue,
          activities,
          ...options,
        }),
      );
    }
  }
  const running = Promise.all(workers.map((worker) => worker.run()));
  let runs = 0;
  return {
    name,
    async run(iterations) {
      runs += 1;
      const workflowId = `${taskQueue}-${runs}`;
      if (shape.agentShaped)
        await client.workflow.execute('agentShapedLoop', { taskQueue, workflowId, args: [iterations, queues] });
      else await client.workflow.execute('trivialLoop', { taskQueue, workflowId, args: [iterations] });
      return workflowId;
    },
    async close() {
      for (const worker of workers) worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** A no-op activity that heartbeats once, as a tool call's activity did at its start. */
async function heartbeatOnce(): Promise<void> {
  Context.current().heartbeat({ elapsedMs: 0 });
}

let bundle: ReturnType<typeof bundleWorkflowCode> | null = null;
function floorBundle(): ReturnType<typeof bundleWorkflowCode> {
  bundle ??= bundleWorkflowCode({ workflowsPath: join(here, 'floor', 'trivialWorkflow.ts'), logger: silentLogger });
  return bundle;
}

const silentLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** A Python interpreter with the Python SDK, in a virtual environment under the installation's tools. */
export function pythonWithSdk(): string {
  const venv = join(loadConfig().toolsRoot, 'bench-python');
  const python = join(venv, 'bin', 'python');
  const has = () =>
    existsSync(python) && spawnSync(python, ['-c', 'import temporalio'], { stdio: 'ignore' }).status === 0;
  if (has()) return python;
  const steps: string[][] = [
    ['python3', '-m', 'venv', venv],
    [python, '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', pythonSdk],
  ];
  for (const [command, ...args] of steps) {
    const result = spawnSync(command as string, args, { encoding: 'utf8' });
    if (result.status !== 0) {
      throw new Error(
        `Installing the Python SDK for the dispatch floor failed (${[command, ...args].join(' ')}): ${result.stderr.trim()}`,
      );
    }
  }
  return python;
}

/** The Python process (bench/floor/trivial_loop.py): `mode` 'sdk' runs its SDK worker, 'raw' the bare gRPC loop. */
export async function pythonFloorRunners(
  address: string,
  namespace: string,
): Promise<{ sdk: FloorRunner; raw: FloorRunner }> {
  const child: ChildProcessWithoutNullStreams = spawn(pythonWithSdk(), [
    join(here, 'floor', 'trivial_loop.py'),
    address,
    namespace,
  ]);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`the Python floor worker exited: ${stderr.trim()}`);
    return line.value;
  };
  if ((await nextLine()) !== 'ready') throw new Error(`the Python floor worker did not start: ${stderr.trim()}`);
  let queue = Promise.resolve('');
  const ask = (mode: string, iterations: number) => {
    queue = queue.then(() => {
      child.stdin.write(`${mode} ${iterations}\n`);
      return nextLine();
    });
    return queue;
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  };
  return {
    sdk: {
      name: `Python SDK (${pythonSdk})`,
      processId: child.pid,
      run: (iterations) => ask('sdk', iterations),
      close,
    },
    raw: {
      name: 'bare gRPC loop (no SDK worker)',
      processId: child.pid,
      run: (iterations) => ask('raw', iterations),
      close,
    },
  };
}

/** The server the floor is measured on (a TestServer of harness/devStack.ts). */
export type FloorServer = Pick<TestServer, 'client' | 'address' | 'metricsUrl' | 'processId'>;

/**
 * Runs every runner `repetitions` times, alternating, after one untimed warm-up run each. Beside
 * each run's history, the server's own time for its tasks (when its metrics are served) and the
 * CPU the server's and the worker's processes used (when the server runs on this machine).
 */
export async function measureFloor(
  server: FloorServer,
  runners: FloorRunner[],
  repetitions: number,
  iterations = floorIterations,
): Promise<DispatchFloorResult> {
  const { client, metricsUrl, processId: serverProcessId } = server;
  const sampleOf = async (runner: FloorRunner) => {
    const processes = serverProcessId ? [serverProcessId, runner.processId ?? process.pid] : [];
    const {
      result: { result: workflowId, server: serverTimes },
      cpuMs: [serverCpuMs, workerCpuMs],
    } = await measureCpu(processes, () => withServerTimes(metricsUrl, () => runner.run(iterations)));
    // A trivial run's start and end are a small part of it: its CPU per iteration is the whole run's over its iterations.
    const cpu =
      serverCpuMs !== undefined && workerCpuMs !== undefined
        ? { serverMs: serverCpuMs / iterations, workerMs: workerCpuMs / iterations }
        : null;
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    return { sample: floorSample(history.events ?? []), serverTimes, cpu };
  };
  const measuredOf = await alternately(repetitions, runners, sampleOf);
  return {
    iterations,
    variants: runners.map((runner, index) => {
      const measured = measuredOf[index] as Array<Awaited<ReturnType<typeof sampleOf>>>;
      const samples = measured.map(({ sample }) => sample);
      const of = (key: keyof FloorSample) => figure(samples.map((sample) => sample[key]));
      const cpus = measured.map(({ cpu }) => cpu).filter((cpu) => cpu !== null);
      const server = serverTaskTimeFigures(measured.map(({ serverTimes }) => serverTimes));
      return {
        name: runner.name,
        ...(cpus.length === measured.length
          ? {
              cpu: {
                serverMs: figure(cpus.map((cpu) => cpu.serverMs)),
                workerMs: figure(cpus.map((cpu) => cpu.workerMs)),
              },
            }
          : {}),
        ...(server ? { server } : {}),
        figures: {
          msPerIteration: of('msPerIteration'),
          waitingMs: of('waitingMs'),
          workflowTaskWaitMs: of('workflowTaskWaitMs'),
          activityTaskWaitMs: of('activityTaskWaitMs'),
          workflowTaskMs: of('workflowTaskMs'),
          activityTaskMs: of('activityTaskMs'),
        },
      };
    }),
  };
}

export const agentShapedFloorName =
  "TypeScript SDK, the agent's shape (activities on two other task queues, as the agent's model and tool calls)";

/** The section of `npm run bench`: our SDK, another SDK and the bare gRPC loop on the bench's server. */
export async function measureDispatchFloor(server: FloorServer, repetitions: number): Promise<DispatchFloorResult> {
  const { client, address } = server;
  let python: Awaited<ReturnType<typeof pythonFloorRunners>> | null = null;
  let note: string | undefined;
  try {
    python = await pythonFloorRunners(address, client.options.namespace);
  } catch (error) {
    note = `Python's SDK and the bare gRPC loop were not measured: ${(error as Error).message}`;
  }
  const typescript = await typescriptFloorRunner(
    client,
    address,
    'TypeScript SDK (@temporalio/worker 1.24.0, default options)',
  );
  const agentShaped = await typescriptFloorRunner(client, address, agentShapedFloorName, {}, { agentShaped: true });
  try {
    const result = await measureFloor(
      server,
      [typescript, agentShaped, ...(python ? [python.sdk, python.raw] : [])],
      repetitions,
    );
    return note ? { ...result, note } : result;
  } finally {
    await typescript.close();
    await agentShaped.close();
    await python?.sdk.close();
  }
}

export function formatDispatchFloor(result: DispatchFloorResult): string[] {
  const ms = (value: number) => `${number(value)} ms`;
  return [
    `6. Dispatch floor (a trivial workflow, ${result.iterations} iterations of two no-op activities, on the bench's server; per iteration unless said)`,
    ...result.variants.flatMap(({ name, figures, server, cpu }) => [
      `  ${name}`,
      ...figureTable([
        { label: 'iteration (4 tasks)', figure: figures.msPerIteration, format: ms },
        { label: 'tasks waiting for a worker, per iteration', figure: figures.waitingMs, format: ms },
        { label: 'one workflow task waiting (median)', figure: figures.workflowTaskWaitMs, format: ms },
        { label: 'one activity task waiting (median)', figure: figures.activityTaskWaitMs, format: ms },
        { label: 'one workflow task running (median)', figure: figures.workflowTaskMs, format: ms },
        ...(figures.activityTaskMs
          ? [{ label: 'one no-op activity task running (median)', figure: figures.activityTaskMs, format: ms }]
          : []),
        ...(server ? serverTaskTimeRows.map(([label, key]) => ({ label, figure: server[key], format: ms })) : []),
        ...(cpu
          ? [
              { label: 'CPU per iteration: the server process', figure: cpu.serverMs, format: ms },
              { label: "CPU per iteration: the worker's process", figure: cpu.workerMs, format: ms },
            ]
          : []),
      ]).map((line) => `  ${line}`),
    ]),
    ...(result.note ? [`  ${result.note}`] : []),
  ];
}

/**
 * `node --import tsx bench/dispatchFloor.ts heartbeat [repetitions]`: the agent-shaped floor with
 * and without one heartbeat per iteration in its runTool, alternating on one server: what a
 * heartbeat at the start of every tool call cost an iteration.
 */
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'heartbeat') {
  const { startTestServer } = await import('../harness/devStack.js');
  const server = await startTestServer({ persistent: true, metrics: true });
  const runners = [
    await typescriptFloorRunner(server.client, server.address, agentShapedFloorName, {}, { agentShaped: true }),
    await typescriptFloorRunner(
      server.client,
      server.address,
      'the same, its runTool heartbeating once',
      {},
      { agentShaped: true, toolHeartbeat: true },
    ),
  ];
  try {
    console.log(formatDispatchFloor(await measureFloor(server, runners, Number(process.argv[3] ?? 5))).join('\n'));
  } finally {
    for (const runner of runners) await runner.close();
    await server.stop();
  }
}
