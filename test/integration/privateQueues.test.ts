// A CLI's worker serves only the runs it started. Two people ("Alice" and "Bob") run our real CLI
// against one Temporal server, each with a key of their own (each key a fake Anthropic API of its
// own): each run is snapshotted, built and modelled by its starter's process only, and a run that
// names Alice's model endpoint, or her private queue as well, never gets her key used or its path
// read by her worker.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '@temporalio/client';
import type { DebugReport } from '../../src/agent/report.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { modelEndpointId } from '../../src/model/endpoint.js';
import { statusQuery, stopSignal } from '../../src/temporal/definitions.js';
import { startTestServer, startWorkerProcess, type TestServer, type WorkerProcess } from '../../harness/devStack.js';
import { killCliProcesses, startCli, type CliProcess } from '../support/cli.js';

let server: TestServer;
let fixture: Fixture;
const fakes: FakeAnthropicApi[] = [];
const workers: WorkerProcess[] = [];
const homes: string[] = [];

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => {
  killCliProcesses();
  for (const worker of workers) await worker.stop().catch(() => undefined);
  for (const fake of fakes) await fake.stop().catch(() => undefined);
  await server?.stop();
  for (const home of homes) await rm(home, { recursive: true, force: true }).catch(() => undefined);
});

interface Person {
  name: string;
  /** Their data folder: each person's own, as each user's home is. */
  home: string;
  key: string;
  fake: FakeAnthropicApi;
  endpoint: string;
}

async function person(name: string): Promise<Person> {
  const fake = new FakeAnthropicApi({ scripts: scriptsByName([fixture]), latencyMs: 200 });
  await fake.start();
  fakes.push(fake);
  const key = `sk-${name}-key`;
  const home = await mkdtemp(join(tmpdir(), `durable-debugger-${name}-`));
  homes.push(home);
  return { name, home, key, fake, endpoint: modelEndpointId({ apiKey: key, baseURL: fake.url }) as string };
}

function cliOf(who: Person, args: string[]): CliProcess {
  return startCli({ address: server.address, home: who.home }, args, {
    ANTHROPIC_API_KEY: who.key,
    ANTHROPIC_BASE_URL: who.fake.url,
  });
}

/** The marker each run carries in its goal, so a model request can be traced to its run. */
function runsSeenBy(fake: FakeAnthropicApi): Set<string> {
  return new Set(
    fake.requests.flatMap((request) => JSON.stringify(request.body.messages).match(/private-run-[a-z]+/g) ?? []),
  );
}

/** Every activity of the run's history: its type, the identity of the worker that took it, and whether it completed. */
async function activitiesOf(
  client: Client,
  workflowId: string,
): Promise<Array<{ type: string; identity: string; completed: boolean }>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const types = new Map<string, string>();
  const taken = new Map<string, { type: string; identity: string; completed: boolean }>();
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '?');
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const type = types.get(String(started.scheduledEventId)) ?? '?';
      taken.set(String(started.scheduledEventId), { type, identity: started.identity ?? '', completed: false });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const activity = completed && taken.get(String(completed.scheduledEventId));
    if (activity) activity.completed = true;
  }
  return [...taken.values()];
}

async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test("Alice's and Bob's `run` at once: each run is snapshotted, built and modelled by its own CLI process only", async () => {
  const alice = await person('alice');
  const bob = await person('bob');
  const runs = [
    { who: alice, id: 'private-alice-run', goal: 'private-run-alice: make the failing tests pass' },
    { who: bob, id: 'private-bob-run', goal: 'private-run-bob: make the failing tests pass' },
  ];
  const processes = runs.map(({ who, id, goal }) =>
    cliOf(who, ['run', fixture.path, '--id', id, '--goal', goal, '--json']),
  );
  const results = await Promise.all(processes.map((process) => process.done));
  for (const [index, result] of results.entries()) {
    assert.equal(result.code, 0, result.output);
    const line = result.stdout.split('\n').find((candidate) => candidate.startsWith('{"type":"report"'));
    assert.equal((JSON.parse(line as string) as { report: DebugReport }).report.status, 'fixed', result.output);
    const { who, id } = runs[index] as (typeof runs)[number];
    const pid = processes[index]?.child.pid as number;
    const taken = await activitiesOf(server.client, id);
    assert.ok(taken.some((activity) => activity.type === 'snapshotRepository'));
    assert.ok(taken.some((activity) => activity.type === 'callModel'));
    const elsewhere = taken
      .filter((activity) => !activity.identity.startsWith(`${pid}@`))
      .map(({ type, identity }) => ({ type, identity }));
    assert.deepEqual(elsewhere, [], `every activity of ${who.name}'s run is taken by ${who.name}'s CLI (pid ${pid})`);
  }
  assert.deepEqual([...runsSeenBy(alice.fake)], ['private-run-alice'], "Alice's key answered Alice's run only");
  assert.deepEqual([...runsSeenBy(bob.fake)], ['private-run-bob'], "Bob's key answered Bob's run only");
});

