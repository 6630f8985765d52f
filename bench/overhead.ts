// 1. Orchestration overhead per iteration: the same scripted run (list_files every iteration,
// the fake API answering at once) through the Temporal workflow and through the plain loop.
// An iteration's time is taken from the fake API's clock: the gap between consecutive model
// requests, which covers the model call, the tool call and everything around them.
// Beside them, alternately: the floor (a trivial workflow of the agent's shape on the same server)
// and the plain loop idle before each step, which shows what the same work costs on a CPU that
// went idle between steps (on this VM, a request and a tool both take longer after an idle wait).
import { availableParallelism } from 'node:os';
import { sandboxIdFor } from '../src/agent/ids.js';
import { benchModel, listFilesStep, msPerIteration, repeatedStep, type BenchEnvironment } from './benchStack.js';
import { agentShapedFloorName, typescriptFloorRunner } from './dispatchFloor.js';
import { formatIterationCpu, measureIterationCpu, type IterationCpu } from './iterationCpu.js';
import { runPlainLoop } from './plainLoop.js';
import { serverTaskTimeFigures, serverTaskTimeRows, withServerTimes, type ServerTaskTimes } from './serverTaskTimes.js';
import { figure, figureTable, number, percent, repeat, signed, table, type Figure } from './stats.js';
import { iterationTimeline, type IterationTimeline } from './workflowTimeline.js';

const timelineKeys: Array<keyof IterationTimeline> = [
  'iterationMs',
  'dispatchMs',
  'workflowTaskWaitMs',
  'workflowTaskMs',
  'callModelWaitMs',
  'callModelMs',
  'runToolWaitMs',
  'runToolMs',
  'otherMs',
];

export const overheadIterations = 30;
/** The model call time of the run the overhead is compared with. */
export const modelCallMs = 2_000;
export const goals = { addedMsPerIteration: 30, shareOfRun: 0.02 };

export interface OverheadResult {
  iterations: number;
  workflowMsPerIteration: Figure;
  plainLoopMsPerIteration: Figure;
  addedMsPerIteration: Figure;
  /** Where a workflow iteration's time goes, from the server's event times. */
  workflowTimeline: Record<keyof IterationTimeline, Figure>;
  /**
   * The floor, measured alternately with the two loops: a trivial workflow of the agent's shape
   * (two no-op activities per iteration, each on another task queue, as the agent's model and tool
   * calls are) on a TypeScript SDK worker in this process, on the same server.
   */
  floorMsPerIteration?: Figure;
  floorTimeline?: Record<keyof IterationTimeline, Figure>;
  /**
   * The server's own handling of an iteration's tasks (its latency histograms, bench/serverTaskTimes.ts),
   * in our runs and in the floor's: what no worker can take away.
   */
  serverTimes?: { ours: Record<keyof ServerTaskTimes, Figure>; floor: Record<keyof ServerTaskTimes, Figure> };
  /** CPU per iteration of the server and of this process, ours beside the floor's and the plain loop's. */
  cpu?: IterationCpu;
  /** added − floor, per repetition: what our workflow, activities and worker add above the floor. */
  aboveFloorMsPerIteration?: Figure;
  /** Measured in the worker, per iteration: the tool's time in the sandbox host (docker exec and around it), and getting the conversation. */
  worker: {
    toolRunMs: Figure;
    transcriptMs: Figure;
    transcriptQueries: Figure;
    modelCallMs?: Figure;
    modelRequestMs?: Figure;
  };
  /** The plain loop's own model request and tool times, per iteration. */
  plainLoop?: { modelRequestMs: Figure; toolMs: Figure };
  /**
   * The plain loop again, idle before each model request and tool call for half the floor's
   * iteration of the same round (a workflow's CPU idles that long while its tasks are dispatched):
   * its request and tool times, and what they take above the busy plain loop's (per iteration).
   */
  idlePlainLoop?: { idleBeforeStepMs: Figure; modelRequestMs: Figure; toolMs: Figure; addedMs: Figure };
  /** Above the floor, less what the idle CPU alone adds to the same work: our code and the SDK's path for it. */
  aboveFloorLessIdleMsPerIteration?: Figure;
  /**
   * Above the floor with the work itself taken out of both loops as each measured it (the tool in the
   * sandbox host, the model request): the tool's docker exec drifts by ±7 ms per iteration from one run
   * to the next on this VM, which the plain difference carries and this one does not.
   */
  aboveFloorWithoutWorkMsPerIteration?: Figure;
  /** added / (modelCallMs + workflow ms per iteration): the share of an iteration whose model call takes 2 s. */
  shareOfTwoSecondRun: Figure;
  goalsMet: { addedMsPerIteration: boolean; shareOfRun: boolean };
}

