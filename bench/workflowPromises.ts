// How many promises the workflow code creates per iteration: a deterministic measure of the
// workflow task's own CPU cost. The TypeScript SDK keeps a stack trace of every promise created
// in workflow code (for the __stack_trace query): a V8 promise hook that captures and
// source-maps a stack each time. Profiled during the overhead benchmark (node --cpu-prof) on this
// 2-core machine, that hook was the largest part of our workflow code's time, about 0.1–0.2 ms
// per promise; every async function layer and every await on the iteration's path adds one or two.
// A recorded run of the overhead benchmark (30 iterations of list_files) and one of the floor's
// trivial workflow of the agent's shape are replayed once each (the SDK replays on the main thread),
// counting the promises made in workflow contexts.
//   node --import tsx bench/workflowPromises.ts [folder] [variant workflows/index.ts]
// With a folder, the two histories are kept there and reused; without one, they are recorded
// (a server, a worker and Docker). A variant (another copy of workflows/, absolute path to its
// index.ts) replays our history beside ours: a change to the loop measured before it is made.
// Measured (issue 14, before the run-core rewrite): ours 23.9 per iteration, the floor 6.3; a
// copy whose loop skipped three async layers when they had nothing to wait for (the budget check
// when no pause is set, the continue-as-new check when none is due, Promise.all for a single tool
// call) made 17.8. Then the model step's wait-for-a-worker loop and the tool-call loop moved inline
// and sandbox work lost its async layer on the common path: 12.9.
import v8 from 'node:v8';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { installQuietRuntime, workflowsPath } from '../src/worker.js';
import { agentShapedFloorName, typescriptFloorRunner } from './dispatchFloor.js';
import { listFilesStep, openBenchEnvironment, repeatedStep } from './benchStack.js';
import { overheadIterations } from './overhead.js';
import { closingViewSinks } from '../src/temporal/closingViews.js';

type History = ReturnType<typeof historyFromJSON>;
const folder = process.argv[2];
const variantPath = process.argv[3];

async function recordHistories(): Promise<{ ours: History; floor: History }> {
  const env = await openBenchEnvironment();
  try {
    const repo = await env.tinyRepository(
      'bench_workflow_promises',
      repeatedStep(listFilesStep, overheadIterations + 5),
    );
    const { handle } = await env.runWorkflow({ repo, budgets: { maxIterations: overheadIterations } });
    const floorRunner = await typescriptFloorRunner(
      env.server.client,
      env.server.address,
      agentShapedFloorName,
      {},
      { agentShaped: true },
    );
    try {
      const floorId = await floorRunner.run(overheadIterations);
      return {
        ours: await handle.fetchHistory(),
        floor: await env.server.client.workflow.getHandle(floorId).fetchHistory(),
      };
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

installQuietRuntime();
const { ours, floor } = await histories();
const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
// Promises of workflow code belong to the workflow's V8 context: their constructor is not this one's.
let promises = 0;
v8.promiseHooks.onInit((promise: Promise<unknown>) => {
  if (promise.constructor !== Promise) promises++;
});
const runs: Array<[string, string, History]> = [
  ['ours (workflows/)', workflowsPath, ours],
  [
    "the floor's trivial workflow of the agent's shape",
    join(import.meta.dirname, 'floor', 'trivialWorkflow.ts'),
    floor,
  ],
  ...(variantPath ? [[`variant (${variantPath})`, variantPath, ours] as [string, string, History]] : []),
];
console.log(
  `Promises made by workflow code while replaying a ${overheadIterations}-iteration run (the whole run, per iteration):`,
);
for (const [name, path, history] of runs) {
  const bundle = await bundleWorkflowCode({ workflowsPath: path, logger: silent });
  promises = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle, sinks: closingViewSinks }, [
    { workflowId: `promises-${name}`, history },
  ])) {
    if (result.error) throw new Error(`${name}: the replay failed: ${result.error.message}`);
  }
  console.log(`  ${name}: ${promises} (${(promises / overheadIterations).toFixed(1)} per iteration)`);
}
