// A runner that gave up on its own timer (ava's "Timed out while running tests", as on a busy
// machine) gets a second run, once; other runs, and runs our own timeout stopped, go as they came.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { ExecResult } from '../../src/sandbox/container/exec.js';
import { runTestsGivingOneMoreTry } from '../../src/sandbox/runnerGaveUp.js';
import { summarizeTestOutput } from '../../src/agent/testResults.js';

const captured = (name: string) => readFileSync(new URL(`./runnerOutput/${name}`, import.meta.url), 'utf8');
const gaveUp = captured('ava-timed-out.txt');
const failing = captured('ava.txt');

function result(output: string, extra: Partial<ExecResult> = {}): ExecResult {
  return {
    output,
    exitCode: 1,
    timedOut: false,
    durationMs: 1000,
    outputBytes: output.length,
    droppedBytes: 0,
    ...extra,
  };
}

/** A run that answers with these results in turn, counting its calls. */
function runs(...results: ExecResult[]): { run: () => Promise<ExecResult>; calls: () => number } {
  let calls = 0;
  return {
    run: async () => results[Math.min(calls++, results.length - 1)] as ExecResult,
    calls: () => calls,
  };
}

test('ava that gave up waiting runs once more, and the second run is the one summarized', async () => {
  assert.equal(summarizeTestOutput(gaveUp, 1).recognized, false, 'the gave-up output has no counts');
  const { run, calls } = runs(result(gaveUp), result(failing, { durationMs: 2000 }));
  const outcome = await runTestsGivingOneMoreTry(run);
  assert.equal(calls(), 2);
  assert.match(outcome.output, /^durable-debugger: the test runner gave up waiting .*the tests ran a second time:\n/);
  assert.equal(outcome.durationMs, 3000);
  const summary = summarizeTestOutput(outcome.output, outcome.exitCode);
  assert.ok(summary.recognized && summary.failed > 0 && summary.failing.length > 0, JSON.stringify(summary));
});

test('a suite that gives up every time runs twice, not more', async () => {
  const { run, calls } = runs(result(gaveUp));
  const outcome = await runTestsGivingOneMoreTry(run);
  assert.equal(calls(), 2);
  assert.match(outcome.output, /Timed out while running tests/);
});

test('other runs, and one our own timeout stopped, run once', async () => {
  for (const first of [
    result(failing),
    result(captured('ava-pass.txt'), { exitCode: 0 }),
    result(gaveUp, { timedOut: true }),
  ]) {
    const { run, calls } = runs(first, result(failing));
    assert.equal(await runTestsGivingOneMoreTry(run), first);
    assert.equal(calls(), 1);
  }
});
