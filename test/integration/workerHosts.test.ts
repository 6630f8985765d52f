// The fleet view (issue 26): two worker hosts (the real `durable-debugger worker`, each with its
// metrics port and capacity) serve one task queue on the real dev server; the real
// `durable-debugger hosts --json` finds both through Temporal (their pollers' identities), reads
// each one's capacity, sandboxes and, after a real run, its model and tool calls from its endpoint
// over HTTP, and the task queue's runs from its sandbox queue. A host that hangs (SIGSTOP: its
// poller is still listed, its endpoint takes connections and never answers) is listed as such
// within the scrape's timeout, not an error. The server listens on the ports of a cluster (a
// port offset of its own), so that the real `npm run cluster -- metrics` reads it: the Temporal
// server's figures from its own endpoint, then the same hosts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture } from '../../src/demo/fixtures.js';
import { freePort } from '../../src/freePort.js';
import { portAnswers } from '../../src/temporal/embeddedServer.js';
import type { TaskQueueView } from '../../src/temporal/workerHosts.js';
import {
  startTestServer,
  startWorkerProcess,
  uniqueTaskQueue,
  type TestServer,
  type WorkerProcess,
} from '../../harness/devStack.js';
import { killCliProcesses, runCli } from '../support/cli.js';

const capacities = { 'host-a': 2, 'host-b': 3 } as const;

let server: TestServer;
let fake: FakeAnthropicApi;
let workers: WorkerProcess[] = [];
const ports = new Map<string, number>();
const taskQueue = uniqueTaskQueue('fleet');
let clusterOffset: number;

/** A cluster port offset (DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET) whose frontend and metrics ports are free. */
async function freeClusterOffset(): Promise<number> {
  for (let offset = 200; offset > 0; offset -= 20)
    if (!(await portAnswers('127.0.0.1', 17233 + offset)) && !(await portAnswers('127.0.0.1', 17290 + offset)))
      return offset;
  throw new Error('no cluster port offset is free');
}

before(async () => {
  clusterOffset = await freeClusterOffset();
  server = await startTestServer({ port: 17233 + clusterOffset, metrics: 17290 + clusterOffset });
  const fixture = await loadFixture('01_off_by_one');
  fake = new FakeAnthropicApi({ scripts: fixture.script, latencyMs: 100 });
  await fake.start();
  for (const hostId of Object.keys(capacities)) ports.set(hostId, await freePort('0.0.0.0'));
  workers = await Promise.all(
    Object.entries(capacities).map(([hostId, capacity]) =>
      startWorkerProcess(server, {
        taskQueue,
        hostId,
        fakeUrl: fake.url,
        env: {
          DURABLE_DEBUGGER_METRICS_PORT: String(ports.get(hostId)),
          DURABLE_DEBUGGER_MAX_SANDBOXES: String(capacity),
        },
      }),
    ),
  );
});

after(async () => {
  killCliProcesses();
  for (const worker of workers) worker.child.kill('SIGCONT');
  await Promise.all(workers.map((worker) => worker.stop()));
  await fake?.stop();
  await server?.stop();
});

async function hosts(): Promise<TaskQueueView> {
  const result = await runCli(server, ['hosts', '--json', '--task-queue', taskQueue]);
  assert.equal(result.code, 0, result.output);
  return JSON.parse(result.stdout) as TaskQueueView;
}

test('`hosts --json` lists both worker hosts with the capacity and sandboxes read from their metrics endpoints', async () => {
  const view = await hosts();
  assert.equal(view.taskQueue, taskQueue);
  assert.deepEqual(
    view.hosts.map((host) => host.hostId),
    ['host-a', 'host-b'],
    JSON.stringify(view),
  );
  for (const host of view.hosts) {
    const hostId = host.hostId as keyof typeof capacities;
    // Reachable from other machines: the machine's name, not the bind address.
    assert.equal(host.metricsUrl, `http://${hostname()}:${ports.get(hostId)}/metrics`);
    assert.equal(host.machine, hostname());
    assert.equal(host.metricsError, null);
    assert.equal(host.metrics?.capacity, capacities[hostId]);
    assert.equal(host.metrics?.sandboxes, 0);
    assert.ok(host.lastPoll && Date.now() - Date.parse(host.lastPoll) < 120_000, host.lastPoll ?? 'no last poll');
  }
  assert.equal(view.runs, null);
  assert.match(view.runsNote ?? '', /no run has asked for a sandbox/);
});

