// `watch` of a closed run: the run's last status is shown as for a live run (iteration usage,
// attempts with their labels, the JSON status line); only what is true of a live run alone is not.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { DebugReport } from '../../src/agent/report.js';
import type { RunStatusView } from '../../src/agent/runState.js';
import { summarizeTestOutput } from '../../src/agent/testResults.js';
import { followRun, type FollowOptions } from '../../src/cli/follow.js';
import { formatReport } from '../../src/cli/printReport.js';
import type { TranscriptView } from '../../src/temporal/definitions.js';

const transcript: TranscriptView = {
  version: 1,
  replyIterations: [1],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Fix the failing tests.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Running the tests first.' }] },
  ],
};

function statusOf(overrides: Partial<RunStatusView>): RunStatusView {
  return {
    phase: 'done',
    iteration: 1,
    maxIterations: 10,
    lastThought: '',
    tokens: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0.5,
    costNote: null,
    modelEndpoint: 'default',
    waitingFor: null,
    ...overrides,
  } as RunStatusView;
}

const attempts = [
  { attempt: 1, workflowId: 'run-attempt-1', status: 'fixed', label: 'attempt 1 (temperature 0.2)' },
  { attempt: 2, workflowId: 'run-attempt-2', status: 'gave_up', label: 'attempt 2 (temperature 0.8)' },
];
const report = { status: 'fixed', attempts } as unknown as DebugReport;

/** A handle of a closed run; `status` null: its worker is gone, so its queries fail. */
function closedRun(status: RunStatusView | null): WorkflowHandle {
  return {
    workflowId: 'run',
    describe: async () => ({ status: { name: 'COMPLETED' } }),
    query: async (query: { name: string }) => {
      if (!status) throw new Error('no poller seen for task queue recently');
      return query.name === 'status' ? status : transcript;
    },
    result: async () => report,
  } as unknown as WorkflowHandle;
}

async function follow(
  handle: WorkflowHandle,
  options: { json?: boolean; tty?: boolean; queryClosed?: FollowOptions['queryClosed'] } = {},
): Promise<string> {
  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  }) as Writable & { isTTY?: boolean };
  out.isTTY = options.tty ?? false;
  await followRun(handle, { json: Boolean(options.json), pollMs: 1, out, queryClosed: options.queryClosed });
  return written;
}

