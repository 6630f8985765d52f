// The model client reads a streamed reply from the SDK's raw event stream (src/model/streamedMessage.ts)
// instead of through the SDK's stream helper: the same events must make the same message, and
// fail the same way, as they do through that helper (fed here the same events); and a call whose
// signal is aborted while the reply streams in ends at once, over real HTTP from the fake API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type Anthropic from '@anthropic-ai/sdk';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream.js';
import { apiTools } from '../../src/agent/tools.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { createModelClient, requestModelTurn } from '../../src/model/anthropic.js';
import { classifyModelError } from '../../src/model/errors.js';
import { messageOfEvents } from '../../src/model/streamedMessage.js';

type Event = Anthropic.RawMessageStreamEvent;

async function* eventsOf(events: Event[]): AsyncIterable<Event> {
  for (const event of events) yield structuredClone(event);
}

/** What the SDK's stream helper makes of the same events (its final message, or its failure). */
async function throughSdkHelper(events: Event[]): Promise<Anthropic.Message> {
  const body = `${events.map((event) => JSON.stringify(event)).join('\n')}\n`;
  return MessageStream.fromReadableStream(new Response(body).body as ReadableStream).finalMessage();
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

/** The helper's message, less the field it adds for structured outputs (which the agent does not ask for). */
async function sdkMessage(events: Event[]): Promise<unknown> {
  const { parsed_output: _parsed, ...message } = (await throughSdkHelper(events)) as Anthropic.Message & {
    parsed_output?: unknown;
  };
  return plain(message);
}

const start: Event = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-fable-5',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 120, output_tokens: 1, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
  } as unknown as Anthropic.Message,
};

function delta(index: number, value: Record<string, unknown>): Event {
  return { type: 'content_block_delta', index, delta: value } as unknown as Event;
}

function blockStart(index: number, block: Record<string, unknown>): Event {
  return { type: 'content_block_start', index, content_block: block } as unknown as Event;
}

function end(stopReason: string, outputTokens: number): Event[] {
  return [
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    } as unknown as Event,
    { type: 'message_stop' },
  ];
}

test('a streamed reply of thinking, text in pieces and a tool call in pieces of JSON makes the message the SDK helper makes, and each piece is told as it comes', async () => {
  const events: Event[] = [
    start,
    blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
    delta(0, { type: 'thinking_delta', thinking: 'The loop stops ' }),
    delta(0, { type: 'thinking_delta', thinking: 'one short.' }),
    delta(0, { type: 'signature_delta', signature: 'sig-1' }),
    { type: 'content_block_stop', index: 0 },
    blockStart(1, { type: 'text', text: '' }),
    delta(1, { type: 'text_delta', text: 'Reading ' }),
    delta(1, { type: 'text_delta', text: 'the file.' }),
    { type: 'content_block_stop', index: 1 },
    blockStart(2, { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} }),
    delta(2, { type: 'input_json_delta', partial_json: '' }),
    delta(2, { type: 'input_json_delta', partial_json: '{"path": "src/fi' }),
    delta(2, { type: 'input_json_delta', partial_json: 'nd_max.py"}' }),
    { type: 'content_block_stop', index: 2 },
    blockStart(3, { type: 'tool_use', id: 'toolu_2', name: 'list_files', input: {} }),
    { type: 'content_block_stop', index: 3 },
    ...end('tool_use', 42),
  ];
  const told: Array<[string, boolean]> = [];
  const message = await messageOfEvents(eventsOf(events), (soFar, thinking) => told.push([soFar, thinking]));
  assert.deepEqual(plain(message), await sdkMessage(events));
  assert.deepEqual(
    message.content.map((block) => (block.type === 'tool_use' ? block.input : block.type)),
    ['thinking', 'text', { path: 'src/find_max.py' }, {}],
  );
  assert.equal(message.usage.output_tokens, 42);
  assert.equal(message.usage.cache_read_input_tokens, 100);
  assert.deepEqual(told, [
    ['The loop stops ', true],
    ['The loop stops one short.', true],
    ['Reading ', false],
    ['Reading the file.', false],
  ]);
});

test('a tool call cut off by the output budget keeps what of its input came whole, as the SDK helper does', async () => {
  const events: Event[] = [
    start,
    blockStart(0, { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: {} }),
    delta(0, { type: 'input_json_delta', partial_json: '{"path": "a.py", "content": "def f(' }),
    ...end('max_tokens', 8192),
  ];
  const message = await messageOfEvents(eventsOf(events));
  assert.deepEqual(plain(message), await sdkMessage(events));
  assert.equal(message.stop_reason, 'max_tokens');
  // (the SDK's partial JSON parser drops a string that did not end)
  assert.deepEqual(message.content[0]?.type === 'tool_use' && message.content[0].input, { path: 'a.py' });
});

test('a stream that ends before its message does, or sends nothing, fails as through the SDK helper', async () => {
  const cut: Event[] = [start, blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta', text: 'Re' })];
  for (const events of [cut, []]) {
    const ours = await messageOfEvents(eventsOf(events)).then(
      () => null,
      (error: Error) => error,
    );
    const sdk = await throughSdkHelper(events).then(
      () => null,
      (error: Error) => error,
    );
    assert.ok(ours && sdk, 'both fail');
    assert.equal(ours.constructor.name, sdk.constructor.name);
    assert.equal(ours.message, sdk.message);
  }
});

test('a model call whose signal is aborted while the reply streams in ends at once, as a cancellation (not a model failure)', async () => {
  const thought = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ');
  const api = new FakeAnthropicApi({
    scripts: { responses: [{ thought, tool_calls: [{ name: 'run_tests', input: {} }] }] },
    latencyMs: 20_000,
  });
  await api.start();
  try {
    const client = createModelClient({ apiKey: 'test-key', baseURL: api.url, timeoutMs: 60_000 });
    const controller = new AbortController();
    let pieces = 0;
    const failed = await requestModelTurn(
      client,
      {
        model: 'claude-fable-5',
        maxOutputTokens: 1024,
        system: 'You debug.',
        tools: apiTools({ allowCommands: false }),
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Repository: any\nFix the failing test.' }] }],
      },
      {
        signal: controller.signal,
        onWriting: () => {
          pieces += 1;
          controller.abort();
        },
      },
    ).then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(failed instanceof APIUserAbortError, String(failed));
    assert.equal(classifyModelError(failed), null);
    assert.equal(pieces, 1, 'nothing more was read once aborted');
    assert.equal(api.requests[0]?.stream, true);
  } finally {
    await api.stop();
  }
});
