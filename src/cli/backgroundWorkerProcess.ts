// The per-user background worker itself (the hidden `worker background` command, started detached
// by the first `run`, `resume` or `raise-budget`; src/cli/backgroundWorker.ts). It serves the same
// private task queue as a command's own worker did (src/temporal/servedRuns.ts: this user's runs
// from this data folder, nobody else's), with the model settings of the command that started it,
// and stops after an idle time: no command holding it and no activity under way. Commands lease it
// over a socket in the user's 0700 state folder; a command with another version or other settings
// asks it to retire and starts a new one, and a retiring worker stops once its commands are gone.
// Its shutdown lets the activities under way finish: no run loses one because a command ended.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { loadConfig } from '../config.js';
import {
  askWorker,
  backgroundWorkerPaths,
  idleStopMs,
  installedVersion,
  readState,
  settingsFingerprint,
  type BackgroundWorkerState,
  type BackgroundWorkerStatus,
  type WorkerRequest,
} from './backgroundWorkerState.js';
import type { RunRequest } from './backgroundRun.js';
import { openSession, type Session } from './session.js';

/** How long a stopping worker lets the activities it holds finish (an environment build may take minutes). */
const shutdownGraceMs = 15 * 60_000;

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

export async function runBackgroundWorker(): Promise<void> {
  const config = loadConfig();
  const paths = backgroundWorkerPaths(config.home);
  await mkdir(paths.folder, { recursive: true, mode: 0o700 });
  const [{ ensureTemporalServer }, { startWorker }, { ServedRuns }] = await Promise.all([
    import('../temporal/embeddedServer.js'),
    import('../worker.js'),
    import('../temporal/servedRuns.js'),
  ]);
  const server = await ensureTemporalServer(config, log);
  const served = ServedRuns.forDataFolder(config.home);
  const worker = await startWorker({
    config,
    address: server.address,
    log,
    serveDefaultEndpoint: false,
    servedRuns: served,
    shutdownGraceMs,
  });
  const state: BackgroundWorkerState = {
    pid: process.pid,
    version: installedVersion(),
    settings: settingsFingerprint(config),
    queue: served.queue,
    modelEndpoint: worker.modelEndpoint,
    startedAt: new Date().toISOString(),
  };
  const leases = new Set<Socket>();
  const idleMs = idleStopMs();
  let idleSince: number | null = Date.now();
  let retiring = false;
  let stopping: Promise<void> | null = null;
  /** The idle watch, set below (a stop asked for before it runs clears nothing). */
  const timers: { watch?: ReturnType<typeof setInterval> } = {};

  const status = (): BackgroundWorkerStatus => ({
    ...state,
    leases: leases.size,
    activities: worker.activitiesInFlight(),
    idleSince,
    idleStopMs: idleMs,
    retiring,
  });
  // The client of the runs it starts for commands: opened at the first, kept for the worker's life.
  let session: Promise<Session> | null = null;
  const sessionForRuns = () =>
    (session ??= openSession().then((opened) => Object.assign(opened, { served }))).catch((error: unknown) => {
      session = null;
      throw error;
    });
  const onRun = (socket: Socket, request: RunRequest) => {
    // Stopping: its client is closing; the command says the worker stopped answering.
    if (stopping) return void socket.destroy();
    // The worker side answers every failure in the command's frames; a module that cannot load, by closing.
    void import('./backgroundRunService.js').then(
      ({ serveRun }) => serveRun(sessionForRuns, request, socket),
      () => socket.destroy(),
    );
  };
  const listener = await listen(
    paths.socket,
    (socket, request) => {
      // Stopping: no answer, so that a command starts a new worker rather than lease this one.
      if (stopping) return void socket.destroy();
      socket.write(`${JSON.stringify(status())}\n`);
      if (request === 'hello') {
        leases.add(socket);
        idleSince = null;
        socket.on('close', () => leases.delete(socket));
      } else socket.end();
      if (request === 'stop') void stop('asked to stop (stop-worker)');
      if (request === 'retire') retire();
    },
    onRun,
  );
  writePrivate(paths.state, JSON.stringify(state));
  log(
    `Background worker ${state.version} serving task queue ${served.queue} (model endpoint ${state.modelEndpoint ?? 'none'}); ` +
      `it stops after ${idleMs / 60_000} min with no command and no activity.`,
  );

  /** A newer worker takes over: this one serves no new command and stops once its commands are gone. */
  function retire() {
    if (retiring) return;
    retiring = true;
    log('Replaced by a newer background worker: stopping once the commands using this one end.');
    listener.close();
    forgetFiles();
  }
  /** Removes the socket and state files when they are still this worker's (a newer worker's are left alone). */
  function forgetFiles() {
    if (readState(paths)?.pid !== process.pid) return;
    rmSync(paths.state, { force: true });
    rmSync(paths.socket, { force: true });
  }
  function stop(why: string): Promise<void> {
    stopping ??= (async () => {
      log(`Stopping: ${why}. The activities under way (${worker.activitiesInFlight()}) finish first.`);
      clearInterval(timers.watch);
      if (!retiring) {
        listener.close();
        forgetFiles();
      }
      await worker.shutdown();
      await session?.then((opened) => opened.close()).catch(() => undefined);
      log('Stopped.');
    })();
    return stopping;
  }

  timers.watch = setInterval(() => {
    const busy = leases.size > 0 || worker.activitiesInFlight() > 0;
    if (busy) idleSince = null;
    else idleSince ??= Date.now();
    if (retiring && leases.size === 0) void stop('replaced, and its last command has ended');
    else if (idleSince !== null && Date.now() - idleSince >= idleMs) void stop(`idle for ${idleMs / 60_000} min`);
    // Its data folder removed, or another worker named in state.json: it is no longer the one commands find.
    else if (!retiring && readState(paths)?.pid !== process.pid) void stop('state.json no longer names this worker');
  }, 1_000);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(`${signal}`));
  await worker.done.catch((error: unknown) => log(`The worker failed: ${String(error)}`));
  await stop('its worker has ended');
  process.exit(0);
}

/**
 * Listens on the socket; one stale from a worker that died (nobody answers) is removed first.
 * Each connection's first line is a request (`hello`, `status`, `stop`, `retire`); on a lease
 * (`hello`), each later line is a run for the worker to start and follow (src/cli/backgroundRun.ts).
 */
async function listen(
  path: string,
  onRequest: (socket: Socket, request: WorkerRequest) => void,
  onRun: (socket: Socket, request: RunRequest) => void,
): Promise<Server> {
  const server = createServer((socket) => {
    let buffered = '';
    let first: WorkerRequest | null = null;
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const message = parsed(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        if (first === null && workerRequests.includes(message?.request as WorkerRequest)) {
          first = message?.request as WorkerRequest;
          onRequest(socket, first);
        } else if (first === 'hello' && message?.request === 'run') onRun(socket, message as unknown as RunRequest);
        else return void socket.destroy();
      }
    });
  });
  for (let attempt = 0; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return server;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0) throw error;
      if (await askWorker(path, 'status', 2_000))
        throw new Error(`another background worker answers on ${path}`, { cause: error });
      rmSync(path, { force: true });
    }
  }
}

const workerRequests: WorkerRequest[] = ['hello', 'status', 'stop', 'retire'];

function parsed(line: string): { request?: unknown } | null {
  try {
    return JSON.parse(line) as { request?: unknown };
  } catch {
    return null;
  }
}

/** Written whole (a reader never sees half), 0600. */
function writePrivate(path: string, text: string): void {
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}
