// `watch` of a closed run: the run's last status is shown as for a live run (iteration usage,
// attempts with their labels, the JSON status line); only what is true of a live run alone is not.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugReport } from '../../src/agent/report.js';
import type { RunStatusView } from '../../src/agent/runState.js';
import { followRun, type FollowOptions } from '../../src/cli/follow.js';
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
