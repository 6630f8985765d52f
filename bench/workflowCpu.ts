// The workflow code's own cost per iteration, without the server or the activities: a recorded
// run of the overhead benchmark (30 iterations of list_files) and one of the floor's trivial
// workflow of the same shape, each replayed many times by the SDK's replayer (the same worker
// thread, V8 context and promise hooks a live worker uses), alternating. What ours costs above
// the floor is the CPU time our workflow code adds to every iteration's two workflow tasks.
//   node --import tsx bench/workflowCpu.ts [replays] [folder] [variant workflows/index.ts]
// With a folder, the two histories are kept there and reused (compare code changes against the
// same histories); without one, they are recorded first (a server, a worker and Docker).
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode } from '@temporalio/worker';
import { installQuietRuntime, workflowBundle } from '../src/worker.js';
import { agentShapedFloorName, typescriptFloorRunner } from './dispatchFloor.js';
import { listFilesStep, openBenchEnvironment, repeatedStep } from './environment.js';
import { overheadIterations } from './overhead.js';
import { figure, figureTable, number, repeat } from './stats.js';

type History = ReturnType<typeof historyFromJSON>;
const replays = Number(process.argv[2] ?? 20);
const folder = process.argv[3];
/** Another copy of the workflow code (its index.ts), replayed beside ours: a change measured side by side. */
const variantPath = process.argv[4];

async function recordHistories(): Promise<{ ours: History; floor: History }> {
  const env = await openBenchEnvironment();
  try {
    const repo = await env.tinyRepository('bench_workflow_cpu', repeatedStep(listFilesStep, overheadIterations + 5));
    const { handle } = await env.runWorkflow({ repo, budgets: { maxIterations: overheadIterations } });
    const floorRunner = await typescriptFloorRunner(env.server.client, env.server.address, agentShapedFloorName, {}, { agentShaped: true });
    try {
      const floorId = await floorRunner.run(overheadIterations);
      return { ours: await handle.fetchHistory(), floor: await env.server.client.workflow.getHandle(floorId).fetchHistory() };
    } finally {
      await floorRunner.close();
    }
  } finally {
    await env.close();
  }
}

async function histories(): Promise<{ ours: History; floor: History }> {
  if (folder && existsSync(join(folder, 'ours.json'))) {
    const read = async (name: string) => historyFromJSON(JSON.parse(await readFile(join(folder, name), 'utf8')));
    return { ours: await read('ours.json'), floor: await read('floor.json') };
  }
  const recorded = await recordHistories();
  if (folder) {
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'ours.json'), historyToJSON(recorded.ours));
    await writeFile(join(folder, 'floor.json'), historyToJSON(recorded.floor));
  }
  return recorded;
}

/** Milliseconds per iteration of replaying `history` `times` times in one replay worker. */
async function replayMs(bundle: WorkflowBundleWithSourceMap, history: History, workflowId: string, times: number): Promise<number> {
  const started = performance.now();
  const all = Array.from({ length: times }, (_, index) => ({ workflowId: `${workflowId}-${index}`, history }));
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, all)) {
    if (result.error) throw new Error(`replay of ${workflowId} failed: ${result.error.message}`);
  }
  return (performance.now() - started) / times / overheadIterations;
}

installQuietRuntime();
const { ours, floor } = await histories();
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const oursBundle = await workflowBundle();
const floorBundle = await bundleWorkflowCode({ workflowsPath: join(import.meta.dirname, 'floor', 'trivialWorkflow.ts'), logger: silent });
await replayMs(oursBundle, ours, 'warm-ours', 2);
await replayMs(floorBundle, floor, 'warm-floor', 2);
const variantBundle = variantPath ? await bundleWorkflowCode({ workflowsPath: variantPath, logger: silent }) : null;
if (variantBundle) await replayMs(variantBundle, ours, 'warm-variant', 2);
const rounds = await repeat(5, async () => ({
  ours: await replayMs(oursBundle, ours, 'ours', replays),
  floor: await replayMs(floorBundle, floor, 'floor', replays),
  variant: variantBundle ? await replayMs(variantBundle, ours, 'variant', replays) : 0,
}));
const ms = (value: number) => `${number(value, 2)} ms`;
console.log(`Replaying a ${overheadIterations}-iteration run ${replays} times, 5 rounds (workflow code and SDK, per iteration):`);
console.log(
  figureTable([
    { label: 'ours (the overhead benchmark\'s run)', figure: figure(rounds.map((round) => round.ours)), format: ms },
    { label: 'the floor\'s trivial workflow of the agent\'s shape', figure: figure(rounds.map((round) => round.floor)), format: ms },
    { label: 'ours − floor', figure: figure(rounds.map((round) => round.ours - round.floor)), format: ms },
    ...(variantBundle
      ? [
          { label: `variant (${variantPath})`, figure: figure(rounds.map((round) => round.variant)), format: ms },
          { label: 'variant − ours', figure: figure(rounds.map((round) => round.variant - round.ours)), format: ms },
        ]
      : []),
  ]).join('\n'),
);
