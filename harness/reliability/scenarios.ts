// The reliability scenarios. Each runs scripted fixtures through the lab while something
// fails on purpose, and reports: runs, runs ending with the expected status, lost work
// (a patch or an iteration count that differs from a clean run, or a request the API would
// reject: a tool_use without its tool_result), and sandbox containers left behind.
import { execFileSync, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugReport } from '../../src/agent/report.js';
import { reapOrphans } from '../../src/reaper.js';
import { connectDocker, labels, listProjectContainers } from '../../src/sandbox/container/container.js';
import { statusQuery } from '../../src/temporal/definitions.js';
import { fixtureInput, type Fixture } from '../../src/demo/fixtures.js';
import { Lab, sleep } from './lab.js';

export interface ScenarioRow {
  scenario: string;
  runs: number;
  expected: number;
  lostWork: number;
  leakedContainers: number;
  notes: string;
  /** Each run that did not end as undisturbed, and how it ended: a missed target says why. */
  misses: string[];
}

export interface Expectation {
  status: string;
  patch: string;
  iterations: number;
}

export class Scenarios {
  private counter = 0;
  constructor(
    private readonly lab: Lab,
    private readonly fixtures: Fixture[],
    private readonly expectations: Map<string, Expectation>,
  ) {}

  /** Clean runs of each fixture: what every disturbed run must end with. */
  static async expectationsFor(lab: Lab, fixtures: Fixture[]): Promise<Map<string, Expectation>> {
    const expectations = new Map<string, Expectation>();
    await lab.startWorker('clean');
    try {
      for (const fixture of fixtures) {
        const handle = await lab.startRun(fixtureInput(fixture), `clean-${fixture.name}`);
        const report = await lab.reportOf(handle);
        if (report.status !== fixture.meta.expectedStatus)
          throw new Error(`${fixture.name} did not end ${fixture.meta.expectedStatus} even undisturbed`);
        expectations.set(fixture.name, { status: report.status, patch: report.patch, iterations: report.iterations });
      }
    } finally {
      await lab.stopWorker('clean');
    }
    return expectations;
  }

  private fixtureFor(index: number): Fixture {
    return this.fixtures[index % this.fixtures.length] as Fixture;
  }

  private async startRuns(
    prefix: string,
    count: number,
    offset = 0,
  ): Promise<Array<{ handle: WorkflowHandle; fixture: Fixture }>> {
    const runs = [];
    for (let index = 0; index < count; index++) {
      const fixture = this.fixtureFor(index + offset);
      this.counter += 1;
      runs.push({
        handle: await this.lab.startRun(fixtureInput(fixture), `${prefix}-${this.counter}-${fixture.name}`),
        fixture,
      });
    }
    return runs;
  }

  /** Compares each run's report with the clean run of its fixture. */
  private async judge(
    name: string,
    runs: Array<{ handle: WorkflowHandle; fixture: Fixture }>,
    notes: string,
    rejectedBefore: number,
  ): Promise<ScenarioRow> {
    let expected = 0;
    let lostWork = 0;
    const misses: string[] = [];
    for (const { handle, fixture } of runs) {
      let report: DebugReport;
      try {
        report = await this.lab.reportOf(handle);
      } catch (error) {
        lostWork += 1;
        misses.push(`${handle.workflowId} (${fixture.name}): no report: ${(error as Error).message}`);
        continue;
      }
      const clean = this.expectations.get(fixture.name) as Expectation;
      if (report.status === clean.status) expected += 1;
      const samePatch = report.patch === clean.patch;
      if (!samePatch || report.iterations !== clean.iterations) lostWork += 1;
      if (report.status !== clean.status || !samePatch || report.iterations !== clean.iterations)
        misses.push(
          `${handle.workflowId} (${fixture.name}): ${report.status} after ${report.iterations} iterations ` +
            `(undisturbed: ${clean.status} after ${clean.iterations}), ${samePatch ? 'same' : 'another'} patch; ${report.stopDetail}`,
        );
    }
    const rejected = this.lab.fake.rejected.slice(rejectedBefore);
    lostWork += rejected.length;
    for (const request of rejected) misses.push(`the API rejected a request: ${request.error}`);
    const leaked = await this.settledLeaks();
    return { scenario: name, runs: runs.length, expected, lostWork, leakedContainers: leaked, notes, misses };
  }

