// The per-user background worker (issue 36 item 2): `run` starts it once, says so, and later
// commands of the user lease it; it shows in `doctor` and `worker status`, is replaced when the
// user's model settings change, stops when asked or idle; and a run no longer loses an activity
// because another command of the same user ended (the issue-32 cancellation). Our real CLI in
// processes of its own, a real Temporal dev server, real Docker, the fake API over HTTP.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import proto from '@temporalio/proto';
import type { DebugReport } from '../../src/agent/report.js';
import { FakeAnthropicApi, type FakeApiOptions } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { statusQuery } from '../../src/temporal/definitions.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, runCli, startCli, type CliResult } from '../support/cli.js';

const { EventType } = proto.temporal.api.enums.v1;

let server: TestServer;
let fixture: Fixture;
const fakes: FakeAnthropicApi[] = [];
const homes: string[] = [];

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => {
  killCliProcesses();
  // Each home's worker is stopped; one left would also stop by itself once its state.json is gone.
  for (const home of homes) await runCli({ address: server.address, home }, ['worker', 'stop']).catch(() => undefined);
  for (const fake of fakes) await fake.stop().catch(() => undefined);
  await server?.stop();
  for (const home of homes) await rm(home, { recursive: true, force: true }).catch(() => undefined);
});

interface User {
  home: string;
  fake: FakeAnthropicApi;
  /** The fake's options: a test changes its latency between runs. */
  fakeOptions: FakeApiOptions;
  env: NodeJS.ProcessEnv;
}

async function user(name: string, extra: NodeJS.ProcessEnv = {}): Promise<User> {
  const fakeOptions: FakeApiOptions = { scripts: scriptsByName([fixture]), latencyMs: 50 };
  const fake = new FakeAnthropicApi(fakeOptions);
  await fake.start();
  fakes.push(fake);
  const home = await mkdtemp(join(tmpdir(), `durable-debugger-${name}-`));
  homes.push(home);
  const env = {
    ANTHROPIC_API_KEY: `sk-${name}`,
    ANTHROPIC_BASE_URL: fake.url,
    DURABLE_DEBUGGER_FOREGROUND_WORKER: '',
    ...extra,
  };
  return { home, fake, fakeOptions, env };
}

const cli = (who: User, args: string[], env: NodeJS.ProcessEnv = {}) =>
  startCli({ address: server.address, home: who.home }, args, { ...who.env, ...env });

function reportOf(result: CliResult): DebugReport {
  const line = result.stdout.split('\n').find((candidate) => candidate.startsWith('{"type":"report"'));
  assert.ok(line, `a report:\n${result.output}`);
  return (JSON.parse(line) as { report: DebugReport }).report;
}

async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The identities of the workers that took the run's activities. */
async function activityIdentities(workflowId: string): Promise<string[]> {
  const history = await server.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((event) => event.activityTaskStartedEventAttributes?.identity ?? []);
}

async function workerStatus(who: User): Promise<{ running: boolean; pid?: number; version?: string; queue?: string }> {
  const result = await cli(who, ['worker', 'status', '--json']).done;
  assert.equal(result.code, 0, result.output);
  return JSON.parse(result.stdout.trim().split('\n').pop() as string) as { running: boolean; pid?: number };
}

