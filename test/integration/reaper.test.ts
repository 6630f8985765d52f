// The reaper, on the real dev server and real Docker: it removes the sandboxes of closed and
// unknown workflows and containers stuck in "created", and leaves running ones alone, both
// when called directly (as `durable-debugger reap` does) and as a worker's startup sweep; and
// `reap` gives back the sandbox-queue place of a run that ended without saying so.
import assert from 'node:assert/strict';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type Docker from 'dockerode';
import { createHostActivities } from '../../activities/sandbox.js';
import { sandboxLimitsSchema } from '../../src/agent/input.js';
import { reapOrphans } from '../../src/reaper.js';
import { closedReason } from '../../src/temporal/closedRuns.js';
import { startTestSandbox } from '../support/testSandbox.js';
import {
  connectDocker,
  createSandboxContainer,
  findSandboxContainer,
  labels,
  projectLabel,
  removeContainer,
} from '../../src/sandbox/container/container.js';
import { emptyAdmission } from '../../src/agent/admission.js';
import {
  sandboxAdmissionIdFor,
  sandboxAdmissionType,
  sandboxQueueQuery,
  workflowType,
} from '../../src/temporal/definitions.js';
import {
  containersOf,
  startTestServer,
  startTestWorker,
  uniqueTaskQueue,
  type TestServer,
} from '../../harness/devStack.js';

let server: TestServer;
let docker: Docker;
let scope: string;
const image = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';

before(async () => {
  server = await startTestServer();
  docker = connectDocker();
  scope = `${server.address}/default`;
});

after(async () => {
  // Whatever a failed test left behind.
  for (const container of await docker.listContainers({
    all: true,
    filters: { label: [`${labels.scope}=${scope}`] },
  })) {
    await removeContainer(docker, container.Id);
  }
  await server?.stop();
});

/** A workflow that stays running: no worker listens on its task queue. */
async function runningWorkflow(name: string): Promise<string> {
  const workflowId = `reaper-${name}-${process.pid}-${Date.now()}`;
  await server.client.workflow.start(workflowType, {
    taskQueue: uniqueTaskQueue('nobody'),
    workflowId,
    args: [{ repo: '/nowhere' }],
  });
  return workflowId;
}

async function sandboxFor(workflowId: string, options: { scope?: string; started?: boolean } = {}): Promise<string> {
  const sandboxId = `reaper-${workflowId}`.slice(0, 60);
  const spec = {
    sandboxId,
    image,
    workspaceDir: join(server.home, 'unused-workspace'),
    limits: sandboxLimitsSchema.parse({}),
    labels: { workflowId, runId: 'run', host: 'test-host', scope: options.scope ?? scope },
  };
  await mkdir(spec.workspaceDir, { recursive: true });
  if (options.started === false) {
    // What a worker that died between create and start leaves behind.
    await docker.createContainer({
      name: `durable-debugger-${sandboxId}`,
      Image: image,
      Cmd: ['sleep', 'infinity'],
      Labels: {
        [labels.project]: projectLabel,
        [labels.sandboxId]: sandboxId,
        [labels.workflowId]: workflowId,
        [labels.scope]: spec.labels.scope,
        [labels.created]: new Date().toISOString(),
      },
      HostConfig: { NetworkMode: 'none' },
    });
  } else {
    await createSandboxContainer(docker, spec);
  }
  return sandboxId;
}

async function exists(sandboxId: string): Promise<boolean> {
  return Boolean(await findSandboxContainer(docker, sandboxId));
}

test('removes the sandboxes of closed and unknown workflows and containers stuck in created; leaves running ones alone', async () => {
  const running = await runningWorkflow('running');
  const terminated = await runningWorkflow('terminated');
  await server.client.workflow.getHandle(terminated).terminate('the test ends it');
  const unknown = `reaper-never-started-${process.pid}`;

  const ofRunning = await sandboxFor(running);
  const ofTerminated = await sandboxFor(terminated);
  const ofUnknown = await sandboxFor(unknown);
  const stuck = await sandboxFor(`${running}-stuck`, { started: false });
  // Another Temporal server's sandbox: this reaper cannot judge it, so it never touches it.
  const foreign = await sandboxFor(`${unknown}-foreign`, { scope: 'another-server:7233/default' });

  const workspaceRoot = join(server.home, 'reaper-workspaces');
  for (const [sandboxId, workflowId] of [
    [ofRunning, running],
    [ofTerminated, terminated],
  ]) {
    await mkdir(join(workspaceRoot, sandboxId as string, 'workspace'), { recursive: true });
    await writeFile(join(workspaceRoot, sandboxId as string, 'owner.json'), JSON.stringify({ workflowId, scope }));
  }

  try {
    await new Promise((resolve) => setTimeout(resolve, 2100)); // Docker's creation times are in whole seconds
    const reaped = await reapOrphans({ docker, client: server.client, scope, workspaceRoot, createdGraceMs: 1000 });
    const reasons = Object.fromEntries(reaped.map((item) => [`${item.kind} ${item.id}`, item.reason]));
    assert.deepEqual(reasons, {
      [`container durable-debugger-${ofTerminated}`]: 'workflow terminated',
      [`container durable-debugger-${ofUnknown}`]: 'workflow unknown',
      [`container durable-debugger-${stuck}`]: 'stuck in created',
      [`workspace ${ofTerminated}`]: 'workflow terminated',
    });
    assert.equal(await exists(ofRunning), true);
    assert.equal(await exists(foreign), true);
    assert.equal(await exists(ofTerminated), false);
    assert.equal(await exists(ofUnknown), false);
    assert.equal(await exists(stuck), false);
    await stat(join(workspaceRoot, ofRunning));
    await assert.rejects(stat(join(workspaceRoot, ofTerminated)), { code: 'ENOENT' });
  } finally {
    await server.client.workflow.getHandle(running).terminate('test over');
    for (const sandboxId of [ofRunning, foreign]) {
      const info = await findSandboxContainer(docker, sandboxId);
      if (info) await removeContainer(docker, info.Id);
    }
  }
});

