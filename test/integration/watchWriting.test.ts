// `watch` shows the model's reply while it is written (issue 27, item 4): the model call streams
// the reply and heartbeats what it says so far; `watch --json`, a real CLI process, prints it as
// `writing` lines, before the whole thought enters the conversation. Real dev server, real Docker,
// the fake API streaming each reply over its latency as the real API does.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import type { WritingSoFar } from '../../src/agent/replySoFar.js';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';
import { runCli } from '../support/cli.js';

let server: TestServer;
let worker: TestWorker;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
  // Six seconds a reply (a heartbeat says what is written at most every 2 s): each thought arrives in pieces over them.
  worker = await startTestWorker(server, { fake: { scripts: fixture.script, latencyMs: 6_000 } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
});

type WritingLine = WritingSoFar & { type: 'writing'; iteration: number };

test('`watch --json` shows what the model is writing, piece by piece, before the thought is whole', async () => {
  const handle = await startDebugRun(server.client, { input: fixtureInput(fixture), taskQueue: worker.taskQueue });
  const watched = await runCli(server, ['watch', handle.workflowId, '--json'], {
    DURABLE_DEBUGGER_TASK_QUEUE: worker.taskQueue,
  });
  assert.equal(watched.code, 0, watched.output);
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', report.stopDetail);

  type Line = { type: string; message?: { role: string; content: Array<{ type: string; text?: string }> } };
  const lines = watched.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
  const writing = lines.filter((line) => line.type === 'writing') as unknown as WritingLine[];
  const replies = lines.filter((line) => line.type === 'message' && line.message?.role === 'assistant');
  const thoughts = replies.flatMap((line) =>
    (line.message?.content ?? []).flatMap((block) => (block.type === 'text' ? [block.text as string] : [])),
  );
  assert.ok(writing.length >= 3, `only ${writing.length} writing lines:\n${watched.stdout}`);

  // Each is the end of the beginning of a thought the run then had: what was written so far.
  for (const line of writing)
    assert.ok(
      thoughts.some((thought) => thought.slice(0, line.chars).endsWith(line.tail) && line.chars <= thought.length),
      `${JSON.stringify(line)} is not part of a thought`,
    );
  // Some showed a thought half written, and one thought was seen growing.
  assert.ok(
    writing.some((line) => !thoughts.some((thought) => thought.length === line.chars)),
    'every writing line showed a whole thought: nothing was seen while being written',
  );
  const grew = writing.some((line, index) =>
    writing
      .slice(index + 1)
      .some((later) => later.iteration === line.iteration && !later.thinking && later.chars > line.chars),
  );
  assert.ok(grew, `no thought was seen growing:\n${writing.map((line) => JSON.stringify(line)).join('\n')}`);

  // A writing line comes before its iteration's thought is printed.
  const firstWriting = lines.findIndex((line) => line.type === 'writing');
  const iteration = (lines[firstWriting] as unknown as WritingLine).iteration;
  assert.ok(firstWriting < lines.indexOf(replies[iteration - 1] as Line), 'the writing was shown after the thought');
});
