// A `run` left to the background worker: the command sends one request on its lease and shows
// what comes back (src/cli/backgroundRun.ts). Here the worker's side is a unix socket that answers
// with frames as the worker's would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { after, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import type { RunStatusView } from '../../src/agent/runState.js';
import { runInBackground, type RunFrame, type RunRequest } from '../../src/cli/backgroundRun.js';
import type { TranscriptView } from '../../src/temporal/definitions.js';

const folder = mkdtempSync(join(tmpdir(), 'background-run-'));
/** Closed after the tests, also when one fails: an open socket would keep the file's process alive. */
const opened: Array<{ lease: Socket; server: Server }> = [];
after(() => {
  for (const { lease, server } of opened) {
    lease.destroy();
    server.close();
  }
  rmSync(folder, { recursive: true, force: true });
});

const status = {
  phase: 'done',
  iteration: 1,
  maxIterations: 10,
  lastThought: '',
  tokens: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
  costUsd: 0.5,
  costNote: null,
  modelEndpoint: 'default',
  waitingFor: null,
} as unknown as RunStatusView;
const transcript: TranscriptView = {
  version: 1,
  replyIterations: [1],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Fix the failing tests.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'The loop stops one short.' }] },
  ],
};
const report = { workflowId: 'run-1', status: 'fixed' } as unknown as DebugReport;

/** A worker's socket that answers a run request with `frames` (then closes, when `close`): the command's lease, and what it was asked. */
async function workerAnswering(
  name: string,
  frames: RunFrame[],
  close = false,
): Promise<{ lease: Socket; asked: Promise<RunRequest> }> {
  const path = join(folder, `${name}.sock`);
  let asked!: (request: RunRequest) => void;
  const request = new Promise<RunRequest>((resolve) => (asked = resolve));
  const server = createServer((socket) => {
    let line = '';
    socket.on('data', (chunk: Buffer) => {
      line += chunk.toString();
      if (!line.includes('\n')) return;
      asked(JSON.parse(line) as RunRequest);
      for (const frame of frames) socket.write(`${JSON.stringify(frame)}\n`);
      if (close) socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const lease = createConnection(path);
  opened.push({ lease, server });
  await new Promise((resolve) => lease.once('connect', resolve));
  return { lease, asked: request };
}

/** What the command wrote, without colours (picocolors adds them where CI is set). */
function output(): { out: Writable; text: () => string } {
  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  });
  return { out, text: () => stripVTControlCharacters(written) };
}

test('the command sends its input once and shows what the worker follows: the run, its messages, then its report', async () => {
  const { lease, asked } = await workerAnswering('shown', [
    { started: 'run-1' },
    {
      look: {
        closed: false,
        answer: [
          { ...status, phase: 'thinking' },
          { ...transcript, messages: [transcript.messages[0]!] },
        ],
        writing: null,
      },
    },
    { look: { closed: true, answer: [status, transcript], writing: null } },
    { report, webUi: 'http://localhost:8233/namespaces/default/workflows/run-1' },
  ]);
  const { out, text } = output();
  const started: string[] = [];
  const input = { repo: '/tmp/repo', user: 'someone' };
  const answer = await runInBackground(
    lease,
    { input, workflowId: 'run-1' },
    { json: false, out, started: (id) => started.push(id) },
  );
  assert.deepEqual(await asked, { request: 'run', input, workflowId: 'run-1' });
  assert.deepEqual(started, ['run-1']);
  assert.equal(answer.report.status, 'fixed');
  assert.match(answer.webUi ?? '', /workflows\/run-1$/);
  assert.match(text(), /Fix the failing tests\./);
  assert.match(text(), /thought The loop stops one short\./);
  assert.equal(text().match(/Fix the failing tests/g)?.length, 1, 'each message once');
});

test("the worker's refusal is the command's error, said as the worker said it", async () => {
  const why = 'ANTHROPIC_API_KEY is not set and no worker answers model calls for runs without one.';
  const { lease } = await workerAnswering('refused', [{ error: why }]);
  await assert.rejects(
    runInBackground(
      lease,
      { input: { repo: '/tmp/repo' } },
      { json: false, out: output().out, started: () => undefined },
    ),
    { message: why },
  );
});

test('a worker that goes away mid-run is said plainly, with how to find the run again', async () => {
  const { lease } = await workerAnswering(
    'gone',
    [{ started: 'run-2' }, { look: { closed: false, answer: [status, transcript], writing: null } }],
    true,
  );
  await assert.rejects(
    runInBackground(
      lease,
      { input: { repo: '/tmp/repo' } },
      { json: true, out: output().out, started: () => undefined },
    ),
    /stopped answering; the run, if it started, goes on/,
  );
});
