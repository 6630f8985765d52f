// Long commands and Temporal, on the real dev server and real Docker: a running command
// heartbeats, a cancelled run stops it and removes its sandbox, and a terminated run (which
// cannot clean up) still gets its command stopped through the heartbeat's answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { sandboxIdFor } from '../../src/agent/ids.js';
import { startDebugRun } from '../../src/client.js';
import { reapOrphans } from '../../src/reaper.js';
import { connectDocker, findSandboxContainer } from '../../src/sandbox/container/container.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import {
  containersOf,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const longCommand = 'sleep 300';
let server: TestServer;
let worker: TestWorker;
const docker = connectDocker();

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, {
    fake: {
      scripts: {
        responses: [
          { thought: 'Something slow.', tool_calls: [{ name: 'run_command', input: { command: longCommand } }] },
        ],
      },
    },
  });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function startLongCommand(): Promise<WorkflowHandle> {
  const fixture = await loadFixture('01_off_by_one');
  const handle = await startDebugRun(server.client, {
    input: { repo: fixture.path, allowCommands: true, sandbox: { commandTimeoutSeconds: 600 } },
    taskQueue: worker.taskQueue,
  });
  await waitFor('the long command to run', async () => (await commandProcesses(handle)).length > 0);
  return handle;
}

async function commandProcesses(handle: WorkflowHandle): Promise<string[]> {
  const info = await findSandboxContainer(docker, sandboxIdFor(handle.workflowId));
  if (!info || info.State !== 'running') return [];
  const top = (await docker
    .getContainer(info.Id)
    .top({ ps_args: '-o pid,args' })
    .catch(() => null)) as { Processes?: string[][] } | null;
  return (top?.Processes ?? []).map((row) => row[1] ?? '').filter((args) => args === longCommand);
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return Date.now() - started;
}

test('a long command heartbeats to Temporal while it runs, and cancelling the run stops it and removes the sandbox', async () => {
  const handle = await startLongCommand();
  const heartbeat = await waitFor('a heartbeat from the command', async () => {
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    return pending.some((activity) => activity.activityType?.name === 'runTool' && activity.lastHeartbeatTime);
  });
  assert.ok(heartbeat < 5000, `the first heartbeat came after ${heartbeat} ms`);

  await handle.cancel();
  await assert.rejects(handle.result(), /cancelled/i);
  assert.equal((await handle.describe()).status.name, 'CANCELLED');
  assert.equal(await containersOf(server), 0);
});

test('a terminated run cannot clean up, yet its running command is stopped when the heartbeat is answered', async () => {
  const handle = await startLongCommand();
  await handle.terminate('the test terminates the run');
  const stoppedAfterMs = await waitFor(
    'the command to stop',
    async () => (await commandProcesses(handle)).length === 0,
    40_000,
  );
  console.log(`the command stopped ${(stoppedAfterMs / 1000).toFixed(1)} s after the run was terminated`);
  // The container itself stays, for the reaper.
  const left = await findSandboxContainer(docker, sandboxIdFor(handle.workflowId));
  assert.equal(left?.State, 'running');
  const reaped = await reapOrphans({ docker, client: server.client, scope: `${server.address}/default` });
  assert.deepEqual(
    reaped.map((item) => item.reason),
    ['workflow terminated'],
  );
  assert.equal(await containersOf(server), 0);
});
