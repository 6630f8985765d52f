// The fallback model's rules: which model a call asks for, how long the run stays on the
// fallback, and how calls are counted per model.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fallbackStaysMs, nextModel, noteModelOfCall } from '../../src/agent/fallback.js';
import { parseDebugInput } from '../../src/agent/input.js';
import type { RunState } from '../../src/agent/runState.js';

const usage = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };

test('without a fallback model a call asks for the run’s model exactly as before', () => {
  assert.deepEqual(nextModel({}, { model: 'claude-opus-4-6' }, 0), { model: 'claude-opus-4-6' });
  assert.deepEqual(nextModel({ fallbackSince: 0 }, {}, 0), { model: undefined });
});

test('with one, the call may switch after the set time; once the fallback answered, calls go to it for a while, then to the primary again', () => {
  const input = { model: 'claude-opus-4-6', fallbackModel: 'claude-haiku-4-5', fallbackAfterSeconds: 30 };
  const fallback = { model: 'claude-haiku-4-5', afterMs: 30_000 };
  assert.deepEqual(nextModel({}, input, 1_000), { model: 'claude-opus-4-6', fallback });
  assert.deepEqual(nextModel({}, { ...input, fallbackAfterSeconds: undefined }, 0).fallback?.afterMs, 60_000);
  const state = { fallbackSince: 5_000 };
  assert.deepEqual(nextModel(state, input, 5_000 + fallbackStaysMs - 1), { model: 'claude-haiku-4-5' });
  assert.deepEqual(nextModel(state, input, 5_000 + fallbackStaysMs), { model: 'claude-opus-4-6', fallback });
});

test('calls are counted by the model that answered, in ranges of iterations; an unpriced model makes its cost unknown', () => {
  const state: Pick<RunState, 'fallbackSince' | 'modelUsage' | 'iteration'> = { iteration: 0 };
  const input = { fallbackModel: 'claude-haiku-4-5' };
  const call = (
    iteration: number,
    model: string,
    costUsd: number | null,
    fallbackFrom?: { from: string; reason: string },
  ) => {
    state.iteration = iteration;
    noteModelOfCall(state, input, { model, usage, costUsd, fallbackFrom }, iteration * 1000);
  };
  call(1, 'claude-opus-4-6', 0.5);
  call(2, 'claude-haiku-4-5', 0.1, { from: 'claude-opus-4-6', reason: 'overloaded' });
  call(3, 'claude-haiku-4-5', 0.1);
  call(4, 'claude-opus-4-6', 0.5);
  call(6, 'claude-haiku-4-5', null);
  assert.equal(state.fallbackSince, 2_000, 'the time the fallback last answered for a failing primary');
  const [primary, fallback] = state.modelUsage ?? [];
  assert.deepEqual(primary?.iterations, [
    [1, 1],
    [4, 4],
  ]);
  assert.equal(primary?.fallback, false);
  assert.equal(primary?.costUsd, 1);
  assert.deepEqual(fallback?.iterations, [
    [2, 3],
    [6, 6],
  ]);
  assert.equal(fallback?.fallback, true);
  assert.equal(fallback?.calls, 3);
  assert.equal(fallback?.costUsd, null);
});

test('fallbackAfterSeconds needs a fallbackModel', () => {
  assert.throws(
    () => parseDebugInput({ repo: '/r', fallbackAfterSeconds: 10 }),
    /fallbackAfterSeconds: needs fallbackModel/,
  );
  assert.equal(parseDebugInput({ repo: '/r', fallbackModel: 'm', fallbackAfterSeconds: 0 }).fallbackAfterSeconds, 0);
});
