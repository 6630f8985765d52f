// The Temporal server runs with the dynamic config that measured best (issue 14): the embedded
// dev server is started with it, and the compose deployment loads the same values.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig, projectRoot } from '../../src/config.js';
import { ensureTemporalServer, type TemporalServer } from '../../src/temporal/embeddedServer.js';
import { serverDynamicConfig, sqlitePragmas } from '../../src/temporal/serverSettings.js';
import { freePort } from '../../harness/devStack.js';

test('the embedded dev server starts with the dynamic config and SQLite settings of src/temporal/serverSettings.ts', async () => {
  const home = await mkdtemp(join(tmpdir(), 'server-settings-'));
  let server: TemporalServer | undefined;
  try {
    server = await startOnFreePorts(home);
    assert.ok(server.pid, 'this test started the server');
    const commandLine = (await readFile(`/proc/${server.pid}/cmdline`, 'utf8')).split('\0');
    for (const [key, value] of Object.entries(serverDynamicConfig)) {
      const at = commandLine.indexOf(`${key}=${value}`);
      assert.ok(
        at > 0 && commandLine[at - 1] === '--dynamic-config-value',
        `${key}=${value} in ${commandLine.join(' ')}`,
      );
    }
    for (const [key, value] of Object.entries(sqlitePragmas)) {
      const at = commandLine.indexOf(`${key}=${value}`);
      assert.ok(at > 0 && commandLine[at - 1] === '--sqlite-pragma', `${key}=${value} in ${commandLine.join(' ')}`);
    }
    // Write-ahead logging is on: SQLite keeps its log beside the database file.
    assert.ok(existsSync(join(home, 'temporal.db-wal')), 'temporal.db-wal exists');
  } finally {
    if (server?.pid) process.kill(server.pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await rm(home, { recursive: true, force: true });
  }
});

/**
 * The server, started again on new ports when one was taken before its bind (in CI its UI's port
 * was; the dev server also picks internal ports where outgoing connections take theirs).
 */
async function startOnFreePorts(home: string): Promise<TemporalServer> {
  for (let attempt = 1; ; attempt++) {
    const config = loadConfig({
      ...process.env,
      DURABLE_DEBUGGER_HOME: home,
      TEMPORAL_ADDRESS: '',
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
    });
    try {
      return await ensureTemporalServer(config);
    } catch (error) {
      if (attempt === 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

test('the compose deployment loads the same dynamic config', async () => {
  const file = await readFile(join(projectRoot, 'deploy', 'temporal', 'dynamicconfig.yaml'), 'utf8');
  // key:\n  - value: v  (the file's only shape)
  const loaded = Object.fromEntries(
    [...file.matchAll(/^([\w.]+):\s*\n\s*- value: (.+)$/gm)].map((match) => [match[1], JSON.parse(match[2] as string)]),
  );
  assert.deepEqual(loaded, serverDynamicConfig);
  const compose = execFileSync('docker-compose', ['-f', join(projectRoot, 'docker-compose.yml'), 'config'], {
    encoding: 'utf8',
    // The deployment takes its database password from the environment (it has no default).
    env: { ...process.env, ANTHROPIC_API_KEY: '', POSTGRES_PASSWORD: 'a-password-of-the-test' },
  });
  assert.match(compose, /DYNAMIC_CONFIG_FILE_PATH: \/etc\/temporal\/config\/dynamicconfig\/durable-debugger\.yaml/);
  assert.match(compose, /deploy\/temporal\/dynamicconfig\.yaml/);
});

test('an embedded server that cannot bind its port says why, not only that it exited', async () => {
  const home = await mkdtemp(join(tmpdir(), 'server-bind-'));
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  try {
    const config = loadConfig({
      ...process.env,
      DURABLE_DEBUGGER_HOME: home,
      TEMPORAL_ADDRESS: '',
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String((squatter.address() as { port: number }).port),
    });
    await assert.rejects(
      ensureTemporalServer(config),
      /exited at once \(code 1\): .*listen tcp 127\.0\.0\.1:\d+: bind: address already in use; see /,
    );
  } finally {
    squatter.close();
    await rm(home, { recursive: true, force: true });
  }
});
