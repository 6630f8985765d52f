// Model calls are routed by model settings: workers with different endpoints (base URL and key)
// on one task queue never answer each other's runs, and a run whose endpoint no worker serves
// waits, says so in its status, and goes on when such a worker comes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { createModelClient } from '../../src/model/anthropic.js';
import { modelEndpointId } from '../../src/model/endpoint.js';
import { statusQuery, stopSignal } from '../../src/temporal/definitions.js';
import { startWorker, type RunningWorker } from '../../src/worker.js';
import { containersOf, startTestServer, uniqueTaskQueue, type TestServer } from '../../harness/devStack.js';
import { runCli, type CliResult } from '../support/cli.js';

let server: TestServer;
let fixture: Fixture;
const cleanups: Array<() => Promise<void>> = [];

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await server?.stop();
});

interface Endpoint {
  name: string;
  fake: FakeAnthropicApi;
  apiKey: string;
  id: string;
}

async function endpoint(name: string, apiKey: string): Promise<Endpoint> {
  const fake = new FakeAnthropicApi({ scripts: scriptsByName([fixture]), latencyMs: 100 });
  await fake.start();
  cleanups.push(() => fake.stop());
  return { name, fake, apiKey, id: modelEndpointId({ apiKey, baseURL: fake.url }) as string };
}

/** A worker whose model settings are `endpoint`'s: as `durable-debugger worker` with that key and base URL. */
async function workerFor(endpoint: Endpoint, taskQueue: string, hostId: string): Promise<RunningWorker> {
  const worker = await startWorker({
    config: server.config({
      DURABLE_DEBUGGER_HOST_ID: hostId,
      DURABLE_DEBUGGER_WORKSPACES: join(server.home, 'workspaces', hostId),
    }),
    address: server.address,
    anthropic: createModelClient({ apiKey: endpoint.apiKey, baseURL: endpoint.fake.url, timeoutMs: 30_000 }),
    modelEndpoint: endpoint.id,
    describeAnswerer: () => `endpoint ${endpoint.name}`,
    taskQueue,
  });
  cleanups.push(() => worker.shutdown());
  return worker;
}

/** The run marker each request carries (in the task's goal), so a request can be traced to its run. */
function runsSeenBy(fake: FakeAnthropicApi): Set<string> {
  return new Set(
    fake.requests.flatMap((request) => JSON.stringify(request.body.messages).match(/routing-run-\d+/g) ?? []),
  );
}

test('two workers with different endpoints on one task queue: ten concurrent runs, no call answered by the wrong endpoint', async () => {
  const taskQueue = uniqueTaskQueue('routing');
  const alice = await endpoint('alice', 'sk-alice-key');
  const bob = await endpoint('bob', 'sk-bob-key');
  assert.notEqual(alice.id, bob.id);
  for (const { id, apiKey } of [alice, bob])
    assert.ok(!id.includes(apiKey), 'the endpoint name does not contain the key');

  const aliceWorker = await workerFor(alice, taskQueue, 'host-alice');
  const bobWorker = await workerFor(bob, taskQueue, 'host-bob');
  // The default endpoint (runs that name none) is served by one kind of worker only: the first one.
  assert.equal(aliceWorker.servesDefaultEndpoint, true);
  assert.equal(bobWorker.servesDefaultEndpoint, false);

  // Four runs of Alice's, four of Bob's, two naming no endpoint (as from the Temporal CLI), all at once.
  const plan = Array.from({ length: 10 }, (_, index) => ({
    marker: `routing-run-${index}`,
    endpoint: index < 4 ? alice : index < 8 ? bob : undefined,
  }));
  const reports = await Promise.all(
    plan.map(async ({ marker, endpoint: chosen }) => {
      const handle = await startDebugRun(server.client, {
        input: fixtureInput(fixture, {
          goal: `Make the failing tests pass (${marker}).`,
          ...(chosen ? { modelEndpoint: chosen.id } : {}),
        }),
        taskQueue,
        workflowId: marker,
      });
      return (await handle.result()) as DebugReport;
    }),
  );

  const expectedBy = (index: number) => (plan[index]?.endpoint ?? alice).name;
  reports.forEach((report, index) => {
    assert.equal(report.status, 'fixed', `${plan[index]?.marker}: ${report.stopDetail}`);
    assert.equal(
      report.answeredBy,
      `endpoint ${expectedBy(index)}`,
      `${plan[index]?.marker} answered by the wrong endpoint`,
    );
  });
  const wrong: string[] = [];
  for (const candidate of [alice, bob]) {
    for (const marker of runsSeenBy(candidate.fake)) {
      const index = Number(marker.split('-').at(-1));
      if (expectedBy(index) !== candidate.name) wrong.push(`${marker} reached ${candidate.name}`);
    }
    assert.deepEqual(
      new Set(candidate.fake.requests.map((request) => request.apiKey)),
      new Set([candidate.apiKey]),
      'each fake saw only its own key',
    );
    assert.equal(candidate.fake.rejected.length, 0);
  }
  assert.deepEqual(wrong, [], 'zero calls answered by the wrong endpoint');
  assert.equal(runsSeenBy(alice.fake).size, 6);
  assert.equal(runsSeenBy(bob.fake).size, 4);
  assert.equal(await containersOf(server), 0);
});

