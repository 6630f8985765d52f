// File operations in bounded batches: every item once, never more than a batch in flight, and a
// failure reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileBatches, inBatches } from '../../src/sandbox/workspace/inBatches.js';

test('every item is worked on once, at most a batch at a time', async () => {
  const seen: number[] = [];
  let inFlight = 0;
  let most = 0;
  await inBatches(
    Array.from({ length: 100 }, (_, index) => index),
    async (item) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      seen.push(item);
      inFlight -= 1;
    },
  );
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 100 }, (_, index) => index),
  );
  assert.equal(most, fileBatches.size);
});

test('a failing item fails the whole, and no later batch starts', async () => {
  const started: number[] = [];
  await assert.rejects(
    inBatches(
      Array.from({ length: fileBatches.size * 3 }, (_, index) => index),
      async (item) => {
        started.push(item);
        if (item === 1) throw new Error('item 1 failed');
      },
    ),
    /item 1 failed/,
  );
  assert.equal(started.length, fileBatches.size);
});