test('the first `run` starts the background worker and says so; the next one uses it; doctor shows it; other model settings get a new one; `worker stop` stops it', async () => {
  const alice = await user('alice');
  const first = await cli(alice, ['run', fixture.path, '--id', 'bw-first-run', '--json']).done;
  assert.equal(first.code, 0, first.output);
  assert.equal(reportOf(first).status, 'fixed');
  assert.match(first.stderr, /Starting the background worker \(first run after boot/);
  const status = await workerStatus(alice);
  assert.ok(status.running && status.pid, JSON.stringify(status));
  const pid = status.pid;
  // Its state and log are the user's alone, as the rest of the data folder.
  const folder = join(alice.home, 'background-worker');
  assert.equal(statSync(folder).mode & 0o777, 0o700);
  for (const file of ['state.json', 'worker.log']) assert.equal(statSync(join(folder, file)).mode & 0o777, 0o600, file);
  const state = JSON.parse(await readFile(join(folder, 'state.json'), 'utf8')) as { pid: number; queue: string };
  assert.equal(state.pid, pid);
  assert.match(state.queue, /^durable-debugger-cli-/);

  const second = await cli(alice, ['run', fixture.path, '--id', 'bw-second-run', '--json']).done;
  assert.equal(second.code, 0, second.output);
  assert.equal(reportOf(second).status, 'fixed');
  assert.doesNotMatch(second.stderr, /Starting the background worker/);
  // The warm run, started and followed by the worker for the command, shows what the first
  // command's own following showed: each message, in order (results differ only in timings).
  const shapeOf = (result: CliResult) =>
    result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{"type":"message"'))
      .map(
        (line) =>
          (JSON.parse(line) as { message: { role: string; content: Array<{ type: string; name?: string }> } }).message,
      )
      .map(({ role, content }) => `${role}: ${content.map((block) => block.name ?? block.type).join(', ')}`);
  assert.ok(shapeOf(second).length > 2, second.stdout);
  assert.deepEqual(shapeOf(second), shapeOf(first));
  for (const id of ['bw-first-run', 'bw-second-run']) {
    const identities = await activityIdentities(id);
    assert.ok(identities.length > 0);
    assert.deepEqual(
      identities.filter((identity) => !identity.startsWith(`${pid}@`)),
      [],
      `every activity of ${id} taken by the background worker`,
    );
  }

  const doctor = await cli(alice, ['doctor', '--json']).done;
  const checks = (
    JSON.parse(doctor.stdout.trim().split('\n').pop() as string) as { checks: Array<{ name: string; detail: string }> }
  ).checks;
  assert.match(
    checks.find((check) => check.name === 'background worker')?.detail ?? '',
    new RegExp(`running: pid ${pid}, version `),
  );

  // Another key (another endpoint) is never served by the worker started with the first one.
  const requestsBefore = alice.fake.requests.length;
  const otherKey = await cli(alice, ['run', fixture.path, '--id', 'bw-other-key', '--json'], {
    ANTHROPIC_API_KEY: 'sk-alice-second-key',
  }).done;
  assert.equal(otherKey.code, 0, otherKey.output);
  assert.match(otherKey.stderr, new RegExp(`Replacing the background worker \\(pid ${pid}\\): your settings changed`));
  const replaced = await workerStatus(alice);
  assert.ok(replaced.running && replaced.pid && replaced.pid !== pid, JSON.stringify(replaced));
  await waitFor('the replaced worker to stop', () => !alive(pid));
  const keys = alice.fake.requests.slice(requestsBefore).map((request) => request.apiKey);
  assert.ok(keys.length > 0);
  assert.deepEqual(new Set(keys), new Set(['sk-alice-second-key']), 'the run with the second key was answered with it');
  const takersOfOtherRun = new Set(
    (await activityIdentities('bw-other-key')).map((identity) => identity.split('@')[0]),
  );
  assert.deepEqual([...takersOfOtherRun], [String(replaced.pid)]);

  const stopped = await cli(alice, ['worker', 'stop']).done;
  assert.equal(stopped.code, 0, stopped.output);
  await waitFor('the worker to stop', () => !alive(replaced.pid as number));
  assert.equal((await workerStatus(alice)).running, false);
});

test('an idle background worker stops by itself (DURABLE_DEBUGGER_WORKER_IDLE_MINUTES)', async () => {
  const bob = await user('bob', { DURABLE_DEBUGGER_WORKER_IDLE_MINUTES: '0.05' });
  const run = await cli(bob, ['run', fixture.path, '--id', 'bw-idle-run', '--json']).done;
  assert.equal(reportOf(run).status, 'fixed', run.output);
  const pid = Number((await activityIdentities('bw-idle-run'))[0]?.split('@')[0]);
  assert.ok(pid > 0);
  await waitFor('the idle worker to stop', () => !alive(pid));
  assert.match(await readFile(join(bob.home, 'background-worker', 'worker.log'), 'utf8'), /Stopping: idle for/);
  assert.equal((await workerStatus(bob)).running, false);
});

test("two runs of one user: the first run's command ends while the second run is in an activity; the second run loses nothing and ends with its report (issue 32)", async () => {
  const carol = await user('carol');
  // The first run waits for approval once fixed: its command ends when the test approves.
  const firstCli = cli(carol, ['run', fixture.path, '--id', 'bw-shared-first', '--approve', '--json']);
  const first = server.client.workflow.getHandle('bw-shared-first');
  await waitFor('the first run to await approval', async () => {
    if (firstCli.child.exitCode !== null) throw new Error(`the first command ended:\n${firstCli.output()}`);
    return Boolean((await first.query(statusQuery).catch(() => null))?.awaitingApproval);
  });
  // The second run's model calls now take long, and its command's terminal is closed once it has started.
  carol.fakeOptions.latencyMs = 20_000;
  const secondCli = cli(carol, ['run', fixture.path, '--id', 'bw-shared-second']);
  await waitFor('the second run to start', () => /Run: bw-shared-second/.test(secondCli.output()));
  secondCli.child.kill('SIGKILL');
  const second = server.client.workflow.getHandle('bw-shared-second');
  await waitFor('the second run to be in a model call', async () =>
    ((await second.describe()).raw.pendingActivities ?? []).some(
      (activity) =>
        activity.activityType?.name === 'callModel' &&
        [2, 'PENDING_ACTIVITY_STATE_STARTED'].includes(activity.state as unknown as number),
    ),
  );
  // The first command ends (approved) while the second run's model call is under way.
  const approved = await cli(carol, ['approve', 'bw-shared-first']).done;
  assert.equal(approved.code, 0, approved.output);
  const firstDone = await firstCli.done;
  assert.equal(firstDone.code, 0, firstDone.output);
  assert.equal(reportOf(firstDone).status, 'fixed');
  assert.doesNotMatch(firstDone.output, /cancel/i, 'the first command cancelled nothing');
  carol.fakeOptions.latencyMs = 50;

  // Followed to its end by another command of the same user.
  const followed = await cli(carol, ['resume', 'bw-shared-second', '--json']).done;
  assert.equal(followed.code, 0, followed.output);
  assert.equal(reportOf(followed).status, 'fixed');
  const history = await second.fetchHistory();
  const lost = (history.events ?? []).filter(
    (event) =>
      event.activityTaskFailedEventAttributes ||
      event.activityTaskTimedOutEventAttributes ||
      event.activityTaskCanceledEventAttributes ||
      (event.activityTaskStartedEventAttributes?.attempt ?? 1) > 1,
  );
  assert.deepEqual(
    lost.map((event) => `${event.eventId}: ${EventType[event.eventType ?? 0]}`),
    [],
    'no activity of the second run failed, timed out, was cancelled or tried again',
  );
});
