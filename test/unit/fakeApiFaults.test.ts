// The fake API's random faults with a cap: a request body already failed `maxPerRequest` times is
// answered, so the fixtures' outcome under 30% faults cannot turn on chance (over real HTTP).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';

test('random faults: the same request body fails at most maxPerRequest times, another body fails afresh', async () => {
  const fake = new FakeAnthropicApi({
    scripts: { responses: [{ thought: 'done' }] },
    faults: { rate: 1, kinds: ['server_error'], maxPerRequest: 2 },
  });
  const url = await fake.start();
  const ask = async (text: string) => {
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: text }] }),
    });
    await response.arrayBuffer();
    return response.status;
  };
  try {
    assert.deepEqual([await ask('first'), await ask('first')], [500, 500]);
    assert.equal(await ask('first'), 200, 'the third try of the same body is answered');
    assert.equal(await ask('second'), 500);
    assert.deepEqual(
      fake.requests.map((request) => request.fault),
      ['server_error', 'server_error', null, 'server_error'],
    );
  } finally {
    await fake.stop();
  }
});
