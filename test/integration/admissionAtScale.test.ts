// Fifty runs started at once on a fleet with room for six (issue 26): two real worker hosts
// (`durable-debugger worker` processes) with room for 3 sandboxes each, two users limited to 4
// sandboxes each, and the last ten runs started with priority 1. All fifty end fixed (none
// starved); Docker, sampled all along, never shows more than 3 sandboxes on a host, 6 in all or
// 4 of one user; the priority-1 runs overtake the earlier runs still waiting; and the sandbox
// queue placed every run by its rules: replaying its history, each placement went to the first
// waiting run, in (priority, start) order, that no limit held back.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import {
  admit,
  emptyAdmission,
  enqueue,
  nextRequest,
  placingDone,
  release,
  type AdmissionLimits,
  type SandboxRequest,
} from '../../src/agent/admission.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture, scriptsByName } from '../../src/demo/fixtures.js';
import { connectDocker, labels, listProjectContainers } from '../../src/sandbox/container/container.js';
import { sandboxAdmissionIdFor } from '../../src/temporal/definitions.js';
import {
  startTestServer,
  startWorkerProcess,
  uniqueTaskQueue,
  type TestServer,
  type WorkerProcess,
} from '../../harness/devStack.js';

const runs = 50;
const hosts = ['fleet-a', 'fleet-b'];
const perHost = 3;
const perUser = 4;
const urgent = 10;

const userOf = (index: number) => (index % 3 === 0 ? 'ben' : 'ana');
const priorityOf = (index: number) => (index >= runs - urgent ? 1 : undefined);

let server: TestServer;
let fake: FakeAnthropicApi;
let folder: string;
let repo: string;
const taskQueue = uniqueTaskQueue('admission-at-scale');
const workers: WorkerProcess[] = [];

before(async () => {
  server = await startTestServer();
  folder = await mkdtemp(join(tmpdir(), 'durable-debugger-admission-'));
  const fixture = await loadFixture('01_off_by_one');
  repo = join(folder, fixture.name);
  await cp(fixture.path, repo, { recursive: true });
  // Model calls take a little while, as real ones do: a run holds its sandbox for seconds.
  fake = new FakeAnthropicApi({ scripts: scriptsByName([fixture]), latencyMs: 400 });
  await fake.start();
  for (const hostId of hosts)
    workers.push(
      await startWorkerProcess(server, {
        taskQueue,
        hostId,
        fakeUrl: fake.url,
        env: {
          DURABLE_DEBUGGER_MAX_SANDBOXES: String(perHost),
          DURABLE_DEBUGGER_MAX_SANDBOXES_PER_USER: String(perUser),
        },
      }),
    );
});

after(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await fake?.stop();
  await server?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Samples this server's sandboxes every 200 ms: the most seen at once in all, on one host and of one user. */
function sampleSandboxes(userOfRun: Map<string, string>) {
  const docker = connectDocker();
  const most = { all: 0, host: 0, user: 0 };
  let stopped = false;
  const countMost = (keys: string[]) => {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
    return Math.max(0, ...counts.values());
  };
  const loop = (async () => {
    while (!stopped) {
      const mine = (await listProjectContainers(docker)).filter((container) =>
        container.Labels[labels.scope]?.startsWith(server.address),
      );
      most.all = Math.max(most.all, mine.length);
      most.host = Math.max(most.host, countMost(mine.map((container) => container.Labels[labels.host] ?? '?')));
      most.user = Math.max(
        most.user,
        countMost(mine.map((container) => userOfRun.get(container.Labels[labels.workflowId] ?? '') ?? '?')),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return most;
    },
  };
}

const decode = (payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown[] =>
  (payloads?.payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload));

/**
 * Replays the sandbox queue's history through the admission rules: a signal counts from the
 * workflow task that saw it; each claim the queue scheduled must be for the run the rules choose
 * from what it had seen. Returns the workflow ids in the order they were placed.
 */
async function placementsByTheRules(): Promise<string[]> {
  const history = await server.client.workflow.getHandle(sandboxAdmissionIdFor(taskQueue)).fetchHistory();
  const state = emptyAdmission();
  let unseen: Array<() => void> = [];
  const placed: string[] = [];
  for (const event of history.events ?? []) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'sandboxRequest') {
      const [request, limits] = decode(signal.input) as [SandboxRequest, AdmissionLimits];
      unseen.push(() => enqueue(state, request, limits));
    } else if (signal?.signalName === 'sandboxRelease') {
      const [workflowId] = decode(signal.input) as [string];
      unseen.push(() => release(state, workflowId));
    } else if (event.workflowTaskStartedEventAttributes) {
      for (const apply of unseen) apply();
      unseen = [];
    } else if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'claimSandbox') {
      const [claim] = decode(event.activityTaskScheduledEventAttributes.input) as [{ workflowId: string }];
      const chosen = nextRequest(state);
      assert.equal(claim.workflowId, chosen?.workflowId, `placement ${placed.length + 1} broke the queue's rules`);
      admit(state, chosen as SandboxRequest, 0);
      placingDone(state);
      placed.push(claim.workflowId);
    } else if (event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes) {
      assert.fail('a claim failed: the replay does not model requeued runs');
    }
  }
  return placed;
}

test(`${runs} runs started at once on ${hosts.length} hosts with room for ${perHost} each: all finish, placed in order within a priority and within the limits`, async () => {
  const ids = Array.from(
    { length: runs },
    (_, index) => `admission-${process.pid}-${String(index + 1).padStart(2, '0')}`,
  );
  const userOfRun = new Map(ids.map((id, index) => [id, userOf(index)]));
  const sampler = sampleSandboxes(userOfRun);
  const handles = [];
  for (const [index, workflowId] of ids.entries()) {
    const priority = priorityOf(index);
    handles.push(
      await startDebugRun(server.client, {
        input: { repo, budgets: { maxIterations: 10 }, user: userOf(index), ...(priority ? { priority } : {}) },
        taskQueue,
        workflowId,
      }),
    );
  }
  const reports = await Promise.all(handles.map(async (handle) => (await handle.result()) as DebugReport));
  const most = await sampler.stop();

  const unfixed = reports.flatMap((report, index) =>
    report.status === 'fixed' ? [] : [`${ids[index]}: ${report.status} (${report.stopDetail})`],
  );
  assert.deepEqual(unfixed, [], 'every run ends fixed: none starved');
  assert.ok(most.all <= hosts.length * perHost, `${most.all} sandboxes at once on a fleet with room for 6`);
  assert.ok(most.host <= perHost, `${most.host} sandboxes at once on one host with room for ${perHost}`);
  assert.ok(most.user <= perUser, `${most.user} sandboxes at once of one user limited to ${perUser}`);
  assert.ok(most.all >= hosts.length * perHost - 1, `the fleet's room went unused: at most ${most.all} at once`);

  const placed = await placementsByTheRules();
  assert.deepEqual([...placed].sort(), [...ids].sort(), 'the queue placed every run once');
  // The priority-1 runs, started last, went ahead of the earlier runs that still waited.
  const urgentIds = ids.slice(runs - urgent);
  const lastUrgent = Math.max(...urgentIds.map((id) => placed.indexOf(id)));
  assert.ok(
    lastUrgent < runs - urgent,
    `the last priority-1 run was placed ${lastUrgent + 1}th of ${runs}: after runs of priority 3 started before it`,
  );
});
