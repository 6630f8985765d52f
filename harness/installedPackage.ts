// The package as a user gets it: `npm pack` of the checkout (its prepack builds dist/), installed
// with `npm install -g` into a prefix of its own and run under `env -i`: a home, the system's PATH
// plus the prefix's bin, and only the machine's own network settings. For tests and the bench.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/config.js';

export const systemPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A user other than root: a uid and its group (the Docker socket's group, to be "in the docker group"). */
export interface AsUser {
  uid: number;
  gid: number;
}

export interface Finished {
  code: number | null;
  output: string;
}

/** Runs a command to its end (stdout and stderr interleaved), as `user` when given. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; user?: AsUser; timeoutMs?: number },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** `npm pack` of the checkout into `destination`; returns the tarball's path. */
export async function packTarball(destination: string): Promise<string> {
  const packed = await runCommand('npm', ['pack', '--pack-destination', destination], {
    cwd: projectRoot,
    env: process.env,
  });
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.output}`);
  const tarball = readdirSync(destination).find((name) => /^durable-debugger-.*\.tgz$/.test(name));
  if (!tarball) throw new Error(`npm pack left no tarball in ${destination}:\n${packed.output}`);
  return join(destination, tarball);
}

/**
 * What a fresh login has: HOME, the system's PATH (with the install prefix's bin first), and the
 * machine's own settings for reaching Docker and the network (which engine, the proxy's CA and
 * pip's settings), nothing of the checkout's.
 */
export function freshEnvironment(home: string, prefix: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const machine = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name, value]) =>
        value !== undefined &&
        /^(DOCKER_HOST|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|PIP_\w+)$/.test(
          name,
        ),
    ),
  );
  return { ...machine, HOME: home, PATH: `${join(prefix, 'bin')}:${systemPath}`, ...extra };
}

export interface Installed {
  /** npm's output of the install. */
  output: string;
  /** The installed package's folder. */
  packageFolder: string;
  /** The `durable-debugger` command on the prefix's PATH. */
  bin: string;
}

/** `npm install -g <tarball>` into `prefix`, in the fresh environment. */
export async function installGlobally(
  tarball: string,
  prefix: string,
  env: NodeJS.ProcessEnv,
  user?: AsUser,
): Promise<Installed> {
  for (const folder of [env.HOME as string, prefix]) mkdirSync(folder, { recursive: true });
  const installed = await runCommand('npm', ['install', '-g', '--prefix', prefix, tarball], {
    cwd: env.HOME as string,
    env,
    user,
  });
  if (installed.code !== 0) throw new Error(`npm install -g failed:\n${installed.output}`);
  return {
    output: installed.output,
    packageFolder: join(prefix, 'lib', 'node_modules', 'durable-debugger'),
    bin: join(prefix, 'bin', 'durable-debugger'),
  };
}