export async function measureOverhead(env: BenchEnvironment, repetitions: number): Promise<OverheadResult> {
  const repo = await env.tinyRepository('bench_overhead', repeatedStep(listFilesStep, overheadIterations + 5));
  const input = { repo, budgets: { maxIterations: overheadIterations } };

  const throughWorkflow = async () => {
    env.takeWorkerTimings();
    const {
      result: { report, handle },
      server,
    } = await withServerTimes(env.server.metricsUrl, () => env.runWorkflow(input));
    const ms = checked('workflow', report.status, report.iterations, env.takeRequests());
    const { transcripts, toolRuns, modelCalls } = env.takeWorkerTimings();
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    const worker = {
      toolRunMs: sum(toolRuns) / report.iterations,
      transcriptMs: sum(transcripts.map((transcript) => transcript.ms)) / report.iterations,
      transcriptQueries: transcripts.filter((transcript) => transcript.source === 'query').length,
      modelCallMs: sum(modelCalls.map((call) => call.ms)) / report.iterations,
      modelRequestMs: sum(modelCalls.map((call) => call.requestMs)) / report.iterations,
    };
    return { ms, timeline: await iterationTimeline(handle), worker, server };
  };
  let plainRuns = 0;
  const throughPlainLoop = async (idleBeforeStepMs = 0) => {
    plainRuns += 1;
    const sandboxId = sandboxIdFor(`bench-plain-loop-${process.pid}-${plainRuns}`);
    const result = await runPlainLoop({
      host: env.plainLoopHost,
      anthropic: env.anthropic,
      input,
      model: benchModel,
      sandboxId,
      idleBeforeStepMs,
    });
    const ms = checked('plain loop', result.status, result.iterations, env.takeRequests());
    return { ms, modelRequestMs: result.modelRequestMs / result.iterations, toolMs: result.toolMs / result.iterations };
  };

  const floorRunner = await typescriptFloorRunner(
    env.server.client,
    env.server.address,
    agentShapedFloorName,
    {},
    { agentShaped: true },
  );
  const throughFloor = async () => {
    const { result: workflowId, server } = await withServerTimes(env.server.metricsUrl, () =>
      floorRunner.run(overheadIterations),
    );
    const timeline = await iterationTimeline(env.server.client.workflow.getHandle(workflowId));
    return { ms: timeline.iterationMs, timeline, server };
  };

  // One untimed run of each warms up the worker, the workflow bundle and the HTTP connections.
  let pairs: Array<{
    workflow: Awaited<ReturnType<typeof throughWorkflow>>;
    plain: Awaited<ReturnType<typeof throughPlainLoop>>;
    floor: Awaited<ReturnType<typeof throughFloor>>;
    idle: Awaited<ReturnType<typeof throughPlainLoop>> & { idleBeforeStepMs: number };
  }>;
  let cpu: IterationCpu | null;
  try {
    await throughWorkflow();
    await throughPlainLoop();
    await throughFloor();
    // Alternate them, so that a slow moment of the machine does not land on one side only.
    pairs = await repeat(repetitions, async () => {
      const workflow = await throughWorkflow();
      const plain = await throughPlainLoop();
      const floor = await throughFloor();
      const idleBeforeStepMs = floor.ms / 2;
      return { workflow, plain, floor, idle: { ...(await throughPlainLoop(idleBeforeStepMs)), idleBeforeStepMs } };
    });
    cpu = await measureIterationCpu(env, floorRunner, repetitions);
  } finally {
    await floorRunner.close();
  }
  const added = pairs.map((pair) => pair.workflow.ms - pair.plain.ms);
  const share = pairs.map((pair) => (pair.workflow.ms - pair.plain.ms) / (modelCallMs + pair.workflow.ms));
  const timelines = pairs.map((pair) => pair.workflow.timeline);
  const timelineFigure = (key: keyof IterationTimeline) => figure(timelines.map((timeline) => timeline[key]));
  const addedFigure = figure(added);
  const shareFigure = figure(share);
  const oursOnServer = serverTaskTimeFigures(pairs.map((pair) => pair.workflow.server));
  const floorOnServer = serverTaskTimeFigures(pairs.map((pair) => pair.floor.server));
  return {
    iterations: overheadIterations,
    workflowMsPerIteration: figure(pairs.map((pair) => pair.workflow.ms)),
    plainLoopMsPerIteration: figure(pairs.map((pair) => pair.plain.ms)),
    plainLoop: {
      modelRequestMs: figure(pairs.map((pair) => pair.plain.modelRequestMs)),
      toolMs: figure(pairs.map((pair) => pair.plain.toolMs)),
    },
    addedMsPerIteration: addedFigure,
    workflowTimeline: Object.fromEntries(timelineKeys.map((key) => [key, timelineFigure(key)])) as Record<
      keyof IterationTimeline,
      Figure
    >,
    floorMsPerIteration: figure(pairs.map((pair) => pair.floor.ms)),
    floorTimeline: Object.fromEntries(
      timelineKeys.map((key) => [key, figure(pairs.map((pair) => pair.floor.timeline[key]))]),
    ) as Record<keyof IterationTimeline, Figure>,
    aboveFloorMsPerIteration: figure(pairs.map((pair) => pair.workflow.ms - pair.plain.ms - pair.floor.ms)),
    ...(oursOnServer && floorOnServer ? { serverTimes: { ours: oursOnServer, floor: floorOnServer } } : {}),
    ...(cpu ? { cpu } : {}),
    idlePlainLoop: {
      idleBeforeStepMs: figure(pairs.map((pair) => pair.idle.idleBeforeStepMs)),
      modelRequestMs: figure(pairs.map((pair) => pair.idle.modelRequestMs)),
      toolMs: figure(pairs.map((pair) => pair.idle.toolMs)),
      addedMs: figure(pairs.map(idleCost)),
    },
    aboveFloorLessIdleMsPerIteration: figure(
      pairs.map((pair) => pair.workflow.ms - pair.plain.ms - pair.floor.ms - idleCost(pair)),
    ),
    aboveFloorWithoutWorkMsPerIteration: figure(
      pairs.map(
        (pair) =>
          pair.workflow.ms -
          pair.workflow.worker.toolRunMs -
          pair.workflow.worker.modelRequestMs -
          (pair.plain.ms - pair.plain.toolMs - pair.plain.modelRequestMs) -
          pair.floor.ms,
      ),
    ),
    worker: {
      toolRunMs: figure(pairs.map((pair) => pair.workflow.worker.toolRunMs)),
      transcriptMs: figure(pairs.map((pair) => pair.workflow.worker.transcriptMs)),
      transcriptQueries: figure(pairs.map((pair) => pair.workflow.worker.transcriptQueries)),
      modelCallMs: figure(pairs.map((pair) => pair.workflow.worker.modelCallMs)),
      modelRequestMs: figure(pairs.map((pair) => pair.workflow.worker.modelRequestMs)),
    },
    shareOfTwoSecondRun: shareFigure,
    goalsMet: {
      addedMsPerIteration: addedFigure.median < goals.addedMsPerIteration,
      shareOfRun: shareFigure.median < goals.shareOfRun,
    },
  };
}

