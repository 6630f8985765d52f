// Patch approval: a verified fix waits for a person's answer, given with our CLI or with the
// Temporal CLI's `workflow update execute`, on the real dev server, Docker and SDK.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { loadScript, type Script } from '../../src/demo/script.js';
import { temporalCliPath } from '../../src/temporal/embeddedServer.js';
import { approveUpdate, rejectUpdate, statusQuery } from '../../src/temporal/definitions.js';
import {
  containersOf,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { killCliProcesses, startCli, type CliProcess } from '../support/cli.js';

const repo = join(projectRoot, 'fixtures', '01_off_by_one');
let server: TestServer;
let worker: TestWorker;

before(async () => {
  server = await startTestServer();
  // The fixture's story, then what the model does with a reviewer's rejection: it changes the fix and finishes again.
  const story = await loadScript(join(repo, 'script.json'));
  const script: Script = {
    responses: [
      ...story.responses,
      {
        thought: 'The reviewer wants the bound explained. Adding a comment to the loop.',
        tool_calls: [
          {
            name: 'edit_file',
            input: {
              path: 'buggy_code.py',
              old_string: '    for i in range(len(items)):',
              new_string: '    for i in range(len(items)):  # every index, the last one too',
            },
          },
        ],
      },
      {
        thought: 'Done as the reviewer asked.',
        tool_calls: [
          {
            name: 'finish',
            input: {
              root_cause: 'range(len(items) - 1) skipped the last element; the loop now says why it covers every index',
            },
          },
        ],
      },
    ],
  };
  worker = await startTestWorker(server, { fake: { scripts: { '01_off_by_one': script }, latencyMs: 100 } });
});
after(async () => {
  killCliProcesses();
  await worker?.stop();
  await server?.stop();
});

function cli(args: string[]): CliProcess {
  return startCli(server, args);
}

function temporal(args: string[]): Promise<{ code: number | null; output: string }> {
  return collect(
    spawn(temporalCliPath(server.config()), [...args, '--address', server.address], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** A command line as a person types it, with the pinned Temporal CLI first on PATH. */
function shell(command: string): Promise<{ code: number | null; output: string }> {
  const path = `${dirname(temporalCliPath(server.config()))}:${process.env.PATH}`;
  return collect(
    spawn('bash', ['-c', command], {
      env: { ...process.env, PATH: path, TEMPORAL_ADDRESS: server.address },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

function collect(child: ChildProcess): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function waitFor(predicate: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits until the run awaits approval for the `nth` time; returns the patch it shows. */
async function awaitingApproval(handle: WorkflowHandle, nth: number): Promise<string> {
  let patch = '';
  await waitFor(async () => {
    const status = await handle.query(statusQuery);
    const toolResults = JSON.stringify(await handle.query('transcript')).match(/reviewer rejected/g)?.length ?? 0;
    if (status.phase !== 'awaiting_approval' || !status.awaitingApproval || toolResults !== nth - 1) return false;
    patch = status.awaitingApproval.patch;
    return true;
  });
  return patch;
}

/** How many times the run scheduled the activity `name`, from its history. */
async function scheduled(handle: WorkflowHandle, name: string): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
}

const sentToModel = () => JSON.stringify(worker.fake.requests.map((request) => request.body.messages));

test('through our CLI: watch shows the patch and waits; reject sends the feedback to the model; approve ends it fixed', async () => {
  const id = 'approval-cli';
  const handle = await startDebugRun(server.client, {
    input: { repo, approve: true },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  const watch = cli(['watch', id]);
  const firstPatch = await awaitingApproval(handle, 1);
  assert.match(firstPatch, /\+    for i in range\(len\(items\)\):$/m);
  await waitFor(() => watch.output().includes(`durable-debugger approve ${id}`));
  assert.match(watch.output(), /Awaiting approval: the tests pass with this patch/);
  assert.match(watch.output(), /\+    for i in range\(len\(items\)\):/);

  // Waiting costs nothing: no activity is pending, no timer (no timeout was asked for), and the status says so everywhere.
  const description = await handle.describe();
  assert.equal(description.searchAttributes.DebugStatus?.[0], 'awaiting_approval');
  assert.equal(description.raw.pendingActivities?.length ?? 0, 0);
  // (A timer of the sandbox's placement, before the work began, has fired: none is running now.)
  const events = (await handle.fetchHistory()).events ?? [];
  const timersStarted = events.filter((event) => event.timerStartedEventAttributes).length;
  const timersEnded = events.filter(
    (event) => event.timerFiredEventAttributes || event.timerCanceledEventAttributes,
  ).length;
  assert.equal(timersStarted - timersEnded, 0, 'no timer runs while the run waits for approval');
  assert.match((await cli(['status', id]).done).output, /phase awaiting_approval[\s\S]*Awaiting approval/);
  // The Web UI's current details come from the built-in metadata query.
  const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  assert.match(
    metadata.currentDetails ?? '',
    /^phase: awaiting_approval · a verified fix waits for the update `approve`[\s\S]*\+    for i in range/,
  );

  const rejected = await cli(['reject', id, 'Explain', 'the', 'loop', 'bound', 'in', 'a', 'comment.']).done;
  assert.equal(rejected.code, 0, rejected.output);
  const secondPatch = await awaitingApproval(handle, 2);
  assert.match(
    sentToModel(),
    /the reviewer rejected this fix. The reviewer wrote:\\nExplain the loop bound in a comment\./,
  );
  assert.match(secondPatch, /# every index, the last one too/);

  const approved = await cli(['approve', id]).done;
  assert.equal(approved.code, 0, approved.output);
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed');
  assert.equal(report.stopDetail, 'the fix was verified and approved');
  assert.match(report.patch, /# every index, the last one too/);
  // The rejection changed the workspace, so the second fix got a patch of its own; the report reuses that one.
  assert.equal(report.patch, secondPatch);
  assert.equal(await scheduled(handle, 'computePatch'), 2);
  const watched = await watch.done;
  assert.equal(watched.code, 0, watched.output);
  assert.match(watched.output, /Status: fixed/);
  assert.equal((await handle.describe()).searchAttributes.DebugStatus?.[0], 'fixed');
  assert.equal(await containersOf(server), 0);
});

test('an approved fix computes its patch once: the report reuses the patch shown for approval', async () => {
  const handle = await startDebugRun(server.client, {
    input: { repo, approve: true },
    taskQueue: worker.taskQueue,
    workflowId: 'approval-patch-once',
  });
  const shown = await awaitingApproval(handle, 1);
  await handle.executeUpdate(approveUpdate);
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed');
  assert.match(report.patch, /\+    for i in range\(len\(items\)\):$/m);
  assert.equal(report.patch, shown);
  assert.equal(report.fullPatch, null);
  assert.equal(await scheduled(handle, 'computePatch'), 1);
});

test('through `temporal workflow update execute`: reject with feedback, then approve', async () => {
  const id = 'approval-temporal-cli';
  const handle = await startDebugRun(server.client, {
    input: { repo, approve: true },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  // The documented commands (docs/temporal-cli.md), as written, for this run's id.
  const page = await readFile(join(projectRoot, 'docs', 'temporal-cli.md'), 'utf8');
  const documented = (name: string) => {
    const line = page
      .split('\n')
      .find((each) => each.startsWith(`temporal workflow update execute --workflow-id fix-off-by-one --name ${name}`));
    assert.ok(line, `docs/temporal-cli.md documents the ${name} update`);
    return line.replace('fix-off-by-one', id);
  };
  await awaitingApproval(handle, 1);
  const rejected = await shell(documented('reject'));
  assert.equal(rejected.code, 0, rejected.output);
  await awaitingApproval(handle, 2);
  assert.match(sentToModel(), /The reviewer wrote:\\nExplain the bound in a comment\./);
  const approved = await shell(documented('approve'));
  assert.equal(approved.code, 0, approved.output);
  assert.match(approved.output, /approved/);
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed');
});

test('without an answer within the approval timeout, the run ends not_approved', async () => {
  const handle = await startDebugRun(server.client, {
    input: { repo, approve: true, approvalTimeoutMinutes: 0.05 },
    taskQueue: worker.taskQueue,
    workflowId: 'approval-timeout',
  });
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'not_approved');
  assert.equal(report.stopCondition, 'not_approved');
  assert.match(report.stopDetail, /not approved within 0.05 minutes/);
  assert.match(report.patch, /\+    for i in range\(len\(items\)\):/, 'the verified patch is still in the report');
  assert.equal(await scheduled(handle, 'computePatch'), 1, "the patch shown for approval is the report's");
  assert.equal((await handle.describe()).searchAttributes.DebugStatus?.[0], 'not_approved');
});

test('answers that do not fit are refused: approving a run that does not wait, rejecting without feedback', async () => {
  const plain = await startDebugRun(server.client, {
    input: { repo },
    taskQueue: worker.taskQueue,
    workflowId: 'approval-not-asked',
  });
  await plain.result();
  const refused = await cli(['approve', 'approval-not-asked']).done;
  assert.equal(refused.code, 2);
  assert.match(refused.output, /approval-not-asked is not awaiting approval \(phase done\)/);

  const waiting = await startDebugRun(server.client, {
    input: { repo, approve: true },
    taskQueue: worker.taskQueue,
    workflowId: 'approval-empty-feedback',
  });
  await awaitingApproval(waiting, 1);
  await assert.rejects(waiting.executeUpdate(rejectUpdate, { args: ['   '] }), (error: Error & { cause?: Error }) =>
    /A rejection needs feedback for the model/.test(error.cause?.message ?? ''),
  );
  const viaTemporal = await temporal([
    'workflow',
    'update',
    'execute',
    '--workflow-id',
    'approval-empty-feedback',
    '--name',
    'reject',
    '--input',
    '""',
  ]);
  assert.notEqual(viaTemporal.code, 0);
  assert.match(viaTemporal.output, /A rejection needs feedback/);
  // Still waiting: a refused answer changes nothing.
  assert.equal((await waiting.query(statusQuery)).phase, 'awaiting_approval');
  await waiting.executeUpdate(approveUpdate);
  assert.equal(((await waiting.result()) as DebugReport).status, 'fixed');
});
