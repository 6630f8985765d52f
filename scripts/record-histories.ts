// Records the Temporal histories of scripted runs under test/histories/, for the replay test.
// Run it after an intentional change to the workflow (together with `patched()` guards where
// runs of the old code may still be in flight): `node --import tsx scripts/record-histories.ts`,
// or name scenarios to record only those: `... scripts/record-histories.ts approved-patch-reused`.
// Histories of code paths that only old runs take are kept as they were recorded, never recorded
// again: approved.json (the report computed the approved patch a second time),
// waited-for-a-model-worker-before-backoff.json (waits for a model worker 30 s at a time, two
// of them, recorded by this script's scenario on the code before waits backed off),
// final-run-in-the-model-sandbox.json (budget-exhausted-after-an-edit on the code before the final
// test run and the verification ran in a fresh sandbox; approved.json runs that verification).
import { execFileSync } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DebugInputJson } from '../src/agent/input.js';
import { startDebugRun } from '../src/client.js';
import { loadConfig, projectRoot } from '../src/config.js';
import { temporalCliPath } from '../src/temporal/embeddedServer.js';
import { approveUpdate, hintSignal, sandboxAdmissionIdFor, statusQuery } from '../src/temporal/definitions.js';
import { fixtureInput, loadFixture } from '../src/demo/fixtures.js';
import { FakeAnthropicApi } from '../src/demo/fakeAnthropicApi.js';
import { modelEndpointId } from '../src/model/endpoint.js';
import { startTestServer, startTestWorker, uniqueTaskQueue } from '../harness/devStack.js';
import type { ScriptStep } from '../src/demo/script.js';

const fixture = await loadFixture('01_off_by_one');
const steps = fixture.script.responses as ScriptStep[];
const parallel: ScriptStep = {
  thought: 'Reading the code and its test together.',
  tool_calls: [
    { name: 'read_file', input: { path: 'buggy_code.py' } },
    { name: 'read_file', input: { path: 'test_buggy_code.py' } },
    { name: 'unknown_tool', input: {} },
  ],
};
const leaveBinaryFile: ScriptStep = {
  thought: 'Saving a scratch file.',
  tool_calls: [{ name: 'run_command', input: { command: "printf '\\000\\001\\002' > scratch.bin" } }],
};
const scenarios: Array<{
  name: string;
  responses: ScriptStep[];
  input?: Partial<DebugInputJson>;
  hint?: boolean;
  /** Answer the approval gate with `approve` once the run waits for it. */
  approve?: boolean;
  /** Also record this child workflow's history (parallel attempts). */
  child?: string;
  /** Models the fake API answers 529 (overloaded) for. */
  overloadedModels?: string[];
  /** The run's model worker starts only after this many of the run's waits for it timed out. */
  modelWorkerAfterWaits?: number;
  /** Also record the history of the task queue's sandbox queue (workflows/sandboxAdmission.ts), still open. */
  sandboxQueue?: string;
}> = [
  { name: 'fixed-off-by-one', responses: steps },
  { name: 'parallel-calls-and-a-hint', responses: [steps[0] as ScriptStep, parallel, ...steps.slice(3)], hint: true },
  { name: 'continue-as-new', responses: steps, input: { continueAsNewEvery: 3 } },
  { name: 'budget-exhausted', responses: steps, input: { budgets: { maxIterations: 2 } } },
  // Stopped after an edit no suite run has seen: the end runs the suite once more (in a fresh sandbox).
  { name: 'budget-exhausted-after-an-edit', responses: steps, input: { budgets: { maxIterations: 4 } } },
  { name: 'approved-patch-reused', responses: steps, input: { approve: true }, approve: true },
  { name: 'two-attempts', responses: steps, input: { attempts: 2 }, child: 'attempt-1' },
  {
    name: 'fallback-on-overload',
    responses: steps,
    input: { model: 'claude-opus-4-6', fallbackModel: 'claude-haiku-4-5', fallbackAfterSeconds: 0 },
    overloadedModels: ['claude-opus-4-6'],
  },
  {
    name: 'waited-for-a-model-worker',
    responses: steps,
    input: { modelWorkerWait: { firstSeconds: 1, maxSeconds: 2 } },
    modelWorkerAfterWaits: 3,
  },
  // A command leaves a binary file, which the verification's fresh sandbox undoes (the patch leaves it out).
  {
    name: 'undid-what-the-patch-leaves-out',
    responses: [leaveBinaryFile, ...steps],
    input: { allowCommands: true },
  },
  // A run placed by the sandbox queue on a host with capacity (issue 26), and the queue's own history.
  { name: 'placed-by-the-sandbox-queue', responses: steps, sandboxQueue: 'sandbox-queue' },
];
const named = process.argv.slice(2);
const unknown = named.filter((name) => !scenarios.some((scenario) => scenario.name === name));
if (unknown.length > 0)
  throw new Error(
    `No such scenario: ${unknown.join(', ')} (scenarios: ${scenarios.map((scenario) => scenario.name).join(', ')})`,
  );
