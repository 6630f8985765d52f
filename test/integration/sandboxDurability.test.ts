// The workspace survives what happens to a sandbox during a run, on the real dev server and
// real Docker: its container removed from outside mid-command, a `temporal workflow reset` to
// before an edit (the real CLI), and the death (SIGKILL) of the worker process that holds it.
// The last one twice: with the workers sharing a data folder, and with two hosts that share
// nothing but the network (each its own data folder, the content store in PostgreSQL).
// Each run plays fixtures/01_off_by_one with a test command slowed down, so that there is a
// running command to interrupt, and each must end `fixed` with exactly the one edit.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { DebugReport } from '../../src/agent/report.js';
import { sandboxIdFor } from '../../src/agent/ids.js';
import type { PrepareSandboxRequest } from '../../src/agent/sandboxProtocol.js';
import { startDebugRun } from '../../src/client.js';
import { loadConfig } from '../../src/config.js';
import { connectDocker, findSandboxContainer, labels } from '../../src/sandbox/container/container.js';
import { pytestCommand } from '../../src/sandbox/testCommand.js';
import { temporalCliPath } from '../../src/temporal/embeddedServer.js';
import { transcriptQuery, type TranscriptView } from '../../src/temporal/definitions.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import {
  containersOf,
  startTestServer,
  startTestWorker,
  startWorkerProcess,
  uniqueTaskQueue,
  type TestServer,
} from '../../harness/devStack.js';
import type { Script } from '../../src/demo/script.js';
import { startTestPostgres } from '../support/postgres.js';

const buggyLine = '    for i in range(len(items) - 1):';
const fixedLine = '    for i in range(len(items)):';
const script: Script = {
  responses: [
    { thought: 'Run the tests.', tool_calls: [{ name: 'run_tests', input: {} }] },
    { thought: 'Read the code under test.', tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }] },
    {
      thought: 'The loop skips the last element.',
      tool_calls: [
        { name: 'edit_file', input: { path: 'buggy_code.py', old_string: buggyLine, new_string: fixedLine } },
      ],
    },
    { thought: 'Run the tests again.', tool_calls: [{ name: 'run_tests', input: {} }] },
    {
      thought: 'Fixed.',
      tool_calls: [{ name: 'finish', input: { root_cause: 'range(len(items) - 1) skips the last element' } }],
    },
  ],
};
/** Slow enough to be interrupted while it runs. */
const slowTestCommand = `sleep 3; ${pytestCommand}`;

let server: TestServer;
const docker = connectDocker();

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

async function runInput() {
  const fixture = await loadFixture('01_off_by_one');
  return { repo: fixture.path, testCommand: slowTestCommand };
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The sandbox container of a run, once a test command is running in it. */
async function whileTestsRun(workflowId: string, afterModelRequests: number, fake: FakeAnthropicApi) {
  return waitFor('a test command running in the sandbox', async () => {
    if (fake.requests.length < afterModelRequests) return null;
    const info = await findSandboxContainer(docker, sandboxIdFor(workflowId));
    if (!info || info.State !== 'running') return null;
    const top = (await docker
      .getContainer(info.Id)
      .top({ ps_args: '-o pid,args' })
      .catch(() => null)) as { Processes?: string[][] } | null;
    return top?.Processes?.some((row) => row[1] === 'sleep 3') ? info : null;
  });
}

interface ActivityRecord {
  name: string;
  summary: string;
  workflowTaskCompletedEventId: number;
  input: unknown;
  result: unknown;
}

/** The activities of one run, in order, with their summaries, inputs and results. */
async function activities(handle: WorkflowHandle): Promise<ActivityRecord[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const records = new Map<number, ActivityRecord>();
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      records.set(Number(event.eventId), {
        name: scheduled.activityType?.name ?? '',
        summary: decode(event.userMetadata?.summary) as string,
        workflowTaskCompletedEventId: Number(scheduled.workflowTaskCompletedEventId),
        input: decode(scheduled.input?.payloads?.[0]),
        result: undefined,
      });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const record = records.get(Number(completed.scheduledEventId));
      if (record) record.result = decode(completed.result?.payloads?.[0]);
    }
  }
  return [...records.values()];
}

