// How `run`, `resume` and `raise-budget` get a worker: this user's background worker
// (src/cli/backgroundWorkerProcess.ts), started on first use and leased for as long as the command
// runs, or with `--foreground-worker` (DURABLE_DEBUGGER_FOREGROUND_WORKER) one in the command's own
// process as before. Starting a worker costs seconds (the native core, the workflow bundle, the
// connections, the pollers): the background one pays that once, not at every command, and since
// every command of the user shares it, no command ends another run's activity by exiting.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Socket } from 'node:net';
import {
  askWorker,
  backgroundWorkerPaths,
  foregroundAsked,
  installedVersion,
  processAlive,
  readState,
  settingsFingerprint,
  type BackgroundWorkerPaths,
  type BackgroundWorkerStatus,
} from './backgroundWorkerState.js';
import type { Config } from '../config.js';
import type { ServedRuns } from '../temporal/servedRuns.js';
import { log, workerForThisCommand, type Session } from './session.js';

/** What a command holds while it runs: its own worker or its lease of the background one. */
export interface CommandWorker {
  shutdown(): Promise<void>;
}

/** How long a first start may take (a loaded machine, the embedded server starting too). */
const startTimeoutMs = 180_000;
/** A start lock older than this is a command that died while starting one. */
const staleLockMs = startTimeoutMs + 10_000;
/** A log larger than this is emptied when a worker starts. */
const logCapBytes = 10_000_000;

/** `--foreground-worker` (`.option(...foregroundWorkerFlag)`): of `run`, `resume` and `raise-budget`. */
export const foregroundWorkerFlag = [
  '--foreground-worker',
  "run the worker in this command's process (also DURABLE_DEBUGGER_FOREGROUND_WORKER=1), not in your background worker",
] as const;

/**
 * A lease of the user's background worker when a warm one fits this command (this version, these
 * settings, this queue): `run` then leaves the run to it (src/cli/backgroundRun.ts) and opens no
 * session of its own. Only the settings are needed, and a warm worker answers in a few
 * milliseconds. Null when none runs that fits or Docker does not answer: workerForCommand then
 * decides, with the session open.
 */
export function leaseWarmWorker(config: Config, options: { foregroundWorker?: boolean }): Promise<Socket | null> {
  if (foregroundAsked(options.foregroundWorker)) return Promise.resolve(null);
  return (async () => {
    const [{ dockerAnswers }, { dataFolderQueue }] = await Promise.all([
      import('../sandbox/container/dockerAnswers.js'),
      import('../temporal/dataFolderQueue.js'),
    ]);
    if (!(await dockerAnswers())) return null;
    const running = await leaseRunning(backgroundWorkerPaths(config.home));
    if (!running) return null;
    if (!whyNotThisWorker(running.status, config, dataFolderQueue(config.home))) return running.socket;
    running.socket.end();
    return null;
  })().catch(() => null);
}

/** The worker of a `run`, `resume` or `raise-budget`: the user's background worker unless they ask for one of the command's own. */
export async function workerForCommand(
  session: Session,
  options: { foregroundWorker?: boolean },
): Promise<CommandWorker> {
  if (foregroundAsked(options.foregroundWorker)) return workerForThisCommand(session);
  const { ServedRuns } = await import('../temporal/servedRuns.js');
  const served = ServedRuns.forDataFolder(session.config.home);
  // Docker must answer this user now, not only the worker they started earlier (perhaps while in the
  // docker group): a command that cannot reach it runs its own worker, which says what to do.
  const { dockerAnswers } = await import('../sandbox/container/dockerAnswers.js');
  if (!(await dockerAnswers())) return workerForThisCommand(session);
  let lease: Socket;
  try {
    lease = await leaseBackgroundWorker(session, served.queue);
  } catch (error) {
    // A data folder this user cannot write (another user's, read-only): no worker can be kept there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw error;
    log(`The background worker cannot keep its files in ${session.config.home} (${code}): this command runs its own.`);
    return workerForThisCommand(session);
  }
  return leased(session, served, lease);
}

function leased(session: Session, served: ServedRuns, lease: Socket): CommandWorker {
  // The runs this command starts are recorded for the worker, as a command's own worker had them.
  session.served = served;
  return {
    shutdown: async () => {
      lease.end();
    },
  };
}

