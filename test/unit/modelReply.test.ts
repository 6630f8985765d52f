// One type for the model's reply: the API client returns a whole ModelReply (priced, with the
// model asked for and who answered), over HTTP from the fake Messages API through the real SDK.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ModelReply } from '../../src/agent/modelReply.js';
import { maxThoughtCharacters } from '../../src/agent/reply.js';
import { apiTools } from '../../src/agent/tools.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { createModelClient, requestModelTurn, type ModelRequest } from '../../src/model/anthropic.js';
import { classifyModelError } from '../../src/model/errors.js';
import { costOfCall } from '../../src/model/pricing.js';

const api = new FakeAnthropicApi({
  scripts: {
    any: { responses: [{ thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] }] },
    // A legal but odd reply: blank text around the calls, a huge thought, one id twice, an input over its limit.
    odd: {
      responses: [
        {
          content: [
            { type: 'text', text: '\n\n' },
            { type: 'text', text: `START ${'x'.repeat(100_000)} END` },
            { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.py' } },
            { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.py' } },
            {
              type: 'tool_use',
              id: 'toolu_2',
              name: 'write_file',
              input: { path: 'a.py', content: 'y'.repeat(300_000) },
            },
            { type: 'text', text: ' ' },
          ],
          stop_reason: 'tool_use',
        },
      ],
    },
  },
});
before(() => api.start());
after(() => api.stop());

/** The first model call of a run on `repository`. */
function firstTurn(model: string, repository = 'any'): ModelRequest {
  return {
    model,
    maxOutputTokens: 1024,
    system: 'You debug.',
    tools: apiTools({ allowCommands: false }),
    messages: [{ role: 'user', content: [{ type: 'text', text: `Repository: ${repository}\nFix the failing test.` }] }],
  };
}

async function ask(model: string, repository = 'any'): Promise<ModelReply> {
  const client = createModelClient({ apiKey: 'test-key', baseURL: api.url, timeoutMs: 30_000 });
  return requestModelTurn(client, firstTurn(model, repository));
}

test('the API client returns the whole reply: content, stop reason, usage, price, the model asked for and who answered', async () => {
  for (const model of ['claude-fable-5', 'claude-unreleased-9']) {
    const reply = await ask(model);
    assert.deepEqual(
      reply.content.map((block) => block.type),
      ['text', 'tool_use'],
    );
    assert.equal(reply.stopReason, 'tool_use');
    assert.ok(reply.usage.inputTokens > 0 && reply.usage.outputTokens > 0);
    assert.equal(reply.model, model);
    assert.equal(reply.answeredBy, `Claude (${model})`);
    const { costUsd, budgetCostUsd, priceNote } = costOfCall(model, model, reply.usage);
    assert.deepEqual(
      { costUsd: reply.costUsd, budgetCostUsd: reply.budgetCostUsd, priceNote: reply.priceNote },
      { costUsd, budgetCostUsd, priceNote },
    );
    assert.equal(reply.costUsd === null, model === 'claude-unreleased-9', 'priced by the list, when listed');
    assert.equal(typeof reply.requestId, 'string');
    assert.deepEqual(reply.oversizedToolInputs, []);
  }
});

test('the API client returns the reply clean, once for every caller: no blank text, a huge thought shortened, one block per id, an oversized input emptied and named', async () => {
  const reply = await ask('claude-fable-5', 'odd');
  assert.deepEqual(
    reply.content.map((block) => (block.type === 'tool_use' ? `${block.type} ${block.id}` : block.type)),
    ['text', 'tool_use toolu_1', 'tool_use toolu_2'],
  );
  const [thought] = reply.content;
  assert.ok(thought?.type === 'text' && thought.text.length <= maxThoughtCharacters);
  assert.ok(thought?.type === 'text' && thought.text.startsWith('START') && thought.text.endsWith('END'));
  assert.deepEqual(reply.content[2]?.type === 'tool_use' && reply.content[2].input, {});
  assert.deepEqual(
    reply.oversizedToolInputs.map((entry) => entry.id),
    ['toolu_2'],
  );
});

test('told what the reply says as it is written, the client streams it: the fake writes it in pieces over its latency, and the whole reply is the same as unstreamed', async () => {
  const thought = 'The loop stops one short of the end, so the last item is never compared with the maximum so far.';
  const paced = new FakeAnthropicApi({
    scripts: { responses: [{ thought, tool_calls: [{ name: 'run_tests', input: {} }] }] },
    latencyMs: 600,
  });
  await paced.start();
  try {
    const client = createModelClient({ apiKey: 'test-key', baseURL: paced.url, timeoutMs: 30_000 });
    const request = firstTurn('claude-fable-5');
    const seen: Array<{ text: string; at: number }> = [];
    const started = Date.now();
    const streamed = await requestModelTurn(client, request, {
      onWriting: (soFar) => seen.push({ text: soFar, at: Date.now() - started }),
    });
    const whole = await requestModelTurn(client, request);
    assert.deepEqual(
      paced.requests.map((each) => each.stream),
      [true, false],
    );
    assert.deepEqual(streamed.content, whole.content);
    assert.equal(streamed.usage.outputTokens, whole.usage.outputTokens); // (the second reads the first's cache)
    // Growing prefixes of the thought, the first long before the last.
    assert.ok(seen.length >= 4, `${seen.length} pieces`);
    for (const [index, each] of seen.entries()) {
      assert.ok(thought.startsWith(each.text));
      if (index > 0) assert.ok(each.text.length > (seen[index - 1]?.text.length ?? 0));
    }
    assert.equal(seen.at(-1)?.text, thought);
    assert.ok((seen.at(-1)?.at ?? 0) - (seen[0]?.at ?? 0) >= 300, 'the pieces came over the latency');
  } finally {
    await paced.stop();
  }
});

test('an overload that ends a streamed reply midway (an error event, no HTTP status) is classified as an overload, so it is retried and counts towards the fallback', async () => {
  const faulty = new FakeAnthropicApi({
    scripts: { responses: [{ thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] }] },
    faultPlan: () => 'overloaded_mid_stream',
  });
  await faulty.start();
  try {
    const client = createModelClient({ apiKey: 'test-key', baseURL: faulty.url, timeoutMs: 30_000 });
    const failed = await requestModelTurn(client, firstTurn('claude-fable-5'), { onWriting: () => undefined }).then(
      () => null,
      (error: unknown) => error,
    );
    assert.equal(faulty.requests[0]?.status, 200, 'the stream began');
    const failure = classifyModelError(failed);
    assert.equal(failure?.type, 'ModelOverloaded', String(failed));
    assert.equal(failure?.retryable, true);
  } finally {
    await faulty.stop();
  }
});
