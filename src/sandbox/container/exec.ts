// Runs a command in the sandbox with a timeout that really stops it, and output that is
// capped while it streams. The command runs under a wrapper (commandWrapper.ts) that enforces
// the timeout and, when the command ends, stops everything it started, in the same exec. The
// Docker API cannot kill an exec, so a watchdog here stops the command's processes from a
// second exec if it outlives its deadline, is cancelled, or has exited while something it
// started still holds its output.
import type Docker from 'dockerode';
import { CappedOutput } from './cappedOutput.js';
import { newExecId, stopCommand, wrappedCommand } from './commandWrapper.js';
import type { OutOfMemory } from '../../agent/testResults.js';
import { workspaceMountPoint, type SandboxUser } from './container.js';
import { withinDeadline } from './dockerDeadline.js';
import { LineMergedOutput } from './lineMergedOutput.js';

export interface ExecOptions {
  timeoutMs: number;
  maxOutputBytes: number;
  user: SandboxUser;
  /** Called twice a second while the command runs (activity heartbeats; the SDK throttles them). */
  onProgress?: (elapsedMs: number) => void;
  signal?: AbortSignal;
}

export interface ExecResult {
  output: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  outputBytes: number;
  droppedBytes: number;
  /** Set by the sandbox host when the command ran out of the container's memory. */
  outOfMemory?: OutOfMemory;
}

const killGraceSeconds = 2;
/** How often a running command heartbeats and is checked for having exited. */
const tickMs = 500;
/** After the command exits, how long its output must stay quiet before leftovers are stopped. */
const quietAfterExitMs = 500;

type StopReason = 'timeout' | 'cancelled' | 'exited';

export async function execInSandbox(
  container: Docker.Container,
  command: string,
  options: ExecOptions,
): Promise<ExecResult> {
  const started = Date.now();
  const timeoutSeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
  const execId = newExecId();
  const exec = await withinDeadline('creating a command in the sandbox', (abortSignal) =>
    container.exec({
      Cmd: wrappedCommand(execId, command, timeoutSeconds, killGraceSeconds),
      AttachStdout: true,
      AttachStderr: true,
      User: `${options.user.uid}:${options.user.gid}`,
      WorkingDir: workspaceMountPoint,
      // No Env of its own: the command gets the container's, the documented set (sandboxEnv.ts).
      Tty: false,
      abortSignal,
    }),
  );
  const stream = await startAttached(exec);
  const output = new CappedOutput(options.maxOutputBytes);
  let lastOutputAt = Date.now();
  const merged = new LineMergedOutput((chunk) => output.write(chunk));
  stream.on('data', () => {
    lastOutputAt = Date.now();
  });
  // Demultiplex stdout and stderr into one output; reading never stops, so the command never blocks on a full pipe.
  container.modem.demuxStream(stream, merged.stdout, merged.stderr);

  // Why the stream was cut short, if it was (set from callbacks, hence the cast).
  let stoppedBecause = null as StopReason | null;
  const streamDone = new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
  });
  // The first reason to stop wins; the command's processes are stopped once, and awaited below.
  // Set by the watchdog or the abort handler, which TypeScript's flow analysis does not follow.
  let stopping = null as Promise<void> | null;
  const stopStream = (reason: StopReason) => {
    if (stopping) return;
    stoppedBecause = reason;
    stopping = stopCommandProcesses(container, options.user, execId).catch(() => undefined);
    stream.destroy();
  };
  const watchdog = setTimeout(() => stopStream('timeout'), options.timeoutMs + (killGraceSeconds + 3) * 1000);
  // The wrapper stops what the command left behind before it exits. Should anything still hold
  // the output after that, the exec itself is watched too: once it has exited and its output
  // has gone quiet, what is left is stopped instead of waited for.
  let exited = false;
  const tick = setInterval(() => {
    options.onProgress?.(Date.now() - started);
    if (exited) {
      if (Date.now() - lastOutputAt >= quietAfterExitMs) stopStream('exited');
      return;
    }
    inspectExec(exec).then(
      (info) => {
        exited = !info.Running;
      },
      () => undefined,
    );
  }, tickMs);
  const onAbort = () => stopStream('cancelled');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    await streamDone;
  } finally {
    clearTimeout(watchdog);
    clearInterval(tick);
    options.signal?.removeEventListener('abort', onAbort);
  }
  await stopping;
  merged.flush();
  if (stoppedBecause === 'cancelled') throw options.signal?.reason ?? new Error('command cancelled');

  const exitCode = stoppedBecause === 'timeout' ? null : await waitForExitCode(exec);
  const durationMs = Date.now() - started;
  // The wrapper exits 124 after TERM, 137 after the follow-up KILL (as `timeout` does); a command can exit with
  // either code by itself (137 is also the OOM killer's), so only a command that ran for the
  // whole timeout counts as timed out.
  const ranFullTime = durationMs >= options.timeoutMs;
  const timedOut = stoppedBecause === 'timeout' || ((exitCode === 124 || exitCode === 137) && ranFullTime);
  return {
    output: output.toString(),
    exitCode,
    timedOut,
    durationMs,
    outputBytes: output.total,
    droppedBytes: output.dropped,
  };
}