/** The sandbox's preparations that recovered it, without the verification's fresh one (asked for, not a recovery). */
function recoveries(records: ActivityRecord[]): ActivityRecord[] {
  return records.filter(
    (record) => record.name === 'prepareSandbox' && !(record.input as PrepareSandboxRequest | undefined)?.fresh,
  );
}

function decode(payload: temporal.api.common.v1.IPayload | null | undefined): unknown {
  return payload?.data?.length ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : undefined;
}

/** The result of every tool call, by the tool's name, in order. */
async function toolResults(handle: WorkflowHandle): Promise<Array<{ name: string; content: string }>> {
  const { messages } = (await handle.query(transcriptQuery)) as TranscriptView;
  const names = new Map<string, string>();
  const results: Array<{ name: string; content: string }> = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content as unknown as Array<Record<string, unknown>>) {
      if (block.type === 'tool_use') names.set(block.id as string, block.name as string);
      if (block.type === 'tool_result') {
        results.push({ name: names.get(block.tool_use_id as string) ?? '?', content: String(block.content) });
      }
    }
  }
  return results;
}

/** The run ended fixed, with exactly the one edit, verified by the tests in the sandbox. */
function assertFixedWithOneEdit(report: DebugReport): void {
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.testsAfter?.failed, 0);
  assert.equal(report.testsAfter?.passed, 5);
  const removed = report.patch.split('\n').filter((line) => line.startsWith('-') && !line.startsWith('---'));
  const added = report.patch.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++'));
  assert.deepEqual(removed, [`-${buggyLine}`]);
  assert.deepEqual(added, [`+${fixedLine}`]);
}

test('a sandbox container killed from outside (docker kill) while a command runs is replaced, and the run ends fixed', async () => {
  const worker = await startTestWorker(server, { fake: { scripts: script, latencyMs: 200 } });
  try {
    const handle = await startDebugRun(server.client, { input: await runInput(), taskQueue: worker.taskQueue });
    // Model request 4 asks for the second test run, after the edit.
    const container = await whileTestsRun(handle.workflowId, 4, worker.fake);
    await promisify(execFile)('docker', ['kill', container.Id]);

    const report = (await handle.result()) as DebugReport;
    assertFixedWithOneEdit(report);
    const prepared = recoveries(await activities(handle));
    assert.equal(prepared.length, 2, 'the sandbox was not prepared again');
    assert.deepEqual(prepared[1]?.result, { containerCreated: true, host: worker.worker.host.options.hostId });
    // The interrupted test run was run again in the new container: the model saw its real result.
    const runs = (await toolResults(handle)).filter((result) => result.name === 'run_tests');
    assert.match(runs[1]?.content ?? '', /5 passed/);
    assert.equal(await containersOf(server), 0);
  } finally {
    await worker.stop();
  }
});

test('`temporal workflow reset` to before an edit: the edit is absent after the reset, then applied again, and the run ends fixed', async () => {
  const worker = await startTestWorker(server, { fake: { scripts: script, latencyMs: 1500 } });
  try {
    const input = await runInput();
    const handle = await startDebugRun(server.client, {
      input: { ...input, testCommand: pytestCommand },
      taskQueue: worker.taskQueue,
    });
    const { runId: firstRunId } = await handle.describe();
    // Request 4 is sent once the edit is in the workspace; its answer takes 1.5 s.
    await waitFor('the edit to be applied', async () => worker.fake.requests.length >= 4);
    const history = await activities(handle);
    const read = history.find((activity) => activity.summary.includes('read_file buggy_code.py'));
    assert.ok(read, 'no read_file activity');
    assert.ok(history.some((activity) => activity.summary.includes('edit_file buggy_code.py')));

    const config = loadConfig();
    await promisify(execFile)(temporalCliPath(config), [
      'workflow',
      'reset',
      '--address',
      server.address,
      '--namespace',
      'default',
      '--workflow-id',
      handle.workflowId,
      '--event-id',
      String(read.workflowTaskCompletedEventId),
      '--reason',
      'test: go back to before the edit',
    ]);

    const latest = server.client.workflow.getHandle(handle.workflowId);
    const report = (await latest.result()) as DebugReport;
    assertFixedWithOneEdit(report);
    const { runId } = await latest.describe();
    assert.notEqual(runId, firstRunId, 'the run was not reset');

    // After the reset, the sandbox found its workspace ahead of the log and rebuilt it: the
    // file read again after the reset point no longer had the edit made before the reset.
    const replayed = await activities(latest);
    const rebuilt = recoveries(replayed).at(-1)?.result as {
      rebuiltBecause?: string;
    };
    assert.match(rebuilt.rebuiltBecause ?? '', /differed from the run’s mutation log/);
    const results = await toolResults(latest);
    const reread = results.find((result) => result.name === 'read_file');
    assert.ok(reread?.content.includes(buggyLine), 'the edit was still there after the reset');
    assert.match(results.filter((result) => result.name === 'run_tests').at(-1)?.content ?? '', /5 passed/);
    assert.equal(await containersOf(server), 0);
  } finally {
    await worker.stop();
  }
});

