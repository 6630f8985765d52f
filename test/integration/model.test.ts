// The model layer through the real SDK over HTTP: failures classified and retried (or not) as
// the API's semantics demand, streaming, thinking blocks, usage and cost, prompt caching. (Every
// fixture surviving 30% injected faults: the fixtures tests (test/support/fixtureSuite.ts) run them all that way.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DebugInputJson } from '../../src/agent/input.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { costOfCall, estimateCostUsd } from '../../src/model/pricing.js';
import { stripVTControlCharacters } from 'node:util';
import { formatReport } from '../../src/cli/printReport.js';
import type { FakeApiOptions } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { Script, ScriptStep } from '../../src/demo/script.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';

let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

async function run(
  options: {
    script?: Script;
    fake?: Partial<FakeApiOptions>;
    input?: Partial<DebugInputJson>;
    timeoutMs?: number;
    configOverrides?: Record<string, string>;
  } = {},
): Promise<{ report: DebugReport; worker: TestWorker }> {
  const worker = await startTestWorker(server, {
    fake: { scripts: { [fixture.name]: options.script ?? fixture.script }, ...options.fake },
    timeoutMs: options.timeoutMs,
    configOverrides: options.configOverrides,
  });
  try {
    const handle = await startDebugRun(server.client, {
      input: fixtureInput(fixture, options.input),
      taskQueue: worker.taskQueue,
    });
    return { report: (await handle.result()) as DebugReport, worker };
  } finally {
    await worker.stop();
  }
}

test('401 ends the run at once, without retries, saying what to do', async () => {
  const { report, worker } = await run({ fake: { faultPlan: () => 'unauthorized' } });
  assert.equal(report.status, 'error');
  assert.equal(report.stopCondition, 'model_error');
  assert.match(report.stopDetail, /ANTHROPIC_API_KEY rejected \(401\)/);
  assert.equal(worker.fake.requests.length, 1);
});

test('400 ends the run at once, without retries', async () => {
  const { report, worker } = await run({ fake: { faultPlan: () => 'bad_request' } });
  assert.equal(report.status, 'error');
  assert.match(report.stopDetail, /rejected as invalid \(400\)/);
  assert.equal(worker.fake.requests.length, 1);
});

test('429 with retry-after: 2 is retried after about 2 s, not sooner', async () => {
  const { report, worker } = await run({
    fake: { faultPlan: (number) => (number === 1 ? 'rate_limit' : null), retryAfterSeconds: 2 },
  });
  assert.equal(report.status, 'fixed');
  const [first, second] = worker.fake.requests;
  const gap = (second?.receivedAt ?? 0) - (first?.receivedAt ?? 0);
  assert.ok(gap >= 1_950 && gap < 6_000, `retried after ${gap} ms`);
});

test('529, 500, dropped connections and timeouts are retried until the run succeeds', async () => {
  const plan: Array<'overloaded' | 'server_error' | 'disconnect' | 'slow'> = [
    'overloaded',
    'server_error',
    'disconnect',
    'slow',
  ];
  const { report, worker } = await run({
    fake: { faultPlan: (number) => plan[number - 1] ?? null, slowMs: 3_000 },
    timeoutMs: 1_500,
  });
  assert.equal(report.status, 'fixed');
  assert.deepEqual(
    worker.fake.requests.slice(0, 4).map((request) => request.fault),
    plan,
  );
  assert.equal(worker.fake.requests.filter((request) => request.status === 200).length, 6);
});

test('replies stream in (for `watch`); with streaming off, only a large output budget streams them, as the SDK requires', async () => {
  const streamed = await run();
  assert.equal(streamed.report.status, 'fixed');
  assert.ok(streamed.worker.fake.requests.every((request) => request.body.stream === true));

  const off = { DURABLE_DEBUGGER_STREAM_REPLIES: 'off' };
  const whole = await run({ configOverrides: off });
  assert.equal(whole.report.status, 'fixed');
  assert.ok(whole.worker.fake.requests.every((request) => request.body.stream === undefined));
  const large = await run({ input: { maxOutputTokens: 32_000 }, configOverrides: off });
  assert.equal(large.report.status, 'fixed');
  assert.ok(large.worker.fake.requests.every((request) => request.body.stream === true));
});

test('an endpoint that answers streaming requests with whole messages: the run is fixed, asks it whole from then on, and the report says so once', async () => {
  const { report, worker } = await run({ fake: { wholeReplies: true } });
  assert.equal(report.status, 'fixed', report.stopDetail);
  const requests = worker.fake.requests;
  assert.ok(requests.length >= 2, `only ${requests.length} requests`);
  // The first call asked for a stream and got the whole message; the worker then stopped asking.
  assert.equal(requests[0]?.body.stream, true);
  assert.ok(
    requests.slice(1).every((request) => request.body.stream === undefined),
    requests.map((request) => String(request.body.stream)).join(' '),
  );
  assert.match(report.streamNote ?? '', /not streamed/);
  const printed = stripVTControlCharacters(formatReport(report));
  assert.equal(printed.match(/not streamed/g)?.length, 1, printed);

  // Streaming off is the user's choice: whole replies asked for, nothing to say about them.
  const off = await run({ fake: { wholeReplies: true }, configOverrides: { DURABLE_DEBUGGER_STREAM_REPLIES: 'off' } });
  assert.equal(off.report.status, 'fixed', off.report.stopDetail);
  assert.ok(off.worker.fake.requests.every((request) => request.body.stream === undefined));
  assert.equal(off.report.streamNote, undefined);
});