test('a sandbox made for a run that closed meanwhile is removed, and its queue place given back, by the activity that made it', async () => {
  // The host of a test sandbox, with the snapshot it took; its own container is not used here.
  const sandbox = await startTestSandbox();
  const released: string[] = [];
  const activities = createHostActivities(sandbox.host, undefined, undefined, {
    reason: (workflowId) => closedReason(server.client, workflowId),
    releasePlace: async (workflowId) => void released.push(workflowId),
  });
  const running = await runningWorkflow('prepared');
  const terminated = await runningWorkflow('closed-while-prepared');
  await server.client.workflow.getHandle(terminated).terminate('ended while its sandbox was made');
  const request = (workflowId: string) => ({
    sandboxId: `prepared-${workflowId}`.slice(0, 60),
    workflowId,
    runId: 'run',
    log: { snapshotId: sandbox.snapshotId, mutations: [], digest: sandbox.snapshotId },
    limits: sandbox.limits,
  });
  const environment = new MockActivityEnvironment();
  try {
    const kept = (await environment.run(activities.prepareSandbox, request(running))) as { containerCreated: boolean };
    assert.equal(kept.containerCreated, true);
    assert.equal(await exists(request(running).sandboxId), true, 'a running workflow keeps the sandbox it asked for');
    await assert.rejects(
      environment.run(activities.prepareSandbox, request(terminated)),
      /the run closed \(workflow terminated\)/,
    );
    assert.equal(
      await exists(request(terminated).sandboxId),
      false,
      'the closed run’s container outlived the activity',
    );
    assert.deepEqual(released, [terminated], 'only the closed run gives back its place in the sandbox queue');
  } finally {
    await sandbox.host.destroy(request(running).sandboxId);
    await sandbox.host.destroy(request(terminated).sandboxId);
    await sandbox.stop();
    await server.client.workflow.getHandle(running).terminate('test over');
  }
});

test('a worker sweeps what earlier runs left behind when it starts', async () => {
  const orphan = await sandboxFor(`reaper-orphan-${process.pid}`);
  const running = await runningWorkflow('kept');
  const kept = await sandboxFor(running);
  const worker = await startTestWorker(server, { fake: { scripts: { responses: [] } } });
  try {
    const deadline = Date.now() + 15_000;
    while ((await exists(orphan)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await exists(orphan), false, 'the startup sweep did not remove the orphan');
    assert.equal(await exists(kept), true);
  } finally {
    await worker.stop();
    await server.client.workflow.getHandle(running).terminate('test over');
    const info = await findSandboxContainer(docker, kept);
    if (info) await removeContainer(docker, info.Id);
  }
  assert.equal(await containersOf(server), 0);
});

test('every worker sweeps periodically: a run terminated while the worker runs loses its sandbox without `reap` or a restart', async () => {
  const worker = await startTestWorker(server, {
    fake: { scripts: { responses: [] } },
    configOverrides: { DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '2' },
  });
  const running = await runningWorkflow('terminated-later');
  try {
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the startup sweep is over
    const sandbox = await sandboxFor(running);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    assert.equal(await exists(sandbox), true, 'a running workflow keeps its sandbox across sweeps');
    await server.client.workflow.getHandle(running).terminate('terminated from outside');
    const deadline = Date.now() + 30_000;
    while ((await exists(sandbox)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await exists(sandbox), false, 'the periodic sweep did not remove the terminated run’s sandbox');
  } finally {
    await worker.stop();
    await server.client.workflow
      .getHandle(running)
      .terminate('test over')
      .catch(() => undefined);
  }
  assert.equal(await containersOf(server), 0);
});

test('a run that ended while the sandbox queue counts it: the sweep of a host that never held it leaves it (each host answers for its own runs), `reap` gives its place back', async () => {
  const worker = await startTestWorker(server, {
    fake: { scripts: { responses: [] } },
    configOverrides: { DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '1' },
  });
  const gone = await runningWorkflow('queue-place');
  // The queue as it would be after placing the run on a host that has since gone away.
  const queue = await server.client.workflow.start(sandboxAdmissionType, {
    taskQueue: worker.taskQueue,
    workflowId: sandboxAdmissionIdFor(worker.taskQueue),
    args: [{ ...emptyAdmission(), holding: { [gone]: { user: 'ada', since: Date.now() } }, placed: 1 }],
  });
  const holds = async () => Boolean((await queue.query(sandboxQueueQuery)).holding[gone]);
  try {
    assert.equal(await holds(), true);
    await server.client.workflow.getHandle(gone).terminate('terminated from outside');
    await new Promise((resolve) => setTimeout(resolve, 4_000)); // several sweeps of the worker
    assert.equal(await holds(), true, "a host's sweep released a run it never held");
    const reaped = await reapOrphans({ docker, client: server.client, scope, taskQueue: worker.taskQueue });
    assert.deepEqual(
      reaped.map((item) => [item.kind, item.workflowId, item.reason]),
      [['queue place', gone, 'workflow terminated']],
    );
    assert.equal(await holds(), false, '`reap` left the ended run in the queue');
  } finally {
    await queue.terminate('test over').catch(() => undefined);
    await worker.stop();
  }
});
