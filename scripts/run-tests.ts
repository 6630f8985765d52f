// `npm test` (after setup): the type check, lint and format, the unit tests, then the integration
// tests on the real Temporal dev server and real Docker with the quick reliability scenarios, and
// finally a check that no sandbox container leaked.
//
// Integration test files run in lanes side by side (DURABLE_DEBUGGER_TEST_LANES, default 3): each
// lane has a Docker engine of its own (scripts/testEngines.ts), so no file sees another lane's
// containers. Files are handed out longest first (durations of the last run, kept in
// .durable-debugger/test-durations.json); each file's output goes to test-output/tests/.
// Pass folder names to run only some suites: `npm test -- unit`, `npm test -- integration`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { listProjectContainers, removeContainer } from '../src/sandbox/container/container.js';
import { unixSocketOf } from '../src/sandbox/container/dockerHost.js';
import { projectRoot } from '../src/config.js';
import { dataHomeFor } from '../src/locations.js';
import { startTestEngines, type TestEngine } from './testEngines.js';

const wanted = process.argv.slice(2);
const wants = (suite: string) => wanted.length === 0 || wanted.includes(suite);
const dataFolder = join(projectRoot, '.durable-debugger');
const durationsFile = join(dataFolder, 'test-durations.json');
const committedDurationsFile = join(projectRoot, 'test', 'durations.json');
const outputFolder = join(projectRoot, 'test-output', 'tests');

/** The lanes' engines, and the process groups of the jobs under way: an interrupted `npm test` stops them. */
const engines: TestEngine[] = [];
const running = new Set<number>();
/** Set once interrupted: a lane whose job just ended (stopped by us) starts no other. */
let interrupted = false;
const startedAt = Date.now();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    void stopEverything().finally(() => process.exit(130));
  });
}

/**
 * The jobs under way, the sandboxes they made (a stopped test cleans up nothing; left there, they
 * would fail the next run's leak check), then the lanes' engines.
 */
async function stopEverything(): Promise<void> {
  const jobs = [...running];
  for (const pid of jobs) killGroup(pid);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  for (const pid of jobs) killGroup(pid, 'SIGKILL');
  for (const engine of enginesUsed()) {
    const docker = dockerOf(engine.dockerHost);
    // Only what this run made: the first lane's engine is the machine's, which may serve real runs too.
    const made = (await listProjectContainers(docker).catch(() => [])).filter(
      (container) => container.Created * 1000 >= startedAt - 1_000,
    );
    await Promise.all(made.map((container) => removeContainer(docker, container.Id).catch(() => undefined)));
  }
  await Promise.all(engines.map((engine) => engine.stop().catch(() => undefined)));
}

/** The lanes' engines, or with no lane started the one the environment names. */
function enginesUsed(): Array<{ dockerHost: string | undefined }> {
  return engines.length ? engines : [{ dockerHost: process.env.DOCKER_HOST }];
}

function dockerOf(dockerHost: string | undefined): Docker {
  const socketPath = dockerHost ? unixSocketOf(dockerHost) : null;
  return socketPath ? new Docker({ socketPath }) : new Docker();
}

function killGroup(pid: number, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone already
  }
}

/**
 * A step whose output goes straight to the terminal, in its own process group with a time limit:
 * a unit file that never ends is stopped with what it started, where it would hold CI until CI's
 * own limit and report nothing.
 */
async function runInForeground(label: string, command: string, args: string[], limitMinutes = 20): Promise<void> {
  console.log(`\n── ${label} ──`);
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  const limit = timeLimit(child, limitMinutes, () =>
    console.error(`\n── ${label}: stopped, still running after ${limitMinutes} minutes ──`),
  );
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  limit.end();
  if (interrupted) await new Promise(() => undefined); // the signal's handler ends the run
  if (code !== 0 || limit.fired()) {
    console.error(`\n${label} failed`);
    process.exit(code || 1);
  }
}

/**
 * A child in its own process group, counted among those running: past its limit the group is stopped
 * (SIGTERM, then SIGKILL), saying so; at its end, what it left running in the group is stopped too.
 */
function timeLimit(child: ChildProcess, minutes: number, say: () => void): { end(): void; fired(): boolean } {
  const pid = child.pid;
  if (pid) running.add(pid);
  let fired = false;
  const deadline = setTimeout(() => {
    fired = true;
    say();
    if (pid) killGroup(pid);
    setTimeout(() => pid && killGroup(pid, 'SIGKILL'), 10_000).unref();
  }, minutes * 60_000);
  return {
    end() {
      clearTimeout(deadline);
      if (pid) {
        running.delete(pid);
        killGroup(pid);
      }
    },
    fired: () => fired,
  };
}

function testFiles(folder: string): string[] {
  return readdirSync(join(projectRoot, 'test', folder))
    .filter((file) => file.endsWith('.test.ts'))
    .sort()
    .map((file) => join('test', folder, file));
}

if (wanted.length === 0) {
  await runInForeground('type check', 'npx', ['tsc', '--noEmit']);
  await runInForeground('lint and format', 'npm', ['run', '--silent', 'lint']);
}
if (wants('unit')) {
  await runInForeground('unit tests', process.execPath, [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    ...testFiles('unit'),
  ]);
}

// A file that does not end is stopped, and fails with its output: CI then reports what hung, where a
// run cut off at CI's own limit reports nothing. The longest, fixturesCompiled.test.ts, takes about
// 8 minutes on an idle machine and 18 on a loaded one (the fixtures ran as one file until it neared
// this limit). (node's --test-timeout would not do: under --test it times the
// whole file, and the file's process went on running after it fired.)
const jobTimeoutMinutes = 45;

interface Job {
  name: string;
  args: string[];
}

