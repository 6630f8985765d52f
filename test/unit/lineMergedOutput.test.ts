// stdout and stderr merged a whole line at a time: a line cut between two of Docker's frames, with
// the other stream's output in between, still reaches the parsers as one line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTestOutput } from '../../src/agent/testResults.js';
import { LineMergedOutput } from '../../src/sandbox/container/lineMergedOutput.js';

function merged(frames: Array<['stdout' | 'stderr', string]>, maxPendingBytes?: number): string {
  const pieces: string[] = [];
  const emit = (chunk: Buffer) => pieces.push(chunk.toString());
  const output = new LineMergedOutput(emit, maxPendingBytes);
  for (const [name, text] of frames) output[name].write(Buffer.from(text));
  output.flush();
  return pieces.join('');
}

test("cargo's header on stderr arriving inside a libtest line: the line stays whole, the failure named by its binary", () => {
  const output = merged([
    ['stderr', '     Running unittests src/lib.rs (target/debug/deps/changelog-90c1e5f01530e796)\n'],
    ['stdout', '\nrunning 1 test\ntest tests::heading ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ign'],
    ['stderr', '     Running tests/render.rs (target/debug/deps/render-5dc2c4aef5236189)\n'],
    ['stdout', 'ored; 0 measured; 0 filtered out; finished in 0.01s\n\n'],
    ['stdout', '\nrunning 1 test\ntest history_lists_every_release ... '],
    ['stdout', 'FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n'],
  ]);
  assert.match(
    output,
    /^test result: ok\. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0\.01s$/m,
  );
  assert.match(output, /^ {5}Running tests\/render\.rs \(target\/debug\/deps\/render-5dc2c4aef5236189\)$/m);
  const summary = summarizeTestOutput(output, 101);
  assert.deepEqual([summary.passed, summary.failed], [1, 1]);
  assert.deepEqual(summary.failing, ['render::history_lists_every_release']);
});

test('an unfinished line is kept to the end, and a long one without a newline is not held back for ever', () => {
  assert.equal(
    merged([
      ['stdout', 'prompt> '],
      ['stderr', 'warning\n'],
    ]),
    'warning\nprompt> ',
  );
  assert.equal(
    merged(
      [
        ['stdout', 'x'.repeat(10)],
        ['stdout', 'y'.repeat(10)],
        ['stderr', 'e\n'],
      ],
      16,
    ),
    `${'x'.repeat(10)}${'y'.repeat(10)}e\n`,
  );
  assert.equal(
    merged([
      ['stdout', 'a\nb'],
      ['stdout', 'c\n'],
    ]),
    'a\nbc\n',
  );
});