test('after a run, the host that held it shows its model calls, tokens, cost, tool calls and environment; the queue its runs', async () => {
  const fixture = await loadFixture('01_off_by_one');
  const handle = await startDebugRun(server.client, {
    input: fixtureInput(fixture),
    taskQueue,
    workflowId: `fleet-${process.pid}`,
  });
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);

  // The gauges are set every 3 s: the run's sandbox may still be counted for a moment.
  let view = await hosts();
  for (let tries = 0; tries < 10 && view.hosts.some((host) => host.metrics?.sandboxes !== 0); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    view = await hosts();
  }
  assert.deepEqual(view.runs, { holdingSandbox: 0, waiting: 0 });
  const figures = view.hosts.map((host) => host.metrics);
  assert.ok(figures.every((metrics) => metrics !== null));
  const worked = figures.find((metrics) => (metrics?.toolCalls ?? 0) > 0);
  assert.ok(worked, `no host shows the run's tool calls: ${JSON.stringify(view)}`);
  assert.ok((worked.toolCallMeanMs ?? 0) > 0);
  assert.equal(
    Object.values(worked.environmentBuilds).reduce((sum, count) => sum + count, 0),
    1,
  );
  // Model calls are answered by whichever host's model worker polls first: count them across the fleet.
  const calls = figures.reduce((sum, metrics) => sum + (metrics?.modelCalls ?? 0), 0);
  assert.equal(calls, fixture.script.responses.length);
  const models = figures.flatMap((metrics) => Object.values(metrics?.models ?? {}));
  assert.ok(
    models.some((model) => (model.tokens.input ?? 0) > 0 && model.costUsd > 0),
    JSON.stringify(models),
  );
});

test('a host that hangs is listed with its endpoint not answering, within the scrape timeout', async () => {
  const stuck = workers[1] as WorkerProcess;
  stuck.child.kill('SIGSTOP');
  try {
    const started = Date.now();
    const view = await hosts();
    const seconds = (Date.now() - started) / 1000;
    const host = view.hosts.find((candidate) => candidate.hostId === stuck.hostId);
    assert.ok(host, JSON.stringify(view));
    assert.equal(host.metrics, null);
    assert.match(host.metricsError ?? '', /no answer within 3 s/);
    assert.equal(view.hosts.find((candidate) => candidate.hostId === 'host-a')?.metrics?.capacity, 2);
    // The CLI's own start and the queue's query included; a scrape that waited for the host would take minutes.
    assert.ok(seconds < 30, `hosts took ${seconds} s`);

    const text = await runCli(server, ['hosts', '--task-queue', taskQueue]);
    assert.equal(text.code, 0, text.output);
    assert.match(text.stdout, new RegExp(`host-b .*\\n +metrics: http://\\S+ did not answer: no answer within 3 s`));
    assert.match(text.stdout, /host-a .*\n +sandboxes 0\/2; /);
  } finally {
    stuck.child.kill('SIGCONT');
  }
});

test("`npm run cluster -- metrics` prints the Temporal server's persistence figures and the hosts of the task queue", async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'deploy', 'cluster', 'clusterCommand.ts'), 'metrics'],
    {
      cwd: projectRoot,
      env: {
        ...process.env,
        DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET: String(clusterOffset),
        DURABLE_DEBUGGER_TASK_QUEUE: taskQueue,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, output);
  assert.ok(
    output.includes(`Temporal server (http://127.0.0.1:${17290 + clusterOffset}/metrics), since it started:`),
    output,
  );
  const persistence = /^ {2}persistence: (\d+) requests, mean (\d+\.\d+) ms$/m.exec(output);
  assert.ok(persistence && Number(persistence[1]) > 0 && Number(persistence[2]) > 0, output);
  assert.match(output, /^ {2}frontend: \d+ requests, mean \d+\.\d+ ms \(long polls left out\)$/m);
  assert.match(output, new RegExp(`^Task queue ${taskQueue}: 0 runs hold a sandbox, 0 waiting for one$`, 'm'));
  assert.match(output, /^ {2}host-a .*\n {4}sandboxes 0\/2; /m);
  assert.match(output, /^ {2}host-b .*\n {4}sandboxes 0\/3; /m);
});