type AttachedStream = NodeJS.ReadWriteStream & { destroy(): void };

/** Starts an exec with its output attached; the deadline holds until the engine hands over the stream. */
async function startAttached(exec: Docker.Exec): Promise<AttachedStream> {
  const stream = await withinDeadline('starting a command in the sandbox', (abortSignal) =>
    exec.start({ hijack: true, stdin: false, abortSignal }),
  );
  return stream as AttachedStream;
}

function inspectExec(exec: Docker.Exec): Promise<Docker.ExecInspectInfo> {
  return withinDeadline('inspecting a command in the sandbox', (abortSignal) => exec.inspect({ abortSignal }));
}

/** The stream can end a moment before Docker records the exit code: poll until it is set. */
async function waitForExitCode(exec: Docker.Exec): Promise<number | null> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const info = await inspectExec(exec);
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}

/** Stops every process of one command (by its exec id), leaving other commands alone. */
export async function stopCommandProcesses(
  container: Docker.Container,
  user: SandboxUser,
  execId: string,
): Promise<void> {
  await execToEnd(container, user, stopCommand(execId));
}

/** How long a short command of ours (stopping processes, reading counters) may take before it is given up. */
const shortCommandDeadlineMs = 60_000;

export interface ShortCommandResult {
  exitCode: number | null;
  /** stdout and stderr as Docker multiplexes them (8-byte frame headers); see `demultiplexed`. */
  output: Buffer;
}

/**
 * Runs a short command of ours as the sandbox user and returns once it has exited. Its end is
 * read from Docker (exec inspect) as well as from the stream, and it has a deadline: a hijacked
 * connection that Docker never closes would otherwise hold the worker (and the sandbox's work
 * queue behind it) for good.
 */
export async function execToEnd(
  container: Docker.Container,
  user: SandboxUser,
  command: string[],
): Promise<ShortCommandResult> {
  const exec = await withinDeadline(`creating ${command[0]} in the sandbox`, (abortSignal) =>
    container.exec({
      Cmd: command,
      User: `${user.uid}:${user.gid}`,
      AttachStdout: true,
      AttachStderr: true,
      abortSignal,
    }),
  );
  const stream = await startAttached(exec);
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  let ended = false;
  const streamDone = new Promise<void>((resolve) => {
    const end = () => {
      ended = true;
      resolve();
    };
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
  });
  const deadline = Date.now() + shortCommandDeadlineMs;
  const exited = (async () => {
    while (!ended) {
      await new Promise((resolve) => setTimeout(resolve, tickMs));
      const info = await inspectExec(exec).catch(() => null);
      if (info && !info.Running) {
        // Output written just before the exit may still be on its way.
        await Promise.race([streamDone, new Promise((resolve) => setTimeout(resolve, quietAfterExitMs))]);
        return;
      }
      if (Date.now() > deadline) {
        stream.destroy();
        throw new Error(`${command[0]} in the sandbox did not end within ${shortCommandDeadlineMs / 1000} s`);
      }
    }
  })();
  exited.catch(() => undefined); // a deadline passed after the stream ended is no one's error
  try {
    await Promise.race([streamDone, exited]);
  } finally {
    ended = true;
    stream.destroy();
  }
  return { exitCode: await waitForExitCode(exec), output: Buffer.concat(chunks) };
}

/** The text of a multiplexed exec stream: 8-byte frame headers precede each chunk. */
export function demultiplexed(buffer: Buffer): string {
  let text = '';
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(offset + 4);
    text += buffer.subarray(offset + 8, offset + 8 + size).toString('utf8');
    offset += 8 + size;
  }
  return text;
}