const jobs: Job[] = [];
if (wants('integration')) {
  for (const file of testFiles('integration')) {
    jobs.push({ name: file, args: ['--import', 'tsx', '--test', '--test-reporter=spec', file] });
  }
}
if (wants('reliability')) {
  jobs.push({ name: 'reliability (quick)', args: ['--import', 'tsx', 'scripts/reliability.ts', '--quick'] });
}

let failed = false;
if (jobs.length > 0) {
  const lanes = Math.max(1, Number(process.env.DURABLE_DEBUGGER_TEST_LANES ?? Math.min(3, availableParallelism() + 1)));
  console.log(`\n── integration tests and reliability (quick): ${jobs.length} jobs in ${lanes} lanes ──`);
  // The lanes' engines keep their data per machine, not per checkout: the toolchain images the tests
  // build (Rust, Java, C/C++, Python variants) are made once per machine, as the first engine's are.
  const enginesRoot = join(dataHomeFor(process.env), 'test-engines');
  engines.push(...(await startTestEngines(Math.min(lanes, jobs.length), enginesRoot)));
  try {
    failed = !(await runJobs(jobs, engines));
  } finally {
    // Interrupted, the signal's handler stops them once it has removed what the stopped jobs left.
    if (!interrupted) for (const engine of engines) await engine.stop().catch(() => undefined);
  }
  // Interrupted: the jobs were stopped, not failed; the signal's handler ends the run.
  if (interrupted) await new Promise(() => undefined);
}

// Every lane's engine is checked, as each lane's tests left it (a stopped engine keeps its containers).
if (wanted.length === 0 || wants('integration') || wants('reliability')) {
  const leaked: string[] = [];
  for (const engine of enginesUsed()) {
    const containers = await listProjectContainers(dockerOf(engine.dockerHost)).catch(() => []);
    leaked.push(...containers.map((container) => container.Names.join(',')));
  }
  if (leaked.length > 0) {
    console.error(`\n${leaked.length} sandbox container(s) leaked: ${leaked.join(' ')}`);
    process.exit(1);
  }
}
if (failed) process.exit(1);
console.log('\nAll tests passed; no sandbox container was left behind.');

/** Runs the jobs longest first, one at a time per lane; true when every job passed. */
async function runJobs(all: Job[], lanes: TestEngine[]): Promise<boolean> {
  const durations = readDurations(durationsFile);
  const expected = { ...readDurations(committedDurationsFile), ...durations };
  const queue = [...all].sort((a, b) => estimate(b, expected) - estimate(a, expected));
  mkdirSync(outputFolder, { recursive: true });
  const failures: Array<{ job: Job; log: string; engine: TestEngine; from: Date; to: Date }> = [];
  const started = Date.now();
  let done = 0;
  await Promise.all(
    lanes.map(async (engine) => {
      for (let job = queue.shift(); job && !interrupted; job = queue.shift()) {
        const log = join(outputFolder, `${job.name.replace(/[^\w.-]+/g, '_')}.log`);
        const jobStarted = Date.now();
        const ok = await runJob(job, engine, log);
        const seconds = (Date.now() - jobStarted) / 1000;
        durations[job.name] = seconds;
        done++;
        const elapsed = ((Date.now() - started) / 60_000).toFixed(1);
        console.log(
          `${ok ? '✔' : '✖'} ${job.name} · ${seconds.toFixed(0)} s · lane ${engine.lane} · ${done}/${all.length} done, ${elapsed} min`,
        );
        if (!ok) failures.push({ job, log, engine, from: new Date(jobStarted), to: new Date() });
      }
    }),
  );
  if (interrupted) return false;
  writeDurations(durations);
  for (const { job, log, engine, from, to } of failures) {
    console.error(`\n── ${job.name} failed; its output (${log}) ──\n${readFileSync(log, 'utf8')}`);
    if (engine.log) {
      const window = `${from.toISOString()} to ${to.toISOString()}`;
      console.error(`Lane ${engine.lane}'s Docker engine logged what it did then (${window}) in ${engine.log}`);
    }
  }
  if (failures.length)
    console.error(`\n${failures.length} of ${all.length} jobs failed: ${failures.map((f) => f.job.name).join(', ')}`);
  return failures.length === 0;
}

function runJob(job: Job, engine: TestEngine, logFile: string): Promise<boolean> {
  const output = createWriteStream(logFile);
  const env = {
    // The fixture groups start together in the lanes: one run at a time each (fixtureSuite.ts says why).
    DURABLE_DEBUGGER_FIXTURE_CONCURRENCY: '1',
    ...process.env,
    ...(engine.dockerHost ? { DOCKER_HOST: engine.dockerHost } : {}),
  };
  // Its own process group, so that the dev servers and workers it starts stop with it.
  const child = spawn(process.execPath, job.args, {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.pipe(output, { end: false });
  child.stderr.pipe(output, { end: false });
  const limit = timeLimit(child, jobTimeoutMinutes, () =>
    output.write(`\n── stopped: still running after ${jobTimeoutMinutes} minutes ──\n`),
  );
  return new Promise((resolve) => {
    child.on('close', (code) => {
      limit.end();
      output.end();
      resolve(code === 0);
    });
  });
}

function estimate(job: Job, durations: Record<string, number>): number {
  // Without a recorded duration, the file's size stands in (bytes / 100 ≈ seconds, roughly).
  const recorded = durations[job.name];
  if (recorded !== undefined) return recorded;
  const path = join(projectRoot, job.name);
  return existsSync(path) ? statSync(path).size / 100 : 300;
}

function readDurations(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function writeDurations(durations: Record<string, number>): void {
  mkdirSync(dataFolder, { recursive: true });
  writeFileSync(durationsFile, `${JSON.stringify(durations, null, 2)}\n`);
}
