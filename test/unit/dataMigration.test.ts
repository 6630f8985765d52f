// The checkout's earlier data home (issue 25): setup moves the runs to the data home and the tools
// to the cache, once; the cluster's data stays; a data home with runs of its own is never mixed.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { checkDataHome, migrateCheckoutData } from '../../src/setup/dataMigration.js';

const scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-migration-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function checkoutWithRuns(label: string): string {
  const old = join(scratch, label, 'checkout', '.durable-debugger');
  for (const folder of ['store/blobs', 'runs', 'tools/temporal/bin', 'cluster/postgresql', 'test-engines/lane-2'])
    mkdirSync(join(old, folder), { recursive: true });
  writeFileSync(join(old, 'temporal.db'), 'runs');
  writeFileSync(join(old, 'runs', 'debug-1.patch'), 'patch');
  writeFileSync(join(old, 'tools', 'temporal', 'bin', 'temporal'), 'cli');
  return old;
}

function lines() {
  const said: string[] = [];
  return {
    said,
    progress: {
      start: (step: string, what: string) => said.push(`${step}: ${what}`),
      done: (step: string, what: string) => said.push(`${step}: ${what}`),
    },
  };
}

test("the runs move to the data home and the tools to the cache; the checkout's tooling stays; doctor warns until then", async () => {
  const old = checkoutWithRuns('move');
  const config = loadConfig({ HOME: join(scratch, 'move', 'home'), DURABLE_DEBUGGER_CONFIG: '/nonexistent.json' });
  assert.equal(checkDataHome(config, old).status, 'warn');
  assert.match(checkDataHome(config, old).detail, /still in/);
  const { said, progress } = lines();
  await migrateCheckoutData(config, progress, old);
  assert.equal(readFileSync(join(config.home, 'temporal.db'), 'utf8'), 'runs');
  assert.equal(readFileSync(join(config.home, 'runs', 'debug-1.patch'), 'utf8'), 'patch');
  assert.ok(existsSync(join(config.home, 'store', 'blobs')));
  assert.equal(readFileSync(join(config.toolsRoot, 'temporal', 'bin', 'temporal'), 'utf8'), 'cli');
  assert.ok(existsSync(join(old, 'cluster', 'postgresql')), 'the cluster keeps its data in the checkout');
  assert.ok(existsSync(join(old, 'test-engines', 'lane-2')), "the test lanes' engines stay in the checkout");
  assert.ok(!existsSync(join(config.home, 'test-engines')));
  assert.ok(!existsSync(join(old, 'temporal.db')));
  assert.ok(
    said.some((line) => /moving the checkout's earlier runs/.test(line)),
    said.join('\n'),
  );
  assert.equal(checkDataHome(config, old).status, 'ok');
  // A second setup has nothing left to do.
  await migrateCheckoutData(config, lines().progress, old);
  assert.equal(readFileSync(join(config.home, 'temporal.db'), 'utf8'), 'runs');
});

test('a data home with runs of its own is left alone, and the user is told where the old runs are', async () => {
  const old = checkoutWithRuns('both');
  const config = loadConfig({ HOME: join(scratch, 'both', 'home'), DURABLE_DEBUGGER_CONFIG: '/nonexistent.json' });
  mkdirSync(config.home, { recursive: true });
  writeFileSync(join(config.home, 'temporal.db'), 'newer runs');
  const { said, progress } = lines();
  await migrateCheckoutData(config, progress, old);
  assert.equal(readFileSync(join(config.home, 'temporal.db'), 'utf8'), 'newer runs');
  assert.equal(readFileSync(join(old, 'temporal.db'), 'utf8'), 'runs');
  assert.ok(
    said.some((line) => line.includes(`DURABLE_DEBUGGER_HOME=${old}`)),
    said.join('\n'),
  );
});

test('DURABLE_DEBUGGER_HOME naming the old folder keeps using it: nothing moves', async () => {
  const old = checkoutWithRuns('kept');
  const config = loadConfig({
    HOME: join(scratch, 'kept', 'home'),
    DURABLE_DEBUGGER_HOME: old,
    DURABLE_DEBUGGER_CONFIG: '/nonexistent.json',
  });
  await migrateCheckoutData(config, lines().progress, old);
  assert.equal(readFileSync(join(old, 'temporal.db'), 'utf8'), 'runs');
  assert.equal(checkDataHome(config, old).status, 'ok');
});
