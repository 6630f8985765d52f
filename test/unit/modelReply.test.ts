// One type for the model's reply: the API client returns a whole ModelReply (priced, with the
// model asked for and who answered), over HTTP from the fake Messages API through the real SDK.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ModelReply } from '../../src/agent/modelReply.js';
import { apiTools } from '../../src/agent/tools.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { createModelClient, requestModelTurn } from '../../src/model/anthropic.js';
import { costOfCall } from '../../src/model/pricing.js';

const api = new FakeAnthropicApi({
  scripts: { responses: [{ thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] }] },
});
before(() => api.start());
after(() => api.stop());

async function ask(model: string): Promise<ModelReply> {
  const client = createModelClient({ apiKey: 'test-key', baseURL: api.url, timeoutMs: 30_000 });
  return requestModelTurn(client, {
    model,
    maxOutputTokens: 1024,
    system: 'You debug.',
    tools: apiTools({ allowCommands: false }),
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Repository: any\nFix the failing test.' }] }],
  });
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