test('two worker processes: killing the one that holds the sandbox mid-command, the other rebuilds it and the run ends fixed', async () => {
  await killTheHolder(() => ({ home: server.home, env: {} }));
});

test('two worker hosts that share no folder (each its own data folder, the content store in PostgreSQL): the run of a killed host ends fixed on the other', async () => {
  const postgres = await startTestPostgres();
  const homes = new Map<string, string>();
  try {
    await killTheHolder(async (hostId) => {
      const home = await mkdtemp(join(tmpdir(), `durable-debugger-${hostId}-`));
      homes.set(hostId, home);
      return { home, env: { DURABLE_DEBUGGER_STORE: postgres.url } };
    });
    // Nothing went to a folder: the survivor rebuilt the workspace from PostgreSQL alone.
    for (const [hostId, home] of homes)
      assert.equal(existsSync(join(home, 'store')), false, `${hostId} wrote to a folder store`);
  } finally {
    await postgres.stop();
    for (const home of homes.values()) await rm(home, { recursive: true, force: true });
  }
});

/**
 * Two `durable-debugger worker` processes, each in the data folder `placeOf` gives it; the one that
 * holds the run's sandbox is killed (SIGKILL) while a test command runs. The other must rebuild
 * the sandbox and end the run fixed with exactly the one edit.
 */
async function killTheHolder(placeOf: (hostId: string) => Promise<WorkerPlace> | WorkerPlace): Promise<void> {
  const fake = new FakeAnthropicApi({ scripts: script, latencyMs: 200 });
  await fake.start();
  const taskQueue = uniqueTaskQueue('two-workers');
  const workers = await Promise.all(
    ['host-a', 'host-b'].map(async (hostId) => {
      const place = await placeOf(hostId);
      return startWorkerProcess(
        { address: server.address, home: place.home },
        { taskQueue, hostId, fakeUrl: fake.url, env: place.env },
      );
    }),
  );
  try {
    const handle = await startDebugRun(server.client, { input: await runInput(), taskQueue });
    const container = await whileTestsRun(handle.workflowId, 4, fake);
    const holder = workers.find((worker) => worker.hostId === container.Labels[labels.host]);
    const survivor = workers.find((worker) => worker !== holder);
    assert.ok(holder && survivor);
    const killedAt = Date.now();
    await holder.kill();

    const moved = await waitFor(
      'the sandbox to move to the other worker',
      async () => {
        const info = await findSandboxContainer(docker, sandboxIdFor(handle.workflowId));
        return info?.Labels[labels.host] === survivor.hostId && info.State === 'running' ? info : null;
      },
      150_000,
    );
    const failoverMs = Date.now() - killedAt;
    const report = (await handle.result()) as DebugReport;
    console.log(
      `failover: the sandbox was rebuilt on ${moved.Labels[labels.host]} ${(failoverMs / 1000).toFixed(1)} s after the kill; the run ended ${((Date.now() - killedAt) / 1000).toFixed(1)} s after it`,
    );
    assertFixedWithOneEdit(report);

    const prepared = recoveries(await activities(handle));
    const last = prepared.at(-1)?.result as { rebuiltBecause?: string; host: string };
    assert.equal(last.host, survivor.hostId);
    assert.match(last.rebuiltBecause ?? '', /not on this worker/);
    assert.equal(await containersOf(server), 0, 'the dead worker’s container was left behind');
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await fake.stop();
  }
}

/** Where a worker process keeps its data, and what else its environment says (its content store). */
interface WorkerPlace {
  home: string;
  env: Record<string, string>;
}
