// Our CLI in a real process, as a person runs it, against a test server (and its data home).
import { spawn, type ChildProcess } from 'node:child_process';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { projectRoot } from '../../src/config.js';

export interface CliResult {
  code: number | null;
  /** stdout and stderr, interleaved as printed. */
  output: string;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Everything printed so far. */
  output: () => string;
  done: Promise<CliResult>;
}

const running = new Set<ChildProcess>();

/**
 * Starts `durable-debugger <args>` on the server's address and data home, without colours;
 * `env` adds to (or, with '', blanks) the environment, e.g. ANTHROPIC_BASE_URL for the fake API;
 * `cwd` is the folder it runs in (default: the checkout).
 */
export function startCli(
  server: { address: string; home: string },
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = projectRoot,
): CliProcess {
  const child = spawn(process.execPath, [...checkoutCli, ...args], {
    cwd,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      DURABLE_DEBUGGER_HOME: server.home,
      NO_COLOR: '1',
      // Each command with a worker of its own, as these tests were written (identities, a command's
      // worker gone with its process); the background worker's tests blank it.
      DURABLE_DEBUGGER_FOREGROUND_WORKER: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stderr += chunk.toString();
  });
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, output, stdout, stderr });
    }),
  );
  return { child, output: () => output, done };
}

/** Runs `durable-debugger <args>` to its end. */
export function runCli(
  server: { address: string; home: string },
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = projectRoot,
): Promise<CliResult> {
  return startCli(server, args, env, cwd).done;
}

/** Kills the CLI processes still running (a test's `after`). */
export function killCliProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
}
