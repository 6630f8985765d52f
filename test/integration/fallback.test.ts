// The fallback model: the API answers 529 (overloaded) to every request for the run's model, so
// after the set time the calls go to the fallback; the run ends fixed on it, and the report, the
// CLI and the Web UI (the activities' summaries) say which calls the fallback made.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture, scriptsByName } from '../../src/demo/fixtures.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, runCli } from '../support/cli.js';

let server: TestServer;
let fake: FakeAnthropicApi;

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({
    scripts: scriptsByName([await loadFixture('01_off_by_one')]),
    overloadedModels: ['claude-opus-4-6'],
  });
  await fake.start();
});
after(async () => {
  killCliProcesses();
  await fake?.stop();
  await server?.stop();
});

test('a primary model that keeps answering 529: after --fallback-after the calls go to --fallback-model, and the run ends fixed on it', async () => {
  const id = 'fallback-on-overload';
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const args = ['--model', 'claude-opus-4-6', '--fallback-model', 'claude-haiku-4-5', '--fallback-after', '3'];
  const run = await runCli(server, ['run', 'fixtures/01_off_by_one', '--id', id, ...args, '--json'], env);
  assert.equal(run.code, 0, run.output);
  const line = run.stdout.split('\n').find((candidate) => candidate.startsWith('{"type":"report"'));
  const report = (JSON.parse(line as string) as { report: DebugReport }).report;
  assert.equal(report.status, 'fixed', report.stopDetail);

  // The primary was asked until it had failed for 3 seconds (Temporal's retries 2 s then 4 s apart),
  // then never again: every later call went straight to the fallback.
  const primary = fake.requests.filter((request) => request.body.model === 'claude-opus-4-6');
  const fallback = fake.requests.filter((request) => request.body.model === 'claude-haiku-4-5');
  assert.ok(primary.length >= 2 && primary.length <= 3, `${primary.length} requests to the primary`);
  assert.ok(primary.every((request) => request.status === 529));
  assert.ok(fallback.length >= 3 && fallback.every((request) => request.status === 200));
  assert.ok(
    (primary.at(-1)?.receivedAt ?? 0) - (primary[0]?.receivedAt ?? 0) >= 1_500,
    'the primary was retried first',
  );
  assert.ok((fallback[0]?.receivedAt ?? 0) > (primary.at(-1)?.receivedAt ?? 0));

  // The report names the fallback and what it cost; every call was the fallback's.
  assert.equal(report.model, 'claude-haiku-4-5');
  const usage = report.modelUsage ?? [];
  assert.equal(usage.length, 1);
  assert.equal(usage[0]?.model, 'claude-haiku-4-5');
  assert.equal(usage[0]?.fallback, true);
  assert.equal(usage[0]?.calls, report.iterations);
  assert.deepEqual(usage[0]?.iterations, [[1, report.iterations]]);
  assert.equal(usage[0]?.costUsd, report.costUsd);
  const text = await runCli(server, ['result', id], env);
  assert.match(text.output, new RegExp(`claude-haiku-4-5 \\(fallback\\): ${report.iterations} calls, iterations 1–`));

  // The Web UI: the first call's details say the fallback answered, and later calls' summaries name it.
  const history = await server.client.workflow.getHandle(id).fetchHistory();
  const summaries = (history.events ?? []).flatMap((event) => {
    const data = event.userMetadata?.summary?.data;
    return data ? [JSON.parse(Buffer.from(data).toString()) as string] : [];
  });
  assert.ok(summaries.includes('iteration 2 · model (fallback claude-haiku-4-5)'), summaries.join('\n'));
  assert.ok(summaries.includes('iteration 1 · model'));
  const results = (history.events ?? []).flatMap((event) =>
    (event.activityTaskCompletedEventAttributes?.result?.payloads ?? []).map((payload) =>
      Buffer.from(payload.data ?? []).toString(),
    ),
  );
  assert.ok(
    results.some((result) =>
      result.includes('"fallbackFrom":{"from":"claude-opus-4-6","reason":"the primary model was overloaded (529)'),
    ),
    'the first call’s result says the fallback answered it, and why',
  );
  assert.deepEqual(fake.rejected, []);
});

test('a primary model that keeps answering 429 (rate limited) falls back the same way, and the reason says so', async () => {
  const limited = new FakeAnthropicApi({
    scripts: scriptsByName([await loadFixture('01_off_by_one')]),
    rateLimitedModels: ['claude-opus-4-6'],
    retryAfterSeconds: 1,
  });
  await limited.start();
  try {
    const id = 'fallback-on-rate-limit';
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: limited.url };
    const args = ['--model', 'claude-opus-4-6', '--fallback-model', 'claude-haiku-4-5', '--fallback-after', '2'];
    const run = await runCli(server, ['run', 'fixtures/01_off_by_one', '--id', id, ...args, '--json'], env);
    assert.equal(run.code, 0, run.output);
    const line = run.stdout.split('\n').find((candidate) => candidate.startsWith('{"type":"report"'));
    const report = (JSON.parse(line as string) as { report: DebugReport }).report;
    assert.equal(report.status, 'fixed', report.stopDetail);
    const primary = limited.requests.filter((request) => request.body.model === 'claude-opus-4-6');
    assert.ok(
      primary.length >= 2 && primary.every((request) => request.status === 429),
      `${primary.length} to the primary`,
    );
    assert.deepEqual(
      report.modelUsage?.map((entry) => [entry.model, entry.fallback]),
      [['claude-haiku-4-5', true]],
    );
    const history = await server.client.workflow.getHandle(id).fetchHistory();
    const results = (history.events ?? []).flatMap((event) =>
      (event.activityTaskCompletedEventAttributes?.result?.payloads ?? []).map((payload) =>
        Buffer.from(payload.data ?? []).toString(),
      ),
    );
    assert.ok(
      results.some((result) => result.includes('"reason":"the primary model was rate limited (429)')),
      'the first call’s result says the primary was rate limited',
    );
    assert.deepEqual(limited.rejected, []);
  } finally {
    await limited.stop();
  }
});