  /** Containers left once cleanup had a moment to finish. */
  private async settledLeaks(): Promise<number> {
    for (let attempt = 0; attempt < 20; attempt++) {
      if ((await this.lab.leakedContainers()).length === 0) return 0;
      await sleep(500);
    }
    return (await this.lab.leakedContainers()).length;
  }

  private async phaseOf(handle: WorkflowHandle): Promise<string> {
    const status = await Promise.race([handle.query(statusQuery).catch(() => null), sleep(1_000).then(() => null)]);
    return status?.phase ?? 'unknown';
  }

  async workerKilled(runs: number, batch = 4): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    const all: Array<{ handle: WorkflowHandle; fixture: Fixture }> = [];
    const phases: Record<string, number> = {};
    await this.lab.startWorker('a');
    // Kill moments cycle through a model call, a tool call (a test run or an edit) and the verification.
    const targets = ['thinking', 'acting', 'verifying'];
    for (let done = 0; done < runs; done += batch) {
      const started = await this.startRuns('worker-killed', Math.min(batch, runs - done), done);
      all.push(...started);
      const target = targets[(done / batch) % targets.length] as string;
      const deadline = Date.now() + 20_000;
      while (
        Date.now() < deadline &&
        (await this.phaseOf((started[0] as { handle: WorkflowHandle }).handle)) !== target
      )
        await sleep(50);
      await sleep(Math.random() * 300);
      for (const { handle } of started) {
        const phase = await this.phaseOf(handle);
        phases[phase] = (phases[phase] ?? 0) + 1;
      }
      await this.lab.killWorker('a');
      await sleep(500 + Math.random() * 1_500);
      await this.lab.startWorker('a');
      await Promise.all(started.map(({ handle }) => this.lab.reportOf(handle).catch(() => null)));
    }
    await this.lab.stopWorker('a');
    const kills = Math.ceil(runs / batch);
    const at = Object.entries(phases)
      .map(([phase, count]) => `${count} ${phase}`)
      .join(', ');
    return this.judge('worker killed (SIGKILL), restarted', all, `${kills} kills; runs were: ${at}`, rejectedBefore);
  }

  /**
   * A run of three parallel attempts (child workflows): the worker is killed while all three
   * work, and a new worker carries each on where it was. Each attempt must end as a clean run
   * of the fixture does (same patch, same iterations), and the parent as without the kill.
   */
  async attemptsWorkerKilled(runs: number): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    const fixture = this.fixtures.find((each) => each.name === '01_off_by_one') ?? this.fixtureFor(0);
    const clean = this.expectations.get(fixture.name) as Expectation;
    const killedAt: string[] = [];
    const misses: string[] = [];
    let expected = 0;
    let lostWork = 0;
    await this.lab.startWorker('a');
    for (let index = 0; index < runs; index++) {
      this.counter += 1;
      const input = fixtureInput(fixture, { attempts: 3, budgets: { maxIterations: 3 * 30 } });
      const handle = await this.lab.startRun(input, `attempts-killed-${this.counter}-${fixture.name}`);
      const children = [1, 2, 3].map((k) => this.lab.client.workflow.getHandle(`${handle.workflowId}-attempt-${k}`));
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const statuses = await Promise.all(
          children.map((child) =>
            Promise.race([child.query(statusQuery).catch(() => null), sleep(1_000).then(() => null)]),
          ),
        );
        if (statuses.every((status) => status && status.iteration >= 2 && status.phase !== 'done')) {
          killedAt.push(statuses.map((status) => `${status?.phase} ${status?.iteration}`).join(', '));
          break;
        }
        await sleep(100);
      }
      await this.lab.killWorker('a');
      await sleep(500 + Math.random() * 1_500);
      await this.lab.startWorker('a');
      const report = await this.lab.reportOf(handle).catch(() => null);
      const attempts = report?.attempts ?? [];
      if (
        report?.status === clean.status &&
        attempts.length === 3 &&
        attempts.every((attempt) => attempt.status === clean.status)
      )
        expected += 1;
      const sameWork =
        report?.patch === clean.patch &&
        report.iterations === 3 * clean.iterations &&
        attempts.every((attempt) => attempt.patch === clean.patch && attempt.iterations === clean.iterations);
      if (!sameWork) lostWork += 1;
      if (!sameWork || report?.status !== clean.status)
        misses.push(
          report
            ? `${handle.workflowId}: ${report.status} after ${report.iterations} iterations, attempts ${attempts.map((attempt) => `${attempt.status}/${attempt.iterations}`).join(' ')} (undisturbed: ${clean.status} after ${clean.iterations} each); ${report.stopDetail}`
            : `${handle.workflowId}: no report`,
        );
    }
    await this.lab.stopWorker('a');
    lostWork += this.lab.fake.rejected.length - rejectedBefore;
    const leaked = await this.settledLeaks();
    return {
      scenario: 'worker killed while 3 attempts (child runs) work',
      runs,
      expected,
      lostWork,
      leakedContainers: leaked,
      notes: `attempts were at ${killedAt.join('; ') || 'unknown'} when killed`,
      misses,
    };
  }

  async serverKilled(runs: number, hosts = ['a']): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    for (const host of hosts) await this.lab.startWorker(host);
    const started = await this.startRuns('server-killed', runs);
    await sleep(1_500 + Math.random() * 2_500);
    await this.lab.killServer();
    await sleep(2_000);
    await this.lab.startServer();
    const name = this.lab.onCluster
      ? `Temporal server process killed (SIGKILL), restarted; ${hosts.length} hosts`
      : 'Temporal server killed, restarted on its database';
    const row = await this.judge(name, started, 'one kill mid-run, down for 2 s', rejectedBefore);
    for (const host of hosts) await this.lab.stopWorker(host);
    return row;
  }

  /**
   * Hosts that share nothing but the network (the cluster): the host that holds the most sandboxes
   * is killed (SIGKILL) while the runs work, and stays down. Each of its runs must move to another
   * host, which rebuilds the workspace from the content store in PostgreSQL, and end as a clean run does.
   */
  async hostKilled(runs: number, hosts = ['a', 'b', 'c']): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    for (const host of hosts) await this.lab.startWorker(host);
    const started = await this.startRuns('host-killed', runs);
    // Wait until every run has its sandbox somewhere, and some are working in it.
    const deadline = Date.now() + 60_000;
    let holders = new Map<string, string>();
    while (Date.now() < deadline) {
      holders = await this.sandboxHosts(started.map(({ handle }) => handle.workflowId));
      if (holders.size === started.length) break;
      await sleep(200);
    }
    await sleep(Math.random() * 1_000);
    const counts = new Map<string, number>();
    for (const hostId of holders.values()) counts.set(hostId, (counts.get(hostId) ?? 0) + 1);
    const [victimId] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? [`reliability-${hosts[0]}`];
    const victim = hosts.find((host) => `reliability-${host}` === victimId) as string;
    const onVictim = started.filter(({ handle }) => holders.get(handle.workflowId) === victimId);
    await this.lab.killWorker(victim);
    const sharing = this.lab.onCluster ? 'no shared folder' : 'one shared folder';
    const row = await this.judge(
      `worker host killed (SIGKILL) holding sandboxes; ${hosts.length} hosts, ${sharing}`,
      started,
      '',
      rejectedBefore,
    );
    let moved = 0;
    for (const { handle } of onVictim) {
      const host = await lastPreparedHost(handle);
      if (host && host !== victimId) moved += 1;
    }
    row.notes = `${victimId} killed holding ${onVictim.length} of ${runs} sandboxes; ${moved} moved to another host, rebuilt from ${this.lab.onCluster ? 'PostgreSQL' : 'the shared folder'}`;
    for (const host of hosts) await this.lab.stopWorker(host);
    return row;
  }

  /** The cluster's PostgreSQL (Temporal's persistence and the content store) restarted while runs work. */
  async postgresRestarted(runs: number, hosts = ['a', 'b', 'c']): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    for (const host of hosts) await this.lab.startWorker(host);
    const started = await this.startRuns('postgres-restarted', runs);
    await sleep(1_500 + Math.random() * 2_500);
    const downFor = await this.lab.restartPostgres();
    const row = await this.judge(
      `PostgreSQL restarted (Temporal's database and the content store); ${hosts.length} hosts`,
      started,
      `down for ${(downFor / 1000).toFixed(1)} s`,
      rejectedBefore,
    );
    for (const host of hosts) await this.lab.stopWorker(host);
    return row;
  }

  /** The host that holds each run's sandbox now (runs without a container are left out). */
  private async sandboxHosts(workflowIds: string[]): Promise<Map<string, string>> {
    const wanted = new Set(workflowIds);
    const holders = new Map<string, string>();
    for (const container of await listProjectContainers(connectDocker())) {
      const workflowId = container.Labels[labels.workflowId];
      const host = container.Labels[labels.host];
      if (workflowId && host && wanted.has(workflowId) && container.State === 'running') holders.set(workflowId, host);
    }
    return holders;
  }

  async dockerRestarted(runs: number): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    await this.lab.startWorker('a');
    const started = await this.startRuns('docker-restarted', runs);
    await sleep(1_500 + Math.random() * 2_500);
    const downFor = await restartDockerd(this.lab.home);
    const row = await this.judge(
      'Docker daemon restarted',
      started,
      `dockerd down for ${(downFor / 1000).toFixed(1)} s`,
      rejectedBefore,
    );
    await this.lab.stopWorker('a');
    return row;
  }

  async containerKilled(runs: number): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    await this.lab.startWorker('a');
    const started = await this.startRuns('container-killed', runs);
    let killed = 0;
    for (const { handle } of started) {
      await sleep(500 + Math.random() * 2_000);
      const docker = connectDocker();
      const [container] = await docker.listContainers({
        filters: { label: [`${labels.workflowId}=${handle.workflowId}`] },
      });
      if (container) {
        await docker
          .getContainer(container.Id)
          .kill()
          .catch(() => undefined);
        killed += 1;
      }
    }
    const row = await this.judge(
      'sandbox container killed from outside',
      started,
      `${killed} containers killed mid-run`,
      rejectedBefore,
    );
    await this.lab.stopWorker('a');
    return row;
  }

  async modelFaults(runs: number): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    const requestsBefore = this.lab.fake.requests.length;
    this.lab.fake.setFaults({
      rate: 0.3,
      kinds: ['rate_limit', 'overloaded', 'overloaded_mid_stream', 'server_error', 'disconnect', 'slow'],
      maxPerRequest: 4,
    });
    await this.lab.startWorker('a');
    const started: Array<{ handle: WorkflowHandle; fixture: Fixture }> = [];
    for (let done = 0; done < runs; done += 5)
      started.push(...(await this.startRuns('model-faults', Math.min(5, runs - done), done)));
    const row = await this.judge(
      'model calls failing 30% (429, 529 before or while the reply streams, 500, dropped, timeout)',
      started,
      '',
      rejectedBefore,
    );
    this.lab.fake.setFaults(undefined);
    const requests = this.lab.fake.requests.slice(requestsBefore);
    row.notes = `${requests.filter((request) => request.fault).length} of ${requests.length} model requests failed`;
    await this.lab.stopWorker('a');
    return row;
  }

  async cancelAndTerminate(runs: number): Promise<ScenarioRow> {
    await this.lab.startWorker('a');
    const started = await this.startRuns('cancel-terminate', runs);
    let cancelled = 0;
    let terminated = 0;
    for (const [index, { handle }] of started.entries()) {
      await sleep(300 + Math.random() * 2_500);
      if (index % 2 === 0) {
        await handle.cancel().catch(() => undefined);
        cancelled += 1;
      } else {
        await handle.terminate('reliability test').catch(() => undefined);
        terminated += 1;
      }
    }
    // Cancelled runs destroy their sandbox themselves; a terminated run cannot, so the reaper must.
    let cleanedUp = 0;
    for (const { handle } of started) {
      await this.lab.reportOf(handle, 60_000).catch(() => null);
    }
    const reaped = await reapOrphans({
      docker: connectDocker(),
      client: this.lab.client,
      scope: `${this.lab.address}/default`,
      workspaceRoot: this.lab.workspaceRootOf('a'),
    });
    const leaked = await this.settledLeaks();
    const misses: string[] = [];
    for (const { handle } of started) {
      const containers = await listProjectContainers(connectDocker());
      if (!containers.some((container) => container.Labels[labels.workflowId] === handle.workflowId)) cleanedUp += 1;
      else misses.push(`${handle.workflowId}: its sandbox is still there`);
    }
    await this.lab.stopWorker('a');
    const reapedContainers = reaped.filter((item) => item.kind === 'container').length;
    return {
      scenario: 'runs cancelled or terminated at random moments',
      runs: started.length,
      expected: cleanedUp,
      lostWork: 0,
      leakedContainers: leaked,
      notes: `${cancelled} cancelled, ${terminated} terminated; ${reapedContainers} containers reaped; expected = sandbox gone`,
      misses,
    };
  }

  async load(runs: number, hosts = ['a']): Promise<ScenarioRow> {
    const rejectedBefore = this.lab.fake.rejected.length;
    for (const host of hosts) await this.lab.startWorker(host);
    const started = await this.startRuns('load', runs);
    const name =
      hosts.length === 1
        ? `${runs} runs at once on one worker`
        : `${runs} runs at once spread over ${hosts.length} worker hosts`;
    const row = await this.judge(name, started, '', rejectedBefore);
    const spread = new Map<string, number>();
    for (const { handle } of started) {
      const host = (await lastPreparedHost(handle)) ?? 'none';
      spread.set(host, (spread.get(host) ?? 0) + 1);
    }
    const durations: number[] = [];
    for (const { handle } of started) {
      const history = await handle.fetchHistory();
      const times = (history.events ?? [])
        .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
        .map((event) => Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6));
      for (let index = 1; index < times.length; index++)
        durations.push((times[index] as number) - (times[index - 1] as number));
    }
    durations.sort((a, b) => a - b);
    const percentile = (p: number) =>
      durations[Math.min(durations.length - 1, Math.floor((p / 100) * durations.length))] ?? 0;
    row.notes = `iteration p50 ${percentile(50)} ms, p95 ${percentile(95)} ms over ${durations.length} iterations`;
    if (hosts.length > 1)
      row.notes += `; sandboxes per host: ${[...spread.entries()]
        .sort()
        .map(([host, count]) => `${host.replace(/^reliability-/, '')} ${count}`)
        .join(', ')}`;
    for (const host of hosts) await this.lab.stopWorker(host);
    return row;
  }
}

