import assert from 'node:assert/strict';
import { test } from 'node:test';
import { truncateObservation } from '../../src/agent/observations.js';
import { CappedOutput } from '../../src/sandbox/container/cappedOutput.js';

test('a long observation keeps its head and tail and says how much was cut', () => {
  const lines = Array.from({ length: 1000 }, (_, index) => `line ${index}`);
  const text = truncateObservation(lines.join('\n'), { maxBytes: 100_000, maxLines: 20 });
  assert.match(text, /^line 0\n/);
  assert.match(text, /line 999$/);
  assert.match(text, /\[\.\.\. 980 lines \(\d+ characters\) cut from the middle/);
  assert.ok(text.split('\n').length <= 21);
});

test('a short observation is left as it is', () => {
  assert.equal(truncateObservation('ok', { maxBytes: 100, maxLines: 10 }), 'ok');
});

test('a single huge line is cut to the byte budget', () => {
  const text = truncateObservation('x'.repeat(1_000_000), { maxBytes: 1000, maxLines: 10 });
  assert.ok(text.length < 1200);
  assert.match(text, /cut from the middle/);
});

test('an observation of a few very long lines keeps its beginning and its end', () => {
  const text = truncateObservation(`Exit code: 1\n${'y'.repeat(500_000)}\n${'y'.repeat(500_000)}\n2 failed, 3 passed`, {
    maxBytes: 1000,
    maxLines: 400,
  });
  assert.ok(text.startsWith('Exit code: 1\nyyy'));
  assert.ok(text.endsWith('yyy\n2 failed, 3 passed'), text.slice(-100));
  assert.ok(text.length < 1200);
  assert.match(text, /\[\.\.\. 1 lines \(\d+ characters\) cut from the middle/);
});

test('capped output keeps memory bounded however much is written', () => {
  const output = new CappedOutput(1000);
  output.write(Buffer.from('HEAD'));
  for (let index = 0; index < 10_000; index++) output.write(Buffer.from(`chunk ${index}\n`));
  output.write(Buffer.from('TAIL'));
  const text = output.toString();
  assert.ok(text.startsWith('HEAD'));
  assert.ok(text.endsWith('TAIL'));
  assert.ok(text.length < 1100);
  assert.ok(output.dropped > 100_000);
  assert.match(text, /bytes of output dropped/);
});
