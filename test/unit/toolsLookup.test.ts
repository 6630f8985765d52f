// Every consumer finds the tools setup installed, whatever its data home and PATH: the test suite
// gives each server its own temporary home, and a fresh machine has no `temporal` on PATH.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot, toolsRootFor } from '../../src/config.js';

test('the Temporal CLI that setup installed is found with another data home and a PATH of system folders only', () => {
  const home = mkdtempSync(join(tmpdir(), 'durable-debugger-home-'));
  try {
    const probe = [
      "import { loadConfig } from './src/config.js';",
      "import { temporalCliPath } from './src/temporal/embeddedServer.js';",
      'console.log(temporalCliPath(loadConfig()));',
    ].join('\n');
    const environment: NodeJS.ProcessEnv = {
      HOME: process.env.HOME,
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      DURABLE_DEBUGGER_HOME: home,
      ...(process.env.TEMPORAL_CLI ? { TEMPORAL_CLI: process.env.TEMPORAL_CLI } : {}),
    };
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      cwd: projectRoot,
      env: environment,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const found = result.stdout.trim();
    assert.equal(found, process.env.TEMPORAL_CLI ?? join(toolsRootFor(), 'temporal', 'bin', 'temporal'));
    accessSync(found, constants.X_OK);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