/** What the same model request and tool take above the busy plain loop's when the CPU idled before each. */
function idleCost(pair: {
  plain: { modelRequestMs: number; toolMs: number };
  idle: { modelRequestMs: number; toolMs: number };
}): number {
  return pair.idle.modelRequestMs + pair.idle.toolMs - pair.plain.modelRequestMs - pair.plain.toolMs;
}

function checked(
  loop: string,
  status: string,
  iterations: number,
  requests: Parameters<typeof msPerIteration>[0],
): number {
  if (status !== 'budget_exhausted' || iterations !== overheadIterations || requests.length !== overheadIterations) {
    throw new Error(
      `${loop}: expected ${overheadIterations} iterations ending on the budget, got ${status} after ${iterations} (${requests.length} model requests)`,
    );
  }
  return msPerIteration(requests);
}

export function formatOverhead(result: OverheadResult): string[] {
  const ms = (value: number) => `${number(value)} ms`;
  const timeline = result.workflowTimeline;
  return [
    `1. Orchestration overhead per iteration (${result.iterations}-iteration scripted run, list_files each iteration, fake API answering at once)`,
    `  goal: under ${goals.addedMsPerIteration} ms added per iteration: ${verdict(result.goalsMet.addedMsPerIteration)} (median ${ms(result.addedMsPerIteration.median)})`,
    `  goal: under ${percent(goals.shareOfRun, 0)} of a run with ${modelCallMs / 1000} s model calls: ${verdict(result.goalsMet.shareOfRun)} (median ${percent(result.shareOfTwoSecondRun.median, 2)})`,
    ...(result.floorMsPerIteration ? [`  ${floorSentence(result)}`] : []),
    ...figureTable([
      {
        label: `added by Temporal, share of an iteration with a ${modelCallMs / 1000} s model call`,
        figure: result.shareOfTwoSecondRun,
        format: (value) => percent(value, 2),
      },
      { label: 'added by Temporal per iteration', figure: result.addedMsPerIteration, format: ms },
      { label: 'Temporal workflow, per iteration', figure: result.workflowMsPerIteration, format: ms },
      { label: 'plain in-process loop, per iteration', figure: result.plainLoopMsPerIteration, format: ms },
      ...(result.floorMsPerIteration && result.aboveFloorMsPerIteration
        ? [
            {
              label: "floor: trivial workflow of the agent's shape, per iteration",
              figure: result.floorMsPerIteration,
              format: ms,
            },
            { label: 'added above the floor (added − floor)', figure: result.aboveFloorMsPerIteration, format: ms },
          ]
        : []),
    ]),
    "  Where a workflow iteration goes (per iteration, from the event times the server wrote into each run's history):",
    ...figureTable([
      { label: 'tasks waiting for a worker (scheduled → started), all', figure: timeline.dispatchMs, format: ms },
      { label: 'workflow tasks: waiting (scheduled → started)', figure: timeline.workflowTaskWaitMs, format: ms },
      { label: 'workflow tasks: running (started → completed)', figure: timeline.workflowTaskMs, format: ms },
      { label: 'callModel activity: waiting (schedule-to-start)', figure: timeline.callModelWaitMs, format: ms },
      { label: 'callModel activity: running (transcript, model request)', figure: timeline.callModelMs, format: ms },
      { label: 'runTool activity: waiting (schedule-to-start)', figure: timeline.runToolWaitMs, format: ms },
      { label: 'runTool activity: running (list_files)', figure: timeline.runToolMs, format: ms },
      { label: 'between tasks', figure: timeline.otherMs, format: ms },
    ]),
    ...(result.floorTimeline ? floorComparison(timeline, result.floorTimeline) : []),
    ...(result.serverTimes ? serverComparison(result.serverTimes) : []),
    ...(result.cpu ? formatIterationCpu(result.cpu) : []),
    '  Measured in the worker (per iteration):',
    ...figureTable([
      {
        label: 'tool in the sandbox host (list_files: docker exec and around it)',
        figure: result.worker.toolRunMs,
        format: ms,
      },
      {
        label: 'conversation for the model call (cache, or transcript query)',
        figure: result.worker.transcriptMs,
        format: ms,
      },
      {
        label: 'transcript queries per run (0: every call hit the cache)',
        figure: result.worker.transcriptQueries,
        format: (value) => number(value, 0),
      },
      ...(result.worker.modelCallMs && result.worker.modelRequestMs
        ? [
            { label: 'callModel activity function, whole', figure: result.worker.modelCallMs, format: ms },
            {
              label: 'of it the model request (requestModelTurn: body, HTTP, fake API)',
              figure: result.worker.modelRequestMs,
              format: ms,
            },
          ]
        : []),
      ...(result.plainLoop
        ? [
            {
              label: 'plain loop: model request (the same requestModelTurn)',
              figure: result.plainLoop.modelRequestMs,
              format: ms,
            },
            { label: 'plain loop: tool in the sandbox host', figure: result.plainLoop.toolMs, format: ms },
          ]
        : []),
      ...(result.idlePlainLoop
        ? [
            {
              label: "plain loop idle before each step (half the floor's iteration): idle wait",
              figure: result.idlePlainLoop.idleBeforeStepMs,
              format: ms,
            },
            { label: '  its model request', figure: result.idlePlainLoop.modelRequestMs, format: ms },
            { label: '  its tool in the sandbox host', figure: result.idlePlainLoop.toolMs, format: ms },
            {
              label: "  the same work's cost of an idle CPU (idle − busy plain loop)",
              figure: result.idlePlainLoop.addedMs,
              format: ms,
            },
          ]
        : []),
      ...(result.aboveFloorLessIdleMsPerIteration
        ? [
            {
              label: "above the floor, less the idle CPU's cost: our code and the SDK's path for it",
              figure: result.aboveFloorLessIdleMsPerIteration,
              format: ms,
            },
          ]
        : []),
      ...(result.aboveFloorWithoutWorkMsPerIteration
        ? [
            {
              label: 'above the floor, the work (tool, model request) taken out of both loops as each timed it',
              figure: result.aboveFloorWithoutWorkMsPerIteration,
              format: ms,
            },
          ]
        : []),
    ]),
    '  An iteration is the time between consecutive model requests at the fake API. Both loops use src/agent, the same SandboxHost',
    `  class and the same SDK client. Share = added / (${modelCallMs} ms + workflow ms per iteration).`,
  ];
}