test('thinking blocks are passed back to the API unchanged', async () => {
  const steps = fixture.script.responses as ScriptStep[];
  const thinking = {
    type: 'thinking',
    thinking: 'The maximum is last, so the loop bound matters.',
    signature: 'c2lnbmF0dXJlLTEyMw==',
  };
  const withThinking: ScriptStep = {
    content: [
      thinking,
      { type: 'text', text: 'Reading the code.' },
      { type: 'tool_use', id: 'toolu_think_1', name: 'read_file', input: { path: 'buggy_code.py' } },
    ],
    stop_reason: 'tool_use',
  };
  const script: Script = { responses: [steps[0] as ScriptStep, withThinking, ...steps.slice(3)] };
  const { report, worker } = await run({ script, input: { thinkingBudgetTokens: 2_048 } });
  assert.equal(report.status, 'fixed');
  const body = worker.fake.requests[2]?.body as {
    thinking?: unknown;
    messages: Array<{ role: string; content: unknown[] }>;
  };
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2_048 });
  assert.deepEqual(body.messages[3]?.content[0], thinking);
});

test('usage and cost in the report are the sums of what the API returned', async () => {
  const { report, worker } = await run({ input: { model: 'claude-sonnet-4-6' } });
  const answered = worker.fake.requests.filter((request) => request.usage);
  const sum = (pick: (usage: NonNullable<(typeof answered)[number]['usage']>) => number) =>
    answered.reduce((total, request) => total + pick(request.usage!), 0);
  const expected = {
    inputTokens: sum((usage) => usage.input_tokens),
    outputTokens: sum((usage) => usage.output_tokens),
    cacheReadTokens: sum((usage) => usage.cache_read_input_tokens),
    cacheWriteTokens: sum((usage) => usage.cache_creation_input_tokens),
  };
  assert.deepEqual(report.tokens, expected);
  const expectedCost = answered.reduce(
    (total, request) =>
      total +
      (estimateCostUsd('claude-sonnet-4-6', {
        inputTokens: request.usage!.input_tokens,
        outputTokens: request.usage!.output_tokens,
        cacheReadTokens: request.usage!.cache_read_input_tokens,
        cacheWriteTokens: request.usage!.cache_creation_input_tokens,
      }) ?? NaN),
    0,
  );
  assert.ok(Math.abs((report.costUsd ?? NaN) - expectedCost) < 1e-9, `${report.costUsd} vs ${expectedCost}`);
  assert.ok(expected.cacheReadTokens > 0, 'the prompt cache was used');
});

test('an unknown model has an unknown cost, not zero', async () => {
  const { report } = await run({ input: { model: 'claude-unreleased-9' } });
  assert.equal(report.status, 'fixed');
  assert.equal(report.costUsd, null);
});

test('a cost budget on a model with no listed price counts it at the highest listed price, says so, and stops the run', async () => {
  const read: ScriptStep = {
    thought: 'Looking again.',
    tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }],
  };
  const { report, worker } = await run({
    script: { responses: Array(25).fill(read) },
    input: { model: 'claude-unreleased-9', budgets: { maxCostUsd: 0.05 } },
  });
  assert.equal(report.stopCondition, 'max_cost');
  const conservative = worker.fake.requests
    .filter((request) => request.usage)
    .reduce(
      (total, request) =>
        total +
        costOfCall('claude-unreleased-9', 'claude-unreleased-9', {
          inputTokens: request.usage!.input_tokens,
          outputTokens: request.usage!.output_tokens,
          cacheReadTokens: request.usage!.cache_read_input_tokens,
          cacheWriteTokens: request.usage!.cache_creation_input_tokens,
        }).budgetCostUsd,
      0,
    );
  assert.ok(Math.abs((report.costUsd ?? NaN) - conservative) < 1e-9, `${report.costUsd} vs ${conservative}`);
  assert.ok((report.costUsd ?? 0) >= 0.05);
  assert.match(
    report.costNote ?? '',
    /claude-unreleased-9 has no listed price, so the cost budget counts it at the highest listed price \(\$10 input, \$50 output/,
  );
  // Colours are on under CI=true (picocolors), so compare the text a person reads.
  assert.match(stripVTControlCharacters(formatReport(report)), /Cost: claude-unreleased-9 has no listed price/);
});

test('a 20-iteration run is at least 90% cacheable from its third request on', async () => {
  const read: ScriptStep = {
    thought: 'Looking again.',
    tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }],
  };
  const steps = fixture.script.responses as ScriptStep[];
  const script: Script = { responses: [steps[0] as ScriptStep, ...Array(16).fill(read), ...steps.slice(3)] };
  const { report, worker } = await run({ script, input: { budgets: { maxIterations: 25 } } });
  assert.equal(report.status, 'fixed');
  assert.equal(worker.fake.requests.length, 20);
  const shares = worker.fake.requests.map((request) => request.cacheableShare);
  for (const [index, share] of shares.entries()) {
    if (index >= 2) assert.ok(share >= 0.9, `request ${index + 1} was only ${(share * 100).toFixed(1)}% cacheable`);
  }
  console.log(`cacheable share per request: ${shares.map((share) => `${Math.round(share * 100)}%`).join(' ')}`);
});