const server = await startTestServer();
try {
  for (const scenario of scenarios.filter((each) => named.length === 0 || named.includes(each.name))) {
    const fake = new FakeAnthropicApi({
      scripts: { [fixture.name]: { responses: scenario.responses } },
      latencyMs: scenario.hint ? 300 : 0,
      overloadedModels: scenario.overloadedModels,
    });
    await fake.start();
    const taskQueue = uniqueTaskQueue('history');
    // A worker of another endpoint prepares the sandbox while the run waits for its own.
    const waiting = scenario.modelWorkerAfterWaits
      ? await startTestWorker(server, { fake, taskQueue, apiKey: 'another-key' })
      : null;
    const startWorker = () => startTestWorker(server, { fake, taskQueue });
    const worker = waiting ? null : await startWorker();
    const handle = await startDebugRun(server.client, {
      input: fixtureInput(fixture, {
        ...scenario.input,
        ...(waiting ? { modelEndpoint: modelEndpointId({ apiKey: 'test-key', baseURL: fake.url }) as string } : {}),
      }),
      taskQueue,
      workflowId: `history-${scenario.name}`,
    });
    const late = waiting ? await startAfterWaits(handle, scenario.modelWorkerAfterWaits as number, startWorker) : null;
    if (scenario.hint) await handle.signal(hintSignal, 'Check the loop bounds.');
    if (scenario.approve) {
      while ((await handle.query(statusQuery)).phase !== 'awaiting_approval')
        await new Promise((resolve) => setTimeout(resolve, 200));
      await handle.executeUpdate(approveUpdate);
    }
    await handle.result();
    await record(scenario.name, handle.workflowId, handle.firstExecutionRunId);
    if (scenario.child) await record(`${scenario.name}-${scenario.child}`, `${handle.workflowId}-${scenario.child}`);
    if (scenario.sandboxQueue) await record(scenario.sandboxQueue, sandboxAdmissionIdFor(taskQueue));
    for (const each of [worker, late, waiting]) await each?.stop();
    await fake.stop();
  }
} finally {
  await server.stop();
}

/** Starts `start` once the run's model call has waited (timed out waiting for a worker) `waits` times. */
async function startAfterWaits<T>(handle: WorkflowHandle, waits: number, start: () => Promise<T>): Promise<T> {
  const timedOut = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT;
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    if (events.filter((event) => event.eventType === timedOut).length >= waits) return start();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The first run's history (for continue-as-new, the run that handed over), exported by the Temporal CLI: the JSON a user gets from `temporal workflow show --output json`. */
async function record(name: string, workflowId: string, runId?: string): Promise<void> {
  const json = execFileSync(
    temporalCliPath(loadConfig()),
    [
      'workflow',
      'show',
      '--address',
      server.address,
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--output',
      'json',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  await writeFile(join(projectRoot, 'test', 'histories', `${name}.json`), json);
  console.log(`recorded ${name}: ${(JSON.parse(json) as { events: unknown[] }).events.length} events`);
}