/** Medians of ours beside the floor's, per part of an iteration. */
function floorComparison(
  ours: Record<keyof IterationTimeline, Figure>,
  floor: Record<keyof IterationTimeline, Figure>,
): string[] {
  const rows: Array<[string, keyof IterationTimeline]> = [
    ['iteration (server clock: model call scheduled → next)', 'iterationMs'],
    ['tasks waiting for a worker, all', 'dispatchMs'],
    ['workflow tasks: waiting', 'workflowTaskWaitMs'],
    ['workflow tasks: running', 'workflowTaskMs'],
    ['callModel: waiting', 'callModelWaitMs'],
    ['callModel: running', 'callModelMs'],
    ['runTool: waiting', 'runToolWaitMs'],
    ['runTool: running', 'runToolMs'],
    ['between tasks', 'otherMs'],
  ];
  return [
    "  Beside the floor (medians per iteration; the floor's activities are no-ops named like ours, on other task queues):",
    ...table(
      ['', 'ours', 'floor', 'ours − floor'],
      rows.map(([label, key]) => [
        label,
        `${number(ours[key].median)} ms`,
        `${number(floor[key].median)} ms`,
        `${signed(ours[key].median - floor[key].median)} ms`,
      ]),
    ),
  ];
}

/**
 * The floor in one sentence (medians): what the same server needs for a trivial workflow of the
 * agent's shape, how much of that is the server itself, and what ours adds above it.
 */