/** Leases this user's background worker, starting one (or a new one, for another version or other settings) when needed. */
async function leaseBackgroundWorker(session: Session, queue: string): Promise<Socket> {
  const paths = backgroundWorkerPaths(session.config.home);
  await mkdir(paths.folder, { recursive: true, mode: 0o700 });
  let why = 'first run after boot, or after it stopped idle';
  for (;;) {
    const running = await leaseRunning(paths);
    if (running) {
      const { status, socket } = running;
      const differs = whyNotThisWorker(status, session.config, queue);
      if (!differs) return socket;
      socket.end();
      log(`Replacing the background worker (pid ${status.pid}): ${differs}.`);
      await askWorker(paths.socket, 'retire');
      why = `replacing pid ${status.pid}`;
      continue;
    }
    const lock = takeStartLock(paths);
    if (!lock) {
      // Another command is starting it: lease it once it serves.
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      // Started meanwhile by another command: lease it (and compare it) above.
      const started = await leaseRunning(paths);
      if (started) {
        started.socket.end();
        continue;
      }
      return await startAndLease(paths, why);
    } finally {
      lock.release();
    }
  }
}

/** Why a running worker cannot serve this command (another version, other settings, another queue); null when it can. */
function whyNotThisWorker(status: BackgroundWorkerStatus, config: Config, queue: string): string | null {
  const version = installedVersion();
  if (status.version !== version) return `the installed version changed (${status.version} → ${version})`;
  if (status.settings !== settingsFingerprint(config))
    return 'your settings changed (model endpoint, key or worker settings)';
  if (status.queue !== queue) return 'it serves another task queue';
  return null;
}

/** A lease of the worker state.json names, when it lives and answers. */
async function leaseRunning(
  paths: BackgroundWorkerPaths,
): Promise<{ status: BackgroundWorkerStatus; socket: Socket } | null> {
  const state = readState(paths);
  if (!state || !processAlive(state.pid)) return null;
  const answer = await askWorker(paths.socket, 'hello');
  if (answer?.status.pid === state.pid && !answer.status.retiring) return answer;
  answer?.socket.end();
  return null;
}

async function startAndLease(paths: BackgroundWorkerPaths, why: string): Promise<Socket> {
  log(`Starting the background worker (${why}) …; its log is ${paths.log}`);
  try {
    if (statSync(paths.log).size > logCapBytes) truncateSync(paths.log);
  } catch {
    // No log yet.
  }
  const output = openSync(paths.log, 'a', 0o600);
  // The same program as this command (the bundle, or the checkout's sources through tsx), as a command of its own.
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, 'worker', 'background'], {
    detached: true,
    stdio: ['ignore', output, output],
    cwd: paths.folder,
    env: process.env,
  });
  closeSync(output);
  child.unref();
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the background worker could not start (${child.exitCode !== null ? `exit code ${child.exitCode}` : child.signalCode}): ` +
          `${lastLines(paths.log)}\n(see ${paths.log}; --foreground-worker runs the worker in this command instead)`,
      );
    }
    if (readState(paths)?.pid === child.pid) {
      const answer = await askWorker(paths.socket, 'hello');
      if (answer) return answer.socket;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the background worker did not start within ${startTimeoutMs / 1000} s: see ${paths.log}`);
}

function lastLines(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    return '';
  }
}

/** The start lock (O_EXCL, holding the pid and time), or null while another live command holds it. */
function takeStartLock(paths: BackgroundWorkerPaths): { release(): void } | null {
  const release = () => {
    try {
      if (readFileSync(paths.startLock, 'utf8').startsWith(`${process.pid} `)) rmSync(paths.startLock);
    } catch {
      // Already released.
    }
  };
  try {
    writeFileSync(paths.startLock, `${process.pid} ${Date.now()}`, { flag: 'wx', mode: 0o600 });
    return { release };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const [pid, since] = (() => {
    try {
      return readFileSync(paths.startLock, 'utf8').split(' ').map(Number);
    } catch {
      return [NaN, NaN];
    }
  })();
  if (pid && processAlive(pid) && Date.now() - (since ?? 0) < staleLockMs) return null;
  rmSync(paths.startLock, { force: true });
  return null;
}
