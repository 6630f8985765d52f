// A run whose model endpoint no worker serves may wait for days: its history must stay bounded.
// Each wait for a worker is twice the last (up to modelWorkerWait.maxSeconds) and the run
// continues as new inside the wait when the server suggests it; a stop ends a long wait at once.
// The dev server here suggests continue-as-new after 60 events, so that many waits happen in a
// minute; the waits themselves are shortened through the run's input.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { createModelClient } from '../../src/model/anthropic.js';
import { modelEndpointId } from '../../src/model/endpoint.js';
import { statusQuery, stopSignal } from '../../src/temporal/definitions.js';
import { devServerFlags } from '../../src/temporal/serverSettings.js';
import { startWorker } from '../../src/worker.js';
import { containersOf, startTestServer, uniqueTaskQueue, type TestServer } from '../../harness/devStack.js';

const { EventType } = proto.temporal.api.enums.v1;
const suggestContinueAsNewAfter = 60;
let server: TestServer;
let fixture: Fixture;
const cleanups: Array<() => Promise<void>> = [];

before(async () => {
  server = await startTestServer({
    extraArgs: [
      ...devServerFlags({ databaseFile: false }),
      '--dynamic-config-value',
      `limit.historyCount.suggestContinueAsNew=${suggestContinueAsNewAfter}`,
    ],
  });
  fixture = await loadFixture('01_off_by_one');
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await server?.stop();
});

/** A worker with these model settings on the task queue, answering from a fake API of its own. */
async function workerWithKey(apiKey: string, taskQueue: string, hostId: string) {
  const fake = new FakeAnthropicApi({ scripts: scriptsByName([fixture]) });
  await fake.start();
  cleanups.push(() => fake.stop());
  const endpoint = modelEndpointId({ apiKey, baseURL: fake.url }) as string;
  const worker = await startWorker({
    config: server.config({
      DURABLE_DEBUGGER_HOST_ID: hostId,
      DURABLE_DEBUGGER_WORKSPACES: join(server.home, 'workspaces', hostId),
    }),
    address: server.address,
    anthropic: createModelClient({ apiKey, baseURL: fake.url, timeoutMs: 30_000 }),
    modelEndpoint: endpoint,
    describeAnswerer: () => `key ${apiKey}`,
    taskQueue,
  });
  cleanups.push(() => worker.shutdown());
  return { fake, endpoint };
}

/** Every workflow run of `workflowId` (continued-as-new ones too): its events and how many model waits timed out. */
async function runsOf(workflowId: string): Promise<Array<{ events: number; waits: number; continued: boolean }>> {
  const runs: Array<{ events: number; waits: number; continued: boolean }> = [];
  for await (const execution of server.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    const history = await server.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    const types = (history.events ?? []).map((event) => event.eventType);
    runs.push({
      events: types.length,
      waits: types.filter((type) => type === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT).length,
      continued: execution.status.name === 'CONTINUED_AS_NEW',
    });
  }
  return runs;
}

async function until<T>(what: string, probe: () => Promise<T | null | false>, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

test('a run waiting for a model worker through many waits keeps every history run small, then goes on when a worker comes', async () => {
  const taskQueue = uniqueTaskQueue('waits');
  // This worker prepares the sandbox but answers only its own endpoint's model calls.
  await workerWithKey('sk-other-key', taskQueue, 'host-other');
  const carolKey = 'sk-carol-key';
  const carolUrlProbe = new FakeAnthropicApi({ scripts: scriptsByName([fixture]) });
  // Carol's endpoint is named by her base URL and key: start her fake now, her worker later.
  await carolUrlProbe.start();
  cleanups.push(() => carolUrlProbe.stop());
  const carolEndpoint = modelEndpointId({ apiKey: carolKey, baseURL: carolUrlProbe.url }) as string;

  const handle = await startDebugRun(server.client, {
    input: fixtureInput(fixture, { modelEndpoint: carolEndpoint, modelWorkerWait: { firstSeconds: 1, maxSeconds: 2 } }),
    taskQueue,
    workflowId: 'waits-for-a-model-worker',
  });
  const wanted = 25;
  const runs = await until(`${wanted} waits`, async () => {
    const seen = await runsOf(handle.workflowId);
    return seen.reduce((sum, run) => sum + run.waits, 0) >= wanted && seen;
  });
  const status = await handle.query(statusQuery);
  assert.match(status.waitingFor ?? '', new RegExp(`model endpoint ${carolEndpoint}`));

  // Carol's worker comes: the waiting call is taken and the run ends fixed.
  const worker = await startWorker({
    config: server.config({
      DURABLE_DEBUGGER_HOST_ID: 'host-carol',
      DURABLE_DEBUGGER_WORKSPACES: join(server.home, 'workspaces', 'host-carol'),
    }),
    address: server.address,
    anthropic: createModelClient({ apiKey: carolKey, baseURL: carolUrlProbe.url, timeoutMs: 30_000 }),
    modelEndpoint: carolEndpoint,
    describeAnswerer: () => 'endpoint carol',
    taskQueue,
  });
  cleanups.push(() => worker.shutdown());
  const report = (await server.client.workflow.getHandle(handle.workflowId).result()) as DebugReport;
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.answeredBy, 'endpoint carol');
  // The iteration that waited is counted once, whichever run took the reply.
  assert.equal(report.iterations, carolUrlProbe.requests.length);

  const all = await runsOf(handle.workflowId);
  const waits = all.reduce((sum, run) => sum + run.waits, 0);
  const largest = Math.max(...all.map((run) => run.events));
  console.log(
    `${waits} waits for a model worker (${runs.length} runs while waiting), ${all.length} workflow runs in all, the largest ${largest} events; events per run: ${all.map((run) => run.events).join(', ')}`,
  );
  assert.ok(all.filter((run) => run.continued).length >= 2, 'the run continued as new inside its wait');
  // The server suggests continuing after 60 events; a run goes on to at most a wait's worth more.
  assert.ok(largest <= suggestContinueAsNewAfter + 40, `a run of ${largest} events`);
  assert.equal(await containersOf(server), 0);
});

test('a stop ends a long wait for a model worker at once, not when the wait ends', async () => {
  const taskQueue = uniqueTaskQueue('long-wait');
  await workerWithKey('sk-other-key-2', taskQueue, 'host-other-2');
  const handle: WorkflowHandle = await startDebugRun(server.client, {
    // Waits of 3 s, 6 s, then 12 s: the stop comes early in the third.
    input: fixtureInput(fixture, {
      modelEndpoint: 'nobody.example-0002',
      modelWorkerWait: { firstSeconds: 3, maxSeconds: 600 },
    }),
    taskQueue,
    workflowId: 'stopped-in-a-long-wait',
  });
  // The list reads the visibility store, which may not show a run just started: no run yet counts as no wait.
  await until(
    'two waits timed out',
    async () => (await runsOf(handle.workflowId)).reduce((sum, run) => sum + run.waits, 0) >= 2,
  );
  const stoppedAt = Date.now();
  await handle.signal(stopSignal, 'nobody serves this endpoint');
  const report = (await handle.result()) as DebugReport;
  const tookMs = Date.now() - stoppedAt;
  assert.equal(report.stopCondition, 'stop_signal');
  assert.equal(report.iterations, 1);
  assert.ok(tookMs < 6_000, `the stop took ${tookMs} ms to end the wait`);
  assert.equal(await containersOf(server), 0);
});
