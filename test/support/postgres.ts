// A throwaway PostgreSQL server for tests: Debian's binaries (never the system's cluster), a data
// folder in a temporary folder, trust authentication on 127.0.0.1 and a free port, durability
// settings off (fsync) since nothing in it outlives the test. PostgreSQL refuses to run as root:
// as root, the server runs as the `postgres` user that Debian's package creates.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../harness/devStack.js';

const run = promisify(execFile);

export interface TestPostgres {
  /** postgres://durable@127.0.0.1:<port>/durable_debugger */
  url: string;
  port: number;
  /** A fast restart (`pg_ctl restart -m fast`): every connection is closed. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The folder of PostgreSQL's programs (15 preferred, as the cluster runs), or a message saying how to install them. */
export function postgresBinaries(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    : [];
  const chosen = versions.includes('15') ? '15' : versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!chosen)
    throw new Error(
      "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run `bash scripts/setup.sh --for-tests`, which installs Debian's postgresql.",
    );
  return join(root, chosen, 'bin');
}

export interface TestPostgresOptions {
  /** Where the port comes from (a free one by default); tests take one first to see the server move on. */
  choosePort?: () => Promise<number>;
}

/** Attempts at a port: each fails only when something took the chosen port first. */
const portAttempts = 5;

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinaries();
  const choosePort = options.choosePort ?? (() => freePort());
  const folder = await mkdtemp(join(tmpdir(), 'durable-debugger-postgres-'));
  const runAs = await serverUser();
  if (runAs) await chown(folder, runAs.uid, runAs.gid);
  const data = join(folder, 'data');
  const runOptions = { ...(runAs ?? {}), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } };
  const log = join(folder, 'server.log');
  const pgCtl = (...args: string[]) => run(join(bin, 'pg_ctl'), ['-D', data, ...args], runOptions);
  let port: number | undefined;
  try {
    await run(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'durable', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
      runOptions,
    );
    // The port is chosen after initdb (seconds on a busy machine), just before the server binds it,
    // and again when something took it meanwhile: freePort's port comes from the kernel's ephemeral
    // range, which every outgoing connection and every other listen(0) of the suite draws from too.
    for (let attempt = 1; ; attempt++) {
      port = await choosePort();
      const logStart = await logLength(log);
      const settings = `-p ${port} -h 127.0.0.1 -k ${folder} -c fsync=off -c full_page_writes=off -c synchronous_commit=off`;
      try {
        // The log file also keeps the server from holding our pipes open (execFile would wait for it).
        await pgCtl('-o', settings, '-l', log, '-w', '-t', '60', 'start');
        break;
      } catch (error) {
        const said = (await readFile(log).catch(() => Buffer.alloc(0))).subarray(logStart).toString('utf8');
        if (attempt < portAttempts && /could not bind .*Address already in use/.test(said)) continue;
        throw new Error(`${(error as Error).message}\n${said.slice(-2000)}`, { cause: error });
      }
    }
    await run(
      join(bin, 'createdb'),
      ['-h', '127.0.0.1', '-p', String(port), '-U', 'durable', 'durable_debugger'],
      runOptions,
    );
  } catch (error) {
    await pgCtl('-m', 'immediate', 'stop').catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://durable@127.0.0.1:${port}/durable_debugger`,
    port,
    async restart() {
      await pgCtl('-m', 'fast', '-l', log, '-w', '-t', '60', 'restart');
    },
    async stop() {
      await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}

async function serverUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    throw new Error(
      "PostgreSQL cannot run as root and there is no `postgres` user: install Debian's postgresql package (bash scripts/setup.sh --for-tests).",
    );
  }
}

async function logLength(path: string): Promise<number> {
  return (await stat(path).catch(() => ({ size: 0 }))).size;
}