test('a run whose endpoint no worker serves waits, says so in `status`, and goes on when such a worker starts; a stop or the time budget ends the wait', async () => {
  const taskQueue = uniqueTaskQueue('unserved');
  const carol = await endpoint('carol', 'sk-carol-key');
  // A worker with other settings serves the task queue: it prepares the sandboxes but must not answer.
  const other = await endpoint('other', 'sk-other-key');
  await workerFor(other, taskQueue, 'host-other');

  const waiting = await startDebugRun(server.client, {
    input: fixtureInput(fixture, { modelEndpoint: carol.id }),
    taskQueue,
    workflowId: 'routing-waits',
  });
  const stopped = await startDebugRun(server.client, {
    input: fixtureInput(fixture, { modelEndpoint: 'nobody.example-0000' }),
    taskQueue,
    workflowId: 'routing-stopped-while-waiting',
  });

  const timedOut = await startDebugRun(server.client, {
    input: fixtureInput(fixture, { modelEndpoint: 'nobody.example-0001', budgets: { maxMinutes: 1 } }),
    taskQueue,
    workflowId: 'routing-time-budget-while-waiting',
  });

  // The CLI's `status` says what the run waits for as soon as it asks for the model.
  const deadline = Date.now() + 120_000;
  while ((await waiting.query(statusQuery)).phase !== 'thinking') {
    assert.ok(Date.now() < deadline, 'the run reached its first model call');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const cli = await cliOn(taskQueue, ['status', 'routing-waits']);
  assert.equal(cli.code, 0, cli.output);
  assert.match(cli.output, new RegExp(`waiting for a worker serving model endpoint ${carol.id}`));
  assert.match(cli.output, /with the ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY this run was started with/);

  // The workflow's own status query says it too, once the call has waited a while.
  let status = await waiting.query(statusQuery);
  while (!status.waitingFor) {
    assert.ok(Date.now() < deadline, 'the status query says the run waits');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    status = await waiting.query(statusQuery);
  }
  assert.match(
    status.waitingFor,
    new RegExp(`model endpoint ${carol.id} \\(task queue ${taskQueue}/model/${carol.id}\\)`),
  );
  assert.equal(other.fake.requests.length, 0, 'the worker with other settings answered nothing');

  while (!(await stopped.query(statusQuery)).waitingFor) {
    assert.ok(Date.now() < deadline, 'the second run waits too');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  await stopped.signal(stopSignal, 'nobody serves this endpoint');
  await workerFor(carol, taskQueue, 'host-carol');
  const [report, stoppedReport] = (await Promise.all([waiting.result(), stopped.result()])) as DebugReport[];
  assert.equal(report?.status, 'fixed', report?.stopDetail);
  assert.equal(report?.answeredBy, 'endpoint carol');
  assert.equal((await waiting.query(statusQuery)).waitingFor, null);
  assert.equal(stoppedReport?.stopCondition, 'stop_signal');
  // A run stopped while it waited no longer says it waits (its closed status is answered by replay).
  assert.equal((await stopped.query(statusQuery)).waitingFor, null);
  // The time budget also ends a wait, at the model call.
  const timedOutReport = (await timedOut.result()) as DebugReport;
  assert.equal(timedOutReport.stopCondition, 'max_duration', timedOutReport.stopDetail);
  assert.equal(timedOutReport.iterations, 1);
  assert.equal(stoppedReport?.iterations, 1);
  assert.equal(other.fake.requests.length, 0);
  assert.equal(await containersOf(server), 0);
});

test('`run` without a key, when no worker serves runs without an endpoint, says what to do instead of waiting', async () => {
  const taskQueue = uniqueTaskQueue('no-key');
  const result = await cliOn(taskQueue, ['run', 'fixtures/01_off_by_one']);
  assert.equal(result.code, 2, result.output);
  assert.match(result.output, /ANTHROPIC_API_KEY is not set and no worker answers model calls for runs without one/);
  assert.match(result.output, /durable-debugger dev --scripted/);
});

/** Our CLI on the run's task queue, with no API key of its own. */
function cliOn(taskQueue: string, args: string[]): Promise<CliResult> {
  return runCli(server, args, { DURABLE_DEBUGGER_TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY: '' });
}