/** The host of the run's last sandbox preparation (where its sandbox ended up), from its history. */
export async function lastPreparedHost(handle: WorkflowHandle): Promise<string | null> {
  const events = (await handle.fetchHistory()).events ?? [];
  const prepares = new Set<number>();
  let host: string | null = null;
  for (const event of events) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareSandbox')
      prepares.add(Number(event.eventId));
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && prepares.has(Number(completed.scheduledEventId))) {
      const data = completed.result?.payloads?.[0]?.data;
      host = data?.length ? ((JSON.parse(Buffer.from(data).toString('utf8')) as { host?: string }).host ?? host) : host;
    }
  }
  return host;
}

/** Stops dockerd and starts it again as setup does; returns how long it was down. */
async function restartDockerd(home: string): Promise<number> {
  const started = Date.now();
  const pid = execFileSync('pidof', ['dockerd'], { encoding: 'utf8' }).trim();
  execFileSync('kill', [pid]);
  // The old daemon must be gone (its pid file too) before a new one can start.
  await until(() => !processExists(pid), 'dockerd to stop');
  const log = openSync(join(home, 'dockerd.log'), 'a');
  spawn('dockerd', ['--bridge=none', '--iptables=false', '--ip-masq=false'], {
    detached: true,
    stdio: ['ignore', log, log],
  }).unref();
  await until(dockerAnswers, `dockerd to answer again (see ${join(home, 'dockerd.log')})`);
  return Date.now() - started;
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function processExists(pid: string): boolean {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch {
    return false;
  }
}

function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
