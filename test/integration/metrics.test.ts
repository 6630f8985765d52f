// The worker serves Prometheus metrics (issue 26): during a real run on the dev server and real
// Docker, its endpoint answers with the Temporal SDK's runtime metrics and ours (runs active and
// waiting, sandboxes per host, model calls, tokens and cost by model, tool-call latency by tool),
// and after it the environment prepared and test-run durations. A run terminated from outside
// (it cannot give its sandbox back) stops counting as active at the worker's next sweep.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { sandboxAdmissionIdFor, sandboxQueueQuery } from '../../src/temporal/definitions.js';
import { installQuietRuntime } from '../../src/worker.js';
import {
  freePort,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let worker: TestWorker;
let fixture: Fixture;
let port: number;

before(async () => {
  port = await freePort();
  // The runtime is installed once per process: with the metrics port, before the server's own install.
  installQuietRuntime({ metricsPort: port });
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
  worker = await startTestWorker(server, {
    fake: { scripts: scriptsByName([fixture]), latencyMs: 800 },
    configOverrides: {
      DURABLE_DEBUGGER_METRICS_PORT: String(port),
      DURABLE_DEBUGGER_MAX_SANDBOXES: '3',
      // The sweep that gives back what terminated runs held (the last test).
      DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '2',
    },
  });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function scrape(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(response.status, 200);
  return response.text();
}

/** The value of a sample line (name with its labels as a regex source), or null. */
function sample(text: string, pattern: string): number | null {
  const match = text.match(new RegExp(`^${pattern} (\\S+)$`, 'm'));
  return match ? Number(match[1]) : null;
}

test('the metrics endpoint answers during a run with the SDK runtime metrics and ours', async () => {
  assert.equal(worker.worker.metricsAddress, `127.0.0.1:${port}`);
  const handle = await startDebugRun(server.client, {
    input: fixtureInput(fixture),
    taskQueue: worker.taskQueue,
    workflowId: `metrics-${process.pid}`,
  });

  // While the run works: it holds a sandbox, has made model and tool calls.
  let during = '';
  const deadline = Date.now() + 60_000;
  let running = true;
  void handle.result().finally(() => (running = false));
  while (Date.now() < deadline && running) {
    during = await scrape();
    if (
      (sample(during, 'durable_debugger_runs_active\\{[^}]*\\}') ?? 0) >= 1 &&
      /^durable_debugger_tool_call_ms_count\{[^}]*tool="/m.test(during) &&
      /^durable_debugger_model_calls_total\{/m.test(during)
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  assert.ok(running, `the run ended before the endpoint showed it working:\n${during}`);
  assert.match(during, /^temporal_worker_task_slots_available\{/m, 'the SDK runtime metrics');
  assert.match(during, /^temporal_activity_execution_latency_count\{/m);
  assert.equal(sample(during, `durable_debugger_sandboxes\\{[^}]*host="[^"]+"[^}]*\\}`), 1);
  assert.equal(sample(during, `durable_debugger_sandbox_capacity\\{[^}]*\\}`), 3);
  assert.equal(sample(during, 'durable_debugger_runs_waiting\\{[^}]*\\}'), 0);
  assert.ok((sample(during, 'durable_debugger_runs_active\\{[^}]*\\}') ?? 0) >= 1);
  assert.ok((sample(during, 'durable_debugger_model_calls_total\\{[^}]*model="[^"]+"[^}]*\\}') ?? 0) >= 1);
  assert.ok((sample(during, 'durable_debugger_model_tokens_total\\{[^}]*kind="input"[^}]*\\}') ?? 0) > 0);
  assert.ok((sample(during, 'durable_debugger_model_cost_microusd_total\\{[^}]*\\}') ?? 0) > 0);

  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);
  const afterRun = await scrape();
  assert.ok((sample(afterRun, 'durable_debugger_test_run_ms_count') ?? 0) >= 1, afterRun);
  assert.ok(
    (sample(afterRun, 'durable_debugger_environment_builds_total\\{[^}]*result="(?:built|reused|none)"[^}]*\\}') ??
      0) >= 1,
    afterRun,
  );
});

/** Scrapes until `accept` holds for the active-runs gauge, or 60 s have passed; the last value seen. */
async function activeRunsUntil(accept: (active: number | null) => boolean): Promise<number | null> {
  const deadline = Date.now() + 60_000;
  let active: number | null = null;
  while (Date.now() < deadline) {
    active = sample(await scrape(), 'durable_debugger_runs_active\\{[^}]*\\}');
    if (accept(active)) break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return active;
}

// Metrics name models, tokens, cost and hosts: by default only this machine reads them.
const otherAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && !address.internal && address.family === 'IPv4')?.address;

test(
  'the metrics listen on loopback only: another address of this machine does not answer',
  { skip: otherAddress ? false : 'this machine has no address besides loopback' },
  async () => {
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200);
    await assert.rejects(fetch(`http://${otherAddress}:${port}/metrics`), /fetch failed/);
  },
);

test('a run terminated while it holds a sandbox no longer counts as active after the next sweep', async () => {
  const handle = await startDebugRun(server.client, {
    input: fixtureInput(fixture),
    taskQueue: worker.taskQueue,
    workflowId: `metrics-terminated-${process.pid}`,
  });
  const queue = server.client.workflow.getHandle(sandboxAdmissionIdFor(worker.taskQueue));
  const holds = async () => Boolean((await queue.query(sandboxQueueQuery)).holding[handle.workflowId]);
  const deadline = Date.now() + 60_000;
  while (!(await holds()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  assert.ok(await holds(), 'the run never got a sandbox');
  // The gauge is read every 3 s: wait for it to count the run.
  assert.equal(await activeRunsUntil((active) => active === 1), 1, 'the run never counted as active');
  await handle.terminate('terminated from outside');
  assert.equal(await activeRunsUntil((active) => active === 0), 0, 'the terminated run still counts as active');
  assert.equal(await holds(), false, 'the sandbox queue still counts the terminated run');
});
