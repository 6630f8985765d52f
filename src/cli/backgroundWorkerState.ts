// The per-user background worker's files and how a command talks to it. It lives in the data
// folder's `background-worker/` (0700): `state.json` (pid, version, settings, queue, start time;
// 0600) names the one that serves, `worker.sock` (0600) is where commands lease it and ask its
// state, `worker.log` is its output. Light on purpose: `run`, `doctor` and `stop-worker` read it
// without loading the worker.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { projectRoot } from '../locations.js';
import type { CheckResult } from '../setup/parts.js';

export interface BackgroundWorkerPaths {
  folder: string;
  state: string;
  socket: string;
  log: string;
  /** Held (O_EXCL) by the one command starting a worker, so that two `run`s at once start one. */
  startLock: string;
}

export function backgroundWorkerPaths(home: string): BackgroundWorkerPaths {
  const folder = join(home, 'background-worker');
  return {
    folder,
    state: join(folder, 'state.json'),
    socket: join(folder, 'worker.sock'),
    log: join(folder, 'worker.log'),
    startLock: join(folder, 'start.lock'),
  };
}

/** What state.json holds: written by the worker once it serves. */
export interface BackgroundWorkerState {
  pid: number;
  /** The package version and a fingerprint of the code it runs (installedVersion). */
  version: string;
  /** A fingerprint of the settings it was started with (key included, never the key itself). */
  settings: string;
  queue: string;
  modelEndpoint: string | null;
  startedAt: string;
}

/** What the worker answers on its socket: its state and how busy it is. */
export interface BackgroundWorkerStatus extends BackgroundWorkerState {
  /** Commands holding it now (run, resume, raise-budget following their run). */
  leases: number;
  activities: number;
  /** Since when it has had neither (ms since epoch), or null. */
  idleSince: number | null;
  idleStopMs: number;
  /** Replaced by a newer worker: it stops once its commands are gone. */
  retiring: boolean;
}

/** How long the worker waits with no command and no activity before it stops (DURABLE_DEBUGGER_WORKER_IDLE_MINUTES, default 10). */
export function idleStopMs(environment: NodeJS.ProcessEnv = process.env): number {
  const minutes = Number(environment.DURABLE_DEBUGGER_WORKER_IDLE_MINUTES || 10);
  return Number.isFinite(minutes) && minutes > 0 ? minutes * 60_000 : 10 * 60_000;
}

/** `--foreground-worker`, or DURABLE_DEBUGGER_FOREGROUND_WORKER set to anything but 0/off/false. */
export function foregroundAsked(flag: boolean | undefined, environment: NodeJS.ProcessEnv = process.env): boolean {
  const value = (environment.DURABLE_DEBUGGER_FOREGROUND_WORKER ?? '').toLowerCase();
  return Boolean(flag) || (value !== '' && !['0', 'off', 'false', 'no'].includes(value));
}

let version: string | null = null;
/**
 * The installed version: package.json's version and a fingerprint of the code this process runs
 * (name, size and modification time of each file: the built dist/, or the checkout's sources), so
 * an update or an edit of the code starts a new worker.
 */
export function installedVersion(): string {
  if (version) return version;
  const packageVersion = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string })
    .version;
  const self = fileURLToPath(import.meta.url);
  const roots = extname(self) === '.ts' ? checkoutCode() : [join(self, '..')];
  const hash = createHash('sha256');
  for (const root of roots) for (const file of filesOf(root)) hash.update(file.line);
  version = `${packageVersion}+${hash.digest('hex').slice(0, 12)}`;
  return version;
}

/**
 * Tooling, tests and data beside the product's sources in the checkout: not the code a worker runs
 * (test-output/ changes all through a test run, and must not replace the worker of a test's runs).
 */
const notProductCode = new Set([
  'node_modules',
  'dist',
  'test',
  'test-output',
  'bench',
  'harness',
  'scripts',
  'deploy',
  'fixtures',
  'docs',
]);

/** The checkout's code: its top-level folders of TypeScript but tooling, tests and data, and the lockfile. */
function checkoutCode(): string[] {
  const folders = readdirSync(projectRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !notProductCode.has(entry.name))
    .map((entry) => join(projectRoot, entry.name));
  return [...folders, join(projectRoot, 'package-lock.json')];
}