export function floorSentence(result: OverheadResult): string {
  const parts = [
    `the floor, a trivial workflow of the same shape on this server, takes ${number(result.floorMsPerIteration?.median ?? 0)} ms per iteration`,
  ];
  if (result.serverTimes)
    parts.push(
      `${number(result.serverTimes.floor.perIterationMs.median)} ms of it the server's own handling of its four tasks (its latency histograms)`,
    );
  if (result.cpu) {
    parts.push(
      `the server burns ${number(result.cpu.floor.serverMs.median)} ms of CPU per such iteration and its worker ${number(result.cpu.floor.workerMs.median)} ms ` +
        `(${availableParallelism()} cores here)`,
    );
  }
  if (result.aboveFloorMsPerIteration) {
    parts.push(
      `ours adds ${number(result.aboveFloorMsPerIteration.median)} ms above the floor` +
        (result.idlePlainLoop
          ? `, ${number(result.idlePlainLoop.addedMs.median)} ms of which the same request and tool take longer on a CPU that idled between steps`
          : ''),
    );
  }
  return `${parts.join('; ')}.`;
}

/** The server's own handling per task and per iteration, ours beside the floor's (medians). */
function serverComparison(times: NonNullable<OverheadResult['serverTimes']>): string[] {
  return [
    '  What the server itself spends (medians; from its own latency histograms, read before and after each run):',
    ...table(
      ['', 'ours', 'floor', 'ours − floor'],
      serverTaskTimeRows.map(([label, key]) => [
        label,
        `${number(times.ours[key].median)} ms`,
        `${number(times.floor[key].median)} ms`,
        `${signed(times.ours[key].median - times.floor[key].median)} ms`,
      ]),
    ),
  ];
}

export function verdict(met: boolean): string {
  return met ? 'met' : 'NOT met';
}