test("a run that names Alice's model endpoint, or her private queue too, never gets her key used or its path read by her worker", async () => {
  const alice = await person('alice');
  const operator = await person('operator');
  // Alice's MCP server: her worker lives as long as it does.
  const aliceMcp = cliOf(alice, ['mcp', '--port', String(await freeTcpPort())]);
  await waitFor(
    "Alice's MCP server",
    () => /MCP server on http/.test(aliceMcp.output()) || aliceMcp.child.exitCode !== null,
  );
  // The deployment's worker on the shared queue, with the operator's key.
  workers.push(
    await startWorkerProcess(server, {
      taskQueue: server.config().taskQueue,
      hostId: 'shared-host',
      fakeUrl: operator.fake.url,
      env: { ANTHROPIC_API_KEY: operator.key },
    }),
  );

  // Bob, as any Temporal user: the endpoint and the queue are in Alice's runs' inputs for all to see.
  const base = { ...fixtureInput(fixture), modelEndpoint: alice.endpoint, modelWorkerWait: { firstSeconds: 1 } };
  const namesEndpoint = await server.client.workflow.start('debugRepository', {
    taskQueue: server.config().taskQueue,
    workflowId: 'bob-names-alice-endpoint',
    args: [{ ...base, goal: 'private-run-endpoint: make the failing tests pass' }],
  });
  // Its snapshot and sandbox are the deployment's; its model calls wait: no worker of the shared queue serves Alice's endpoint.
  let closed = false;
  await waitFor('the run to wait for a model worker, or to end', async () => {
    closed = (await namesEndpoint.describe()).status.name !== 'RUNNING';
    const status = closed ? null : await namesEndpoint.query(statusQuery).catch(() => null);
    return closed || /waiting for a worker serving model endpoint/.test(status?.waitingFor ?? '');
  });
  assert.deepEqual(
    [...runsSeenBy(alice.fake)],
    [],
    "Alice's key answered no model call of a run that names her endpoint",
  );
  assert.ok(!closed, 'the run waits for a worker of that endpoint');
  await namesEndpoint.signal(stopSignal, 'the test has seen enough');
  await namesEndpoint.result();

  const aliceQueue =
    /serves only the runs your commands start, on task queue (\S+)\./.exec(aliceMcp.output())?.[1] ?? '';
  assert.ok(aliceQueue, `Alice's CLI names its private queue:\n${aliceMcp.output()}`);

  const namesQueue = await server.client.workflow.start('debugRepository', {
    taskQueue: server.config().taskQueue,
    workflowId: 'bob-names-alice-queue',
    args: [{ ...base, privateQueue: aliceQueue, goal: 'private-run-queue: make the failing tests pass' }],
  });
  const outcome = await namesQueue.result().then(
    (report: DebugReport) => `report ${report.status}: ${report.stopDetail}`,
    (error: Error) => `failed: ${error.message} ${(error.cause as Error | undefined)?.message ?? ''}`,
  );
  assert.match(outcome, /refused|serves no other run/, outcome);
  const taken = await activitiesOf(server.client, 'bob-names-alice-queue');
  const done = taken.filter((activity) => activity.completed && activity.identity.includes(`${aliceMcp.child.pid}@`));
  assert.deepEqual(
    done,
    [],
    "Alice's worker completed no activity of that run (no snapshot, no sandbox, no model call)",
  );
  assert.ok(!taken.some((activity) => activity.type === 'callModel'), JSON.stringify(taken));

  assert.deepEqual([...runsSeenBy(alice.fake)], [], "Alice's key answered none of these runs");
  aliceMcp.child.kill('SIGTERM');
  await aliceMcp.done;
});

async function freeTcpPort(): Promise<number> {
  const { freePort } = await import('../../harness/devStack.js');
  return freePort();
}