function filesOf(root: string): Array<{ line: string }> {
  const found: Array<{ line: string }> = [];
  const visit = (path: string) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return;
    }
    if (stats.isDirectory()) {
      for (const entry of readdirSync(path).sort()) if (entry !== 'node_modules') visit(join(path, entry));
    } else found.push({ line: `${relative(projectRoot, path)}\0${stats.size}\0${stats.mtimeMs}\n` });
  };
  visit(root);
  return found;
}

/** Variables the worker reads besides the config (Docker, the clouds' credentials, proxies). */
const workerVariables =
  /^(DURABLE_DEBUGGER_|ANTHROPIC_|TEMPORAL_|DOCKER_|AWS_|GOOGLE_|CLOUDSDK_|CLOUD_ML_|HTTPS?_PROXY$|NO_PROXY$)/i;

/**
 * A fingerprint of what the worker is started with: the whole config (its model key and endpoint
 * among it) and the variables above. A command whose fingerprint differs is not served by this
 * worker: another user's key, or another endpoint, never answers its run.
 */
export function settingsFingerprint(config: Config, environment: NodeJS.ProcessEnv = process.env): string {
  const variables = Object.entries(environment)
    .filter(([name, value]) => value && workerVariables.test(name) && name !== 'DURABLE_DEBUGGER_FOREGROUND_WORKER')
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify({ config, variables })).digest('hex').slice(0, 16);
}

export function readState(paths: BackgroundWorkerPaths): BackgroundWorkerState | null {
  try {
    const state = JSON.parse(readFileSync(paths.state, 'utf8')) as BackgroundWorkerState;
    return Number.isInteger(state.pid) ? state : null;
  } catch {
    return null;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type WorkerRequest = 'hello' | 'status' | 'stop' | 'retire';

/**
 * Sends one request on the worker's socket and reads its one-line answer. `hello` leases the
 * worker: the connection stays open (returned) for as long as the command uses it.
 */
export function askWorker(
  socketPath: string,
  request: WorkerRequest,
  timeoutMs = 5_000,
): Promise<{ status: BackgroundWorkerStatus; socket: Socket } | null> {
  return new Promise((resolve) => {
    const socket = createConnection(socketPath);
    let answer = '';
    const fail = () => {
      socket.destroy();
      resolve(null);
    };
    const timer = setTimeout(fail, timeoutMs);
    socket.on('error', () => {
      clearTimeout(timer);
      fail();
    });
    socket.on('connect', () => socket.write(`${JSON.stringify({ request })}\n`));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      const end = answer.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      try {
        const status = JSON.parse(answer.slice(0, end)) as BackgroundWorkerStatus;
        if (request !== 'hello') socket.end();
        resolve({ status, socket });
      } catch {
        fail();
      }
    });
  });
}

/** The running worker's status (null: none answers). */
export async function backgroundWorkerStatus(home: string): Promise<BackgroundWorkerStatus | null> {
  const paths = backgroundWorkerPaths(home);
  const state = readState(paths);
  if (!state || !processAlive(state.pid)) return null;
  return (await askWorker(paths.socket, 'status'))?.status ?? null;
}

/** One line on the worker for `doctor` and `stop-worker`. */
export function describeStatus(status: BackgroundWorkerStatus | null, now = Date.now()): string {
  if (!status) return 'not running (the next `run`, `resume` or `raise-budget` starts it)';
  const minutes = (ms: number) => `${Math.round(ms / 6_000) / 10} min`;
  const use =
    status.idleSince === null
      ? `in use (${status.leases} command${status.leases === 1 ? '' : 's'}, ${status.activities} activit${status.activities === 1 ? 'y' : 'ies'})`
      : `idle for ${minutes(now - status.idleSince)} (stops after ${minutes(status.idleStopMs)})`;
  return (
    `running${status.retiring ? ', replaced by a newer one (stops when its commands end)' : ''}: pid ${status.pid}, version ${status.version}, ` +
    `started ${status.startedAt}, ${use}, task queue ${status.queue}`
  );
}

/** `doctor`'s line: whether the user's background worker runs, and how (never a failure: `run` starts it). */
export async function checkBackgroundWorker(home: string): Promise<CheckResult> {
  const status = await backgroundWorkerStatus(home).catch(() => null);
  return {
    name: 'background worker',
    status: 'ok',
    detail: `${describeStatus(status)}; its log is ${backgroundWorkerPaths(home).log}${status ? ' (`durable-debugger worker stop` stops it)' : ''}`,
  };
}
