// A worker host takes only the sandboxes it has room for (issue 26): a host with capacity 2 gets
// 6 runs at once on the real dev server and real Docker; sampled from Docker, it never holds more
// than 2 sandboxes, the other 4 runs wait (their status says so, also through the real CLI),
// get a sandbox in the order they were started, and all end fixed; the time they waited is
// kept apart from their working time.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugReport } from '../../src/agent/report.js';
import type { RunStatusView } from '../../src/agent/runState.js';
import { startDebugRun } from '../../src/client.js';
import { connectDocker, labels, listProjectContainers } from '../../src/sandbox/container/container.js';
import { statusQuery } from '../../src/temporal/definitions.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';
import { startCli } from '../support/cli.js';

const runs = 6;
const capacity = 2;

let server: TestServer;
let worker: TestWorker;
let folder: string;

before(async () => {
  server = await startTestServer();
  folder = await mkdtemp(join(tmpdir(), 'durable-debugger-capacity-'));
  const fixture = await loadFixture('01_off_by_one');
  await cp(fixture.path, join(folder, 'repo'), { recursive: true });
  worker = await startTestWorker(server, {
    // Seconds per model call, as in real runs: a run holds its sandbox for several seconds.
    fake: { scripts: fixture.script, latencyMs: 1_000 },
    configOverrides: { DURABLE_DEBUGGER_MAX_SANDBOXES: String(capacity) },
  });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Samples this server's sandbox containers every 100 ms: the most seen at once, and when each run's first appeared. */
function sampleSandboxes() {
  const docker = connectDocker();
  const firstSeen = new Map<string, number>();
  let most = 0;
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const mine = (await listProjectContainers(docker)).filter((container) =>
        container.Labels[labels.scope]?.startsWith(server.address),
      );
      samples += 1;
      most = Math.max(most, mine.length);
      for (const container of mine) {
        const workflowId = container.Labels[labels.workflowId] as string;
        if (!firstSeen.has(workflowId)) firstSeen.set(workflowId, Date.now());
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { most, samples, firstSeen };
    },
  };
}

test(`a host with room for ${capacity} sandboxes gets ${runs} runs: ${capacity} at a time, the others wait and then finish`, async () => {
  const sampler = sampleSandboxes();
  const handles: WorkflowHandle[] = [];
  for (let index = 0; index < runs; index++) {
    handles.push(
      await startDebugRun(server.client, {
        input: { repo: join(folder, 'repo'), budgets: { maxIterations: 10 } },
        taskQueue: worker.taskQueue,
        workflowId: `capacity-${process.pid}-${index + 1}`,
      }),
    );
  }

  // The runs beyond the host's room say, all at one moment, that they wait, and how many wait.
  let waiting = new Map<string, string>();
  const deadline = Date.now() + 60_000;
  while (waiting.size !== runs - capacity && Date.now() < deadline) {
    waiting = new Map();
    for (const handle of handles) {
      const status = (await handle.query(statusQuery).catch(() => null)) as RunStatusView | null;
      if (status?.waitingFor?.startsWith('waiting for a sandbox host'))
        waiting.set(handle.workflowId, status.waitingFor);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.equal(waiting.size, runs - capacity, `runs seen waiting: ${[...waiting.keys()].join(', ')}`);
  for (const line of waiting.values()) assert.match(line, /^waiting for a sandbox host: \d+ queued, /);

  // `durable-debugger status` of a waiting run says the same.
  const stillWaiting = handles.filter((handle) => waiting.has(handle.workflowId)).at(-1) as WorkflowHandle;
  const cli = await startCli(server, ['status', stillWaiting.workflowId], {
    DURABLE_DEBUGGER_TASK_QUEUE: worker.taskQueue,
  }).done;
  assert.equal(cli.code, 0, cli.output);
  assert.match(cli.output, /waiting for a sandbox host: \d+ queued/);

  const reports = await Promise.all(handles.map(async (handle) => (await handle.result()) as DebugReport));
  const { most, samples, firstSeen } = await sampler.stop();
  assert.deepEqual(
    reports.map((report) => report.status),
    Array(runs).fill('fixed'),
    reports.map((report) => report.stopDetail).join('; '),
  );
  assert.ok(samples > 20, `only ${samples} samples of the host's sandboxes`);
  assert.equal(most, capacity, `the host held at most ${most} sandboxes at once`);

  // The runs that waited got their sandboxes after the others, in the order they were started.
  // (Which runs find the host's room free depends on which reaches the queue first: a run's
  // request for a sandbox is an activity of its own, after the run has started.)
  const order = handles
    .map((handle) => ({ id: handle.workflowId, seen: firstSeen.get(handle.workflowId) ?? Infinity }))
    .sort((a, b) => a.seen - b.seen)
    .map((each) => each.id);
  assert.deepEqual(
    order.slice(capacity),
    handles.map((handle) => handle.workflowId).filter((id) => waiting.has(id)),
  );

  // Their wait is kept apart from their working time (the time budget counts only the latter).
  const last = (await stillWaiting.query(statusQuery)) as RunStatusView;
  assert.ok((last.waitedForHostMs ?? 0) > 3_000, `the last run waited ${last.waitedForHostMs} ms`);
  assert.ok((last.waitedForHostMs ?? 0) < last.elapsedMs);
});
