// Preparing the sandbox of a repository at the file limit (20,000 files), on the real Docker
// engine: the rebuild reports progress all along (the activity heartbeats under a 20 s
// heartbeat timeout), and a second preparation of the same sandbox started while the first
// still runs (a retried activity attempt) waits for it instead of racing it.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { PrepareSandboxRequest } from '../../src/agent/sandboxProtocol.js';
import { snapshotLimits } from '../../src/sandbox/sandboxHost.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

let sandbox: TestSandbox;

// Minutes of a loaded machine for each step, far under the suite's 45-minute job limit: a step
// that hangs fails under its own name instead of the whole file stopping without a word.
const stepLimit = { timeout: 10 * 60_000 };

before(async () => {
  const files: Record<string, string> = {};
  for (let index = 0; index < snapshotLimits.maxFiles; index++) {
    files[`pkg${index % 40}/module_${index}.py`] = `VALUE_${index} = ${index}\n`;
  }
  const started = Date.now();
  sandbox = await startTestSandbox({ files });
  console.log(`snapshot and first preparation of ${snapshotLimits.maxFiles} files: ${Date.now() - started} ms`);
  const editStarted = Date.now();
  const edit = await sandbox.tool('edit_file', { path: 'pkg0/module_0.py', old_string: '= 0', new_string: '= -1' });
  assert.equal(edit.isError, false, edit.content);
  console.log(`edit_file in the 20000-file workspace: ${Date.now() - editStarted} ms`);
}, stepLimit);

after(async () => {
  await sandbox?.stop();
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

/** The longest time without progress between `started` and `finished`. */
function longestGap(started: number, ticks: number[], finished: number): number {
  const times = [started, ...ticks, finished];
  return Math.max(...times.slice(1).map((time, index) => time - (times[index] as number)));
}

function request(): PrepareSandboxRequest {
  return {
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run',
    log: sandbox.log,
    limits: sandbox.limits,
  };
}

async function removeWorkspace(): Promise<void> {
  await rm(join(sandbox.workspace, '..'), { recursive: true, force: true });
}

test('rebuilding a 20,000-file workspace reports progress at least every few seconds', stepLimit, async () => {
  await removeWorkspace();
  const ticks: number[] = [];
  const started = Date.now();
  const prepared = await sandbox.host.prepare(request(), { onProgress: () => ticks.push(Date.now()) });
  const finished = Date.now();
  assert.equal(prepared.rebuiltBecause, 'the workspace was not on this worker');
  const gap = longestGap(started, ticks, finished);
  console.log(`rebuild took ${finished - started} ms, ${ticks.length} progress reports, longest gap ${gap} ms`);
  assert.ok(ticks.length >= 2, `progress was reported ${ticks.length} times`);
  // The activity's heartbeat timeout is 20 s; the SDK sends at most one heartbeat per 16 s of them.
  assert.ok(gap < 4000, `no progress for ${gap} ms`);
  assert.match((await sandbox.run('cat pkg0/module_0.py')).content, /VALUE_0 = -1$/);
});

test('a second preparation started while the first rebuilds waits for it, and both succeed', stepLimit, async () => {
  await removeWorkspace();
  const first = sandbox.host.prepare(request());
  await new Promise((resolve) => setTimeout(resolve, 300));
  const ticks: number[] = [];
  const started = Date.now();
  const second = sandbox.host.prepare(request(), { onProgress: () => ticks.push(Date.now()) });
  const [firstResult, secondResult] = await Promise.all([first, second]);
  // The waiting attempt heartbeats too, or it would time out while the first one works.
  const gap = longestGap(started, ticks, Date.now());
  assert.ok(gap < 4000, `the waiting preparation reported no progress for ${gap} ms`);
  assert.equal(firstResult.rebuiltBecause, 'the workspace was not on this worker');
  assert.equal(secondResult.rebuiltBecause, undefined, 'the second preparation rebuilt the workspace again');
  assert.equal(secondResult.containerCreated, false);
  assert.match((await sandbox.run('cat pkg0/module_0.py; ls pkg39 | wc -l')).content, /VALUE_0 = -1\n500$/);
});