test('a closed run shows its last status: the usage of its last iteration, its attempts with their labels', async () => {
  const output = await follow(closedRun(statusOf({ attempts })));
  assert.match(output, /── iteration 1 · 120 tokens · \$0\.5000 so far/);
  assert.match(output, /attempt 1 \(temperature 0\.2\): fixed \(run-attempt-1\)/);
  assert.match(output, /attempt 2 \(temperature 0\.8\): gave_up \(run-attempt-2\)/);
  assert.equal(output.match(/attempt 1 \(/g)?.length, 1, 'each attempt once');
});

test('a closed run in JSON: its last status is one line', async () => {
  const lines = (await follow(closedRun(statusOf({})), { json: true }))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const statuses = lines.filter((line) => line.type === 'status');
  assert.equal(statuses.length, 1);
  assert.equal(statuses[0].status.phase, 'done');
});

test('a run that closes while followed: its last status is shown too', async () => {
  const polls = [
    { closed: false, status: statusOf({ phase: 'thinking' }) },
    {
      closed: true,
      status: statusOf({
        phase: 'done',
        iteration: 2,
        tokens: { inputTokens: 300, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0 },
      }),
    },
  ];
  let poll = 0;
  const handle = {
    workflowId: 'run',
    describe: async () => ({
      status: { name: polls[Math.min(poll, polls.length - 1)]?.closed ? 'COMPLETED' : 'RUNNING' },
    }),
    query: async (query: { name: string }) => {
      const current = polls[Math.min(poll, polls.length - 1)];
      if (query.name === 'status') return current?.status;
      poll += 1;
      return transcript;
    },
    result: async () => report,
  } as unknown as WorkflowHandle;
  const lines = (await follow(handle, { json: true }))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(
    lines.filter((line) => line.type === 'status').map((line) => `${line.status.phase}/${line.status.iteration}`),
    ['thinking/1', 'done/2'],
  );
});

test('a run that closed while thinking (terminated): no thinking line, no wait or approval prompt on a terminal', async () => {
  const status = statusOf({
    phase: 'thinking',
    waitingFor: 'waiting for a worker serving the default model endpoint',
    awaitingApproval: { patch: '+fix', since: 1 },
  });
  const output = await follow(closedRun(status), { tty: true });
  assert.match(output, /── iteration 1 · 120 tokens/);
  assert.doesNotMatch(output, /the model is thinking/);
  assert.doesNotMatch(output, /waiting for a worker/);
  assert.doesNotMatch(output, /Awaiting approval/);
});

test('a closed run whose worker is gone: its attempts come from the report', async () => {
  const output = await follow(closedRun(null));
  assert.match(output, /attempt 1 of 2: fixed \(run-attempt-1\)/);
  assert.match(output, /attempt 2 of 2: gave_up \(run-attempt-2\)/);
});

test('a closed run that no worker answers is not queried (the server would hold the query for about 30 s): the report answers at once', async () => {
  let queries = 0;
  const handle = {
    workflowId: 'run',
    describe: async () => ({ status: { name: 'COMPLETED' }, taskQueue: 'debugger' }),
    query: async () => {
      queries += 1;
      throw new Error('not asked');
    },
    result: async () => report,
  } as unknown as WorkflowHandle;
  const askedOn: string[] = [];
  const output = await follow(handle, {
    queryClosed: async (taskQueue) => {
      askedOn.push(taskQueue);
      return null;
    },
  });
  assert.deepEqual(askedOn, ['debugger']);
  assert.equal(queries, 0);
  assert.match(output, /attempt 1 of 2: fixed \(run-attempt-1\)/);
});

test('a closed run that a worker answers: its queries go through queryClosed', async () => {
  const output = await follow(closedRun(statusOf({ attempts })), { queryClosed: (_taskQueue, query) => query() });
  assert.match(output, /── iteration 1 · 120 tokens · \$0\.5000 so far/);
  assert.match(output, /attempt 1 \(temperature 0\.2\): fixed \(run-attempt-1\)/);
});

/** A live run whose model call is writing: each poll's heartbeat details say more of the reply, then the run closes. */
function writingRun(tails: Array<{ tail: string; chars: number }>, retried = false): WorkflowHandle {
  let poll = 0;
  const closed = () => poll >= tails.length;
  return {
    workflowId: 'run',
    client: { options: { loadedDataConverter: { payloadConverter: defaultPayloadConverter } } },
    describe: async () => {
      const writing = tails[poll];
      return {
        status: { name: closed() ? 'COMPLETED' : 'RUNNING' },
        raw: {
          pendingActivities: writing
            ? [
                {
                  activityType: { name: 'callModel' },
                  // A retried call: its attempt started after the last heartbeat, which was its previous attempt's.
                  ...(retried ? { lastHeartbeatTime: { seconds: 100 }, lastStartedTime: { seconds: 101 } } : {}),
                  heartbeatDetails: {
                    payloads: [
                      defaultPayloadConverter.toPayload({
                        waitingForModel: true,
                        writing: { ...writing, thinking: false },
                      }),
                    ],
                  },
                },
              ]
            : [],
        },
      };
    },
    query: async (query: { name: string }) => {
      if (query.name === 'status') return statusOf({ phase: closed() ? 'done' : 'thinking' });
      poll += 1;
      return transcript;
    },
    result: async () => report,
  } as unknown as WorkflowHandle;
}

test('while the model writes, the end of what it has written so far: a line that grows on a terminal, `writing` lines in JSON', async () => {
  const tails = [
    { tail: 'Running', chars: 7 },
    { tail: 'Running', chars: 7 },
    { tail: 'Running the tests', chars: 17 },
  ];
  const lines = (await follow(writingRun(tails), { json: true }))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(
    lines.filter((line) => line.type === 'writing').map((line) => `${line.iteration}:${line.chars}:${line.tail}`),
    ['1:7:Running', '1:17:Running the tests'],
    'each new piece once',
  );
  const screen = await follow(writingRun([...tails, { tail: 'Running the tests first.', chars: 24 }]), { tty: true });
  assert.match(screen, /… iteration 1: writing \(\d+s\) · Running the tests\b/);

  // A retried call's heartbeat from its earlier attempt is not shown: that reply was not kept.
  const retried = await follow(writingRun(tails, true), { json: true });
  assert.doesNotMatch(retried, /"type":"writing"/);
});

test("what the repository and the model wrote cannot drive the terminal: escapes, a CR that hides a line's start and bidi overrides are shown, not obeyed", async () => {
  const hostile: TranscriptView = {
    version: 1,
    replyIterations: [1],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Fix the failing tests.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Done\u001b]52;c;ZWNobyBwd25lZA==\u0007 \u001b[2J' },
          { type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'ok.py\rEVIL.py' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'if admin\u202e } \u2066 {', is_error: false }],
      },
    ],
  };
  const handle = closedRun(statusOf({}));
  (handle as unknown as { query: (query: { name: string }) => Promise<unknown> }).query = async (query) =>
    query.name === 'status' ? statusOf({ lastThought: '\u001b[31mred' }) : hostile;
  const output = await follow(handle, { tty: true });
  // Our own colours (picocolors colours when CI is set) and the clearing of the transient line are the only escapes.
  // eslint-disable-next-line no-control-regex -- our own escapes
  const ours = /\u001b\[\d+m|\r\u001b\[2K/g;
  // eslint-disable-next-line no-control-regex -- no control character may get through
  assert.doesNotMatch(output.replace(ours, ''), /[\u0007\u001b\u202e\u2066]|\r(?!\n)/);
  assert.match(output, /Done␛\]52;c;ZWNobyBwd25lZA==␇ ␛\[2J/);
  assert.match(output, /ok\.py␍EVIL\.py/);
  assert.match(output, /if admin<U\+202E> } <U\+2066> \{/);

  const report = formatReport({
    ...({
      status: 'fixed',
      toolCalls: [],
      iterations: 1,
      durationMs: 1000,
      costUsd: 0.1,
      tokens: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    } as unknown as DebugReport),
    stopCondition: 'finish_verified',
    stopDetail: 'ok',
    rootCause: 'the loop\u001b[1A\u001b[2K stops short',
    patch: '--- a/x.py\r\n+++ b/x.py\r\n+a = 1\u202e',
  } as DebugReport);
  assert.match(report, /the loop␛\[1A␛\[2K stops short/);
  assert.match(report, /\+\+\+ b\/x\.py\r\n\+a = 1<U\+202E>/, 'a CRLF patch keeps its line ends');
});

test('the report of a run whose environment could not be made does not call it the sandbox image as it is', () => {
  const base = {
    toolCalls: [],
    iterations: 0,
    durationMs: 1000,
    costUsd: 0,
    tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    environment: null,
  } as unknown as DebugReport;
  const failed = formatReport({
    ...base,
    status: 'environment_error',
    stopCondition: 'environment_error',
    stopDetail: 'cargo: …',
  } as DebugReport);
  assert.doesNotMatch(failed, /Environment:/);
  const none = formatReport({
    ...base,
    status: 'no_failing_tests',
    stopCondition: 'no_failing_tests',
    stopDetail: 'ok',
  } as DebugReport);
  assert.match(none, /Environment:.*the sandbox image as it is \(no dependencies declared\)/);
});

test('the report says a baseline ran no tests, not that it passed and failed none', () => {
  const report = formatReport({
    toolCalls: [],
    iterations: 0,
    durationMs: 1000,
    costUsd: 0,
    tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    environment: null,
    status: 'environment_error',
    stopCondition: 'environment_error',
    stopDetail: 'the test command ran no tests: …',
    testsBefore: summarizeTestOutput('no tests ran in 0.01s\n', 5),
    testsAfter: null,
  } as unknown as DebugReport);
  // Plain, as a pipe gets it; CI=true colours it.
  assert.match(stripVTControlCharacters(report), /Tests: before no tests ran \(exit code 5\) → after not run/);
});
