// History growth must stay linear in iterations: the model activity's input carries only the
// messages added since the previous model call (the worker keeps the rest), so each iteration adds
// only its own response and observations to the history. Prints the figures it checks.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { conversationBytes } from '../../src/agent/conversation.js';
import { startDebugRun } from '../../src/client.js';
import { transcriptQuery } from '../../src/temporal/definitions.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { ScriptStep } from '../../src/demo/script.js';
import { startTestServer, startTestWorker, type TestServer } from '../../harness/devStack.js';

let server: TestServer;
let repo: string;

before(async () => {
  server = await startTestServer();
  const fixture = await loadFixture('01_off_by_one');
  const parent = await mkdtemp(join(tmpdir(), 'history-growth-'));
  repo = join(parent, '01_off_by_one');
  await cp(fixture.path, repo, { recursive: true });
  // A 4 KB file: each iteration reads it, so each observation is about 4 KB.
  await writeFile(
    join(repo, 'notes.txt'),
    Array.from({ length: 100 }, (_, index) => `note ${index}: ${'x'.repeat(32)}`).join('\n'),
  );
});
after(async () => {
  await server?.stop();
  await rm(join(repo, '..'), { recursive: true, force: true });
});

test('history bytes per conversation byte stay flat from 10 to 50 iterations', async () => {
  const read: ScriptStep = {
    thought: 'Reading the notes again.',
    tool_calls: [{ name: 'read_file', input: { path: 'notes.txt' } }],
  };
  const worker = await startTestWorker(server, {
    fake: { scripts: { '01_off_by_one': { responses: Array(60).fill(read) } } },
  });
  const rows: Array<{
    iterations: number;
    historyBytes: number;
    events: number;
    conversationBytes: number;
    ratio: number;
  }> = [];
  try {
    for (const iterations of [10, 25, 50]) {
      const handle = await startDebugRun(server.client, {
        input: { repo, budgets: { maxIterations: iterations } },
        taskQueue: worker.taskQueue,
      });
      await handle.result();
      // The server's own size of the history it stores (as npm run bench measures it).
      const description = await handle.describe();
      const historyBytes = description.historySize ?? NaN;
      const transcript = await handle.query(transcriptQuery);
      const conversation = conversationBytes(transcript.messages);
      rows.push({
        iterations,
        historyBytes,
        events: description.historyLength,
        conversationBytes: conversation,
        ratio: historyBytes / conversation,
      });
    }
  } finally {
    await worker.stop();
  }
  for (const row of rows) {
    console.log(
      `${row.iterations} iterations: history ${row.historyBytes} bytes in ${row.events} events, conversation ${row.conversationBytes} bytes, ratio ${row.ratio.toFixed(2)}`,
    );
  }
  const [first, , last] = rows;
  // Quadratic growth (the conversation resent on every call) would multiply the ratio by about 5 here.
  assert.ok(
    last!.ratio <= first!.ratio * 1.25,
    `ratio rose from ${first!.ratio.toFixed(2)} to ${last!.ratio.toFixed(2)}`,
  );
});
