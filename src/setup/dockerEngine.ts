// The Docker engine: it must answer on DOCKER_HOST (or the local socket). Setup installs and
// starts one where it may (as root, without DOCKER_HOST); otherwise it says what to run.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import { dockerHostOf } from '../sandbox/container/dockerHost.js';
import { errorText, isRoot, setupAsRootCommand, setupCommand, userName, type CheckResult } from './parts.js';
import { SetupError, type Progress } from './setupProgress.js';

/** Where an engine that setup starts logs, in the data folder (the test runner points at it too). */
export function dockerdLogOf(home: string): string {
  return join(home, 'dockerd.log');
}

const run = promisify(execFile);
const step = 'Docker engine';

/** What a user does when the engine does not answer them, by the error's kind. */
function fixFor(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES')
    return `add yourself to the docker group: sudo usermod -aG docker ${userName()}, then log out and in again (or run \`newgrp docker\`)`;
  if (process.env.DOCKER_HOST)
    return `start the engine at DOCKER_HOST=${process.env.DOCKER_HOST}, or unset DOCKER_HOST`;
  return isRoot() ? setupCommand : setupAsRootCommand();
}

export async function checkDocker(docker: Docker): Promise<CheckResult> {
  try {
    await docker.ping();
    const version = await docker.version();
    return {
      name: step,
      status: 'ok',
      detail: `Docker ${version.Version} (API ${version.ApiVersion}) at ${dockerHostOf()}`,
    };
  } catch (error) {
    return {
      name: step,
      status: 'fail',
      detail: `does not answer at ${dockerHostOf()} (${errorText(error)})`,
      fix: fixFor(error),
    };
  }
}

export async function ensureDockerEngine(config: Config, docker: Docker, progress: Progress): Promise<void> {
  const answer = await checkDocker(docker);
  if (answer.status === 'ok') return progress.done(step, answer.detail);
  const error = await docker.ping().then(
    () => null,
    (failure: unknown) => failure,
  );
  if ((error as NodeJS.ErrnoException | null)?.code === 'EACCES' || process.env.DOCKER_HOST || !isRoot()) {
    throw new SetupError(step, answer.detail, `To fix it, ${fixFor(error)}.`);
  }
  if (!(await hasCommand('dockerd'))) {
    progress.start(step, 'installing docker.io with apt-get');
    await aptInstall(step, ['docker.io']);
  }
  if (
    await docker.ping().then(
      () => true,
      () => false,
    )
  )
    return progress.done(step, (await checkDocker(docker)).detail);
  mkdirSync(config.home, { recursive: true });
  const log = dockerdLogOf(config.home);
  progress.start(step, `starting dockerd (log: ${log})`);
  // No bridge network or iptables: sandboxes run with --network none, and this also works where
  // the machine allows no network changes.
  const output = openSync(log, 'a');
  const child = spawn('dockerd', ['--bridge=none', '--iptables=false', '--ip-masq=false'], {
    detached: true,
    stdio: ['ignore', output, output],
  });
  child.unref();
  for (let tries = 0; tries < 120; tries++) {
    if (
      await docker.ping().then(
        () => true,
        () => false,
      )
    )
      return progress.done(step, (await checkDocker(docker)).detail);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new SetupError(step, 'dockerd did not answer within 60 s', `See ${log}.`);
}

export async function hasCommand(name: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${name}`]).then(
    () => true,
    () => false,
  );
}

/** apt-get install, as root only: a user is told the command instead. */
export async function aptInstall(stepName: string, packages: string[]): Promise<void> {
  const command = `apt-get install -y ${packages.join(' ')}`;
  if (!(await hasCommand('apt-get')))
    throw new SetupError(
      stepName,
      `cannot install ${packages.join(' ')} automatically (no apt-get)`,
      'Install it yourself.',
    );
  if (!isRoot()) throw new SetupError(stepName, `${packages.join(' ')} is missing`, `Run: sudo ${command}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', ['update', '-qq'], { env, timeout: 600_000 });
    await run('apt-get', ['install', '-y', '-qq', ...packages], { env, timeout: 1_200_000 });
  } catch (error) {
    const said = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-3).join(' ') || errorText(error);
    throw new SetupError(
      stepName,
      `apt-get could not install ${packages.join(' ')} (${said})`,
      `Run it yourself: ${command}`,
    );
  }
}
