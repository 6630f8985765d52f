// A tool call that ends within a second sends no heartbeat (issue 36 item 4): each heartbeat is
// a write on the Temporal server, and one per tool call made every iteration slower. Counted on
// the server itself, from its own metrics (real dev server, real worker, real Docker).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readServerMetrics } from '../../deploy/cluster/serverMetrics.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { Script } from '../../src/demo/script.js';
import { sumOf } from '../../src/temporal/prometheusText.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';

const toolCalls = 12;
/** The model lists the files, again and again: quick tool calls, until the iteration budget ends. */
const script: Script = {
  responses: Array.from({ length: toolCalls + 3 }, () => ({
    thought: 'Listing the files again.',
    tool_calls: [{ name: 'list_files', input: {} }],
  })),
};

let server: TestServer;
let worker: TestWorker;
let fixture: Fixture;

before(async () => {
  server = await startTestServer({ metrics: true });
  fixture = await loadFixture('01_off_by_one');
  worker = await startTestWorker(server, { fake: { scripts: script } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function heartbeatsOnServer(): Promise<number> {
  const samples = await readServerMetrics(server.metricsUrl as string);
  return sumOf(samples, 'service_requests', { operation: 'RecordActivityTaskHeartbeat', service_name: 'frontend' });
}

test('quick tool calls send no heartbeat: a run of twelve list_files calls makes fewer heartbeats than tool calls', async () => {
  const before = await heartbeatsOnServer();
  const handle = await startDebugRun(server.client, {
    input: { ...fixtureInput(fixture), budgets: { maxIterations: toolCalls } },
    taskQueue: worker.taskQueue,
  });
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'budget_exhausted', report.stopDetail);
  assert.equal(report.iterations, toolCalls);
  const heartbeats = (await heartbeatsOnServer()) - before;
  // What may heartbeat is the work that takes more than a second: preparing the sandbox and the
  // baseline test run (a short reply's model call sends none either).
  assert.ok(heartbeats < toolCalls, `${heartbeats} heartbeats for ${toolCalls} tool calls`);
});
