// Settings from the environment: the repository roots and the sweep interval.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

test('DURABLE_DEBUGGER_REPO_ROOTS: unset means unrestricted; else absolute folders separated by ":"', () => {
  assert.equal(loadConfig({}).repoRoots, null);
  assert.equal(loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: '' }).repoRoots, null);
  assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: '/srv/repos:/home/me/code/' }).repoRoots, [
    '/srv/repos',
    '/home/me/code',
  ]);
  assert.throws(
    () => loadConfig({ DURABLE_DEBUGGER_REPO_ROOTS: 'repos:/srv' }),
    (error: unknown) => error instanceof ConfigError && /must list absolute folders/.test(error.message),
  );
});

test('DURABLE_DEBUGGER_REAP_EVERY_SECONDS: every 300 s unless set; must be positive', () => {
  assert.equal(loadConfig({}).reapEverySeconds, 300);
  assert.equal(loadConfig({ DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '5' }).reapEverySeconds, 5);
  assert.throws(() => loadConfig({ DURABLE_DEBUGGER_REAP_EVERY_SECONDS: '0' }), ConfigError);
});

test("DURABLE_DEBUGGER_STORE: a folder (default: the data home's store) or a postgres:// URL; another URL scheme is refused", () => {
  assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_HOME: '/data/dd' }).contentStore, {
    kind: 'folder',
    root: '/data/dd/store',
  });
  assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_STORE: '/srv/store' }).contentStore, {
    kind: 'folder',
    root: '/srv/store',
  });
  for (const url of ['postgres://dd:pw@db:5432/durable_debugger', 'postgresql://db/durable_debugger?sslmode=require']) {
    assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_STORE: url }).contentStore, { kind: 'postgres', url });
  }
  assert.throws(
    () => loadConfig({ DURABLE_DEBUGGER_STORE: 's3://bucket/store' }),
    (error: unknown) =>
      error instanceof ConfigError && /must be a folder or a postgres:\/\/ URL \(got a s3: URL\)/.test(error.message),
  );
});

test('the model provider: anthropic by default; bedrock and vertex with their own default model ids and settings', () => {
  const anthropic = loadConfig({}).anthropic;
  assert.equal(anthropic.provider, 'anthropic');
  assert.equal(anthropic.model, 'claude-sonnet-4-6');
  const bedrock = loadConfig({ DURABLE_DEBUGGER_PROVIDER: 'bedrock', AWS_DEFAULT_REGION: 'eu-west-1' }).anthropic;
  assert.equal(bedrock.model, 'global.anthropic.claude-sonnet-4-6');
  assert.equal(bedrock.bedrock.region, 'eu-west-1');
  const vertex = loadConfig({
    DURABLE_DEBUGGER_PROVIDER: 'vertex',
    CLOUD_ML_REGION: 'global',
    ANTHROPIC_MODEL: 'claude-opus-4-6',
  });
  assert.equal(vertex.anthropic.model, 'claude-opus-4-6');
  assert.equal(vertex.anthropic.vertex.region, 'global');
  assert.throws(
    () => loadConfig({ DURABLE_DEBUGGER_PROVIDER: 'azure' }),
    /DURABLE_DEBUGGER_PROVIDER: use one of anthropic, bedrock, vertex/,
  );
});

test('relative data folders: from config.json, taken from the file’s folder; from the environment, refused', () => {
  const folder = mkdtempSync(join(tmpdir(), 'config-folders-'));
  try {
    const configFile = join(folder, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        settings: {
          DURABLE_DEBUGGER_HOME: 'data',
          DURABLE_DEBUGGER_STORE: './blobs',
          DURABLE_DEBUGGER_WORKSPACES: '../workspaces',
        },
      }),
    );
    // Whatever folder the command runs in: the worker reads these from the config file's folder.
    const config = loadConfig({ DURABLE_DEBUGGER_CONFIG: configFile });
    assert.equal(config.home, join(folder, 'data'));
    assert.deepEqual(config.contentStore, { kind: 'folder', root: join(folder, 'blobs') });
    assert.equal(config.workspaceRoot, join(dirname(folder), 'workspaces'));
    for (const name of ['DURABLE_DEBUGGER_HOME', 'DURABLE_DEBUGGER_STORE', 'DURABLE_DEBUGGER_WORKSPACES'])
      assert.throws(
        () => loadConfig({ DURABLE_DEBUGGER_CONFIG: configFile, [name]: 'relative/folder' }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes(`${name} must be an absolute path (got "relative/folder"`),
        name,
      );
    // Absolute folders and a postgres:// store are as given.
    assert.equal(loadConfig({ DURABLE_DEBUGGER_HOME: '/srv/dd' }).home, '/srv/dd');
    assert.equal(loadConfig({ DURABLE_DEBUGGER_STORE: 'postgres://db/store' }).contentStore.kind, 'postgres');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
