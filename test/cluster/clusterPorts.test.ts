// `npm run cluster` when another program holds one of its ports: it says which port and stops,
// never taking the other program for its own server. A second cluster (its own data folder, its
// ports shifted by DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET) is used, so a running cluster is untouched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/config.js';

/** A port offset none of whose main ports is in use (other clusters may run on this machine). */
async function freeOffset(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
  for (let offset = 200; offset >= 20; offset -= 20) {
    const ports = [55432, 17233, 17234, 17235, 17239, 17243, 16933, 16934, 16935, 16939, 18233].map(
      (port) => port + offset,
    );
    if ((await Promise.all(ports.map(free))).every(Boolean)) return offset;
  }
  throw new Error('no free port offset for a second cluster');
}

test('a port of the cluster held by another program: npm run cluster names the port and fails, and stop cleans up', async () => {
  const home = await mkdtemp(join(tmpdir(), 'durable-debugger-cluster-ports-'));
  const offset = await freeOffset();
  const frontendPort = 17233 + offset;
  const squatter: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(frontendPort, '127.0.0.1', resolve));
  const env = {
    ...process.env,
    DURABLE_DEBUGGER_CLUSTER_HOME: home,
    DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET: String(offset),
    NO_COLOR: '1',
  };
  const cluster = (command: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', join(projectRoot, 'scripts', 'cluster.ts'), command], {
      cwd: projectRoot,
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
  try {
    const started = cluster('start');
    assert.equal(started.status, 1, started.stdout + started.stderr);
    assert.match(
      started.stderr,
      new RegExp(`Port ${frontendPort} is taken by a process that is not this cluster's Temporal server`),
    );
    const status = cluster('status');
    assert.equal(status.status, 3, 'not every part runs');
    assert.match(status.stdout, /temporalServer\s+stopped/);
  } finally {
    const stopped = cluster('stop');
    assert.equal(stopped.status, 0, stopped.stdout + stopped.stderr);
    assert.match(cluster('status').stdout, /postgresql\s+stopped/);
    squatter.close();
    await rm(home, { recursive: true, force: true });
  }
});
