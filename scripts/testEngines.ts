// Docker engines of their own for the integration tests' lanes: each lane's tests own their engine
// (its containers, images, events and leak check), so lanes can run side by side without seeing
// each other's sandboxes. Lane 1 uses the engine setup started; the others get a dockerd each, with
// its own data root, exec root and socket, and the sandbox image copied in from the first engine.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { dataHomeFor } from '../src/locations.js';
import { pythonVariantImage } from '../src/sandbox/environment/python/pythonVersions.js';
import { dockerdLogOf } from '../src/setup/dockerEngine.js';

export interface TestEngine {
  lane: number;
  /** DOCKER_HOST for the lane's tests; undefined for the engine the environment already names. */
  dockerHost: string | undefined;
  /** Where the engine logs, when we know: what it did while a job hung or failed. */
  log: string | undefined;
  stop(): Promise<void>;
}

const sandboxImage = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';

/** Engines for `lanes` lanes; extra engines need root (to start dockerd): without it, one lane. */
export async function startTestEngines(lanes: number, root: string): Promise<TestEngine[]> {
  // The first lane's engine is the machine's: setup's log, when setup started it (on the default socket).
  const machineLog = dockerdLogOf(dataHomeFor(process.env));
  const engines: TestEngine[] = [
    {
      lane: 1,
      dockerHost: process.env.DOCKER_HOST,
      log: !process.env.DOCKER_HOST && existsSync(machineLog) ? machineLog : undefined,
      stop: async () => {},
    },
  ];
  if (lanes <= 1) return engines;
  if (process.getuid?.() !== 0) {
    console.log(
      'Integration tests run in one lane: more lanes need Docker engines of their own, which only root starts.',
    );
    return engines;
  }
  for (let lane = 2; lane <= lanes; lane++) engines.push(await startEngine(lane, root));
  return engines;
}

async function startEngine(lane: number, root: string): Promise<TestEngine> {
  const folder = join(root, `lane-${lane}`);
  const execRoot = `/run/durable-debugger-test-lane-${lane}`;
  const socket = `${execRoot}.sock`;
  mkdirSync(folder, { recursive: true });
  const dockerHost = `unix://${socket}`;
  const pidFile = `${execRoot}.pid`;
  const alreadyRunning = await answers(socket);
  if (!alreadyRunning) {
    const log = openSync(dockerdLogOf(folder), 'a');
    const child = spawn(
      'dockerd',
      [
        `--data-root=${join(folder, 'data')}`,
        `--exec-root=${execRoot}`,
        `--pidfile=${pidFile}`,
        `--host=${dockerHost}`,
        // As setup starts the first engine: sandboxes run with --network none, and no network changes are needed.
        '--bridge=none',
        '--iptables=false',
        '--ip-masq=false',
      ],
      { detached: true, stdio: ['ignore', log, log] },
    );
    child.unref();
    const deadline = Date.now() + 60_000;
    while (!(await answers(socket))) {
      if (Date.now() > deadline)
        throw new Error(`The Docker engine of test lane ${lane} did not start; see ${dockerdLogOf(folder)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  await removeLeftContainers(lane, socket);
  await copySandboxImage(dockerHost);
  return {
    lane,
    dockerHost,
    log: dockerdLogOf(folder),
    // An engine this run started is stopped again; its data root stays, so the next run reuses its images.
    stop: async () => {
      if (alreadyRunning || !existsSync(pidFile)) return;
      const pid = Number(readFileSync(pidFile, 'utf8'));
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && (await answers(socket))) await new Promise((resolve) => setTimeout(resolve, 500));
    },
  };
}

/**
 * A lane's engine is the tests' alone: containers an interrupted run left in it (its engine was
 * killed with them) are removed before the lane starts, so the end's leak check sees this run's only.
 */
async function removeLeftContainers(lane: number, socket: string): Promise<void> {
  const docker = new Docker({ socketPath: socket });
  const left = await docker.listContainers({ all: true });
  for (const container of left) await docker.getContainer(container.Id).remove({ force: true, v: true });
  if (left.length > 0)
    console.log(
      `Test lane ${lane}: removed ${left.length} container(s) an interrupted earlier run left in its engine: ${left.map((container) => container.Names.join(',')).join(' ')}`,
    );
}

async function answers(socket: string): Promise<boolean> {
  if (!existsSync(socket)) return false;
  return new Docker({ socketPath: socket })
    .ping()
    .then(() => true)
    .catch(() => false);
}

/**
 * The sandbox image and its Python 3.13 variant (setup --for-tests builds it; the environment tests use
 * it), copied from the first engine unless the lane's engine has the same ones.
 */
async function copySandboxImage(dockerHost: string): Promise<void> {
  const id = (image: string, host: string | undefined) =>
    spawnSync('docker', ['image', 'inspect', '--format', '{{.Id}}', image], {
      encoding: 'utf8',
      env: host ? { ...process.env, DOCKER_HOST: host } : process.env,
    }).stdout.trim();
  for (const image of [sandboxImage, pythonVariantImage(sandboxImage, '3.13')]) {
    const wanted = id(image, process.env.DOCKER_HOST);
    if (!wanted) throw new Error(`The sandbox image ${image} is missing: run npm run setup -- --for-tests first`);
    if (id(image, dockerHost) === wanted) continue;
    const copy = spawnSync('sh', ['-c', `docker save ${image} | DOCKER_HOST=${dockerHost} docker load -q`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (copy.status !== 0) throw new Error(`Copying ${image} into the engine at ${dockerHost} failed`);
  }
}
