// The wait for an attached container's last output: over as soon as the stream has ended (even before
// the wait began), and never longer than its cap when the stream stays open.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { outputEnd } from '../../src/sandbox/container/outputEnd.js';

test('a stream that ended before the wait: the wait is over at once, with every piece read', async () => {
  const stream = new PassThrough();
  const pieces: string[] = [];
  stream.on('data', (chunk: Buffer) => pieces.push(chunk.toString()));
  const allOutput = outputEnd(stream, 10_000);
  stream.end('last line\n');
  await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  await allOutput();
  assert.ok(performance.now() - started < 1_000);
  assert.deepEqual(pieces, ['last line\n']);
});

test('a stream the engine keeps open: the wait ends at its cap', async () => {
  const stream = new PassThrough();
  stream.resume();
  const allOutput = outputEnd(stream, 50);
  let over = false;
  const waiting = allOutput().then(() => (over = true));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(over, false);
  await waiting;
  assert.equal(over, true);
});
