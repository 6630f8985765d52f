// The bounds that keep every payload of a run under Temporal's 2 MB limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitConversationToBudget } from '../../src/agent/compaction.js';
import { toolCallsOf, userText, type AssistantMessage, type Message } from '../../src/agent/conversation.js';
import { parseDebugInput } from '../../src/agent/input.js';
import { dropOldestRecords, exceedsBytes, jsonBytes, patchPreview, utf8Bytes } from '../../src/agent/payloads.js';

function exchange(index: number, options: { thinking?: number; result?: number; input?: number } = {}): Message[] {
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: [
      ...(options.thinking
        ? [{ type: 'thinking' as const, thinking: 't'.repeat(options.thinking), signature: `sig${index}` }]
        : []),
      { type: 'text', text: `step ${index}` },
      {
        type: 'tool_use',
        id: `call${index}`,
        name: 'write_file',
        input: { path: `f${index}`, content: 'c'.repeat(options.input ?? 10) },
      },
    ],
  };
  return [
    assistant,
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `call${index}`, content: 'r'.repeat(options.result ?? 10) }],
    },
  ];
}

/** Every tool_use has its result in the next message, roles alternate, and no message is empty. */
function assertValid(conversation: Message[]): void {
  conversation.forEach((message, index) => {
    assert.ok(message.content.length > 0, `message ${index} is empty`);
    if (index > 0) assert.notEqual(message.role, conversation[index - 1]?.role, `roles alternate at ${index}`);
    if (message.role !== 'assistant') return;
    const next = conversation[index + 1];
    const results = next?.content.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])) ?? [];
    assert.deepEqual(
      results,
      toolCallsOf(message.content).map((call) => call.id),
    );
  });
}

test('UTF-8 bytes are counted as Temporal stores them', () => {
  assert.equal(utf8Bytes('abc'), 3);
  assert.equal(utf8Bytes('é'), 2);
  assert.equal(utf8Bytes('’'), 3);
  assert.equal(utf8Bytes('😀'), 4);
  assert.equal(utf8Bytes('é😀x'), Buffer.byteLength('é😀x'));
  assert.equal(jsonBytes({ text: 'ü' }), Buffer.byteLength(JSON.stringify({ text: 'ü' })));
});

test("UTF-8 bytes match Node's count for text of every kind (ASCII runs, accents, emoji, lone surrogates)", () => {
  const pieces = [
    'plain ascii ',
    'é',
    '’',
    '😀',
    '\ud800',
    '\udc00',
    'x',
    '\n',
    '字',
    '\u007f',
    '\u0080',
    '\u07ff',
    '\u0800',
    '\uffff',
  ];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let sample = 0; sample < 300; sample++) {
    const text = Array.from(
      { length: Math.floor(random() * 30) },
      () => pieces[Math.floor(random() * pieces.length)],
    ).join('');
    assert.equal(utf8Bytes(text), Buffer.byteLength(text), JSON.stringify(text));
  }
  assert.equal(utf8Bytes(''), 0);
  assert.equal(utf8Bytes('a'.repeat(100_000) + 'é'), 100_002);
});

test('a conversation under its budget is left as it is', () => {
  const conversation = [userText('task'), ...exchange(1), ...exchange(2)];
  const copy = structuredClone(conversation);
  assert.equal(fitConversationToBudget(conversation, 100_000), 0);
  assert.deepEqual(conversation, copy);
});

test('old thinking goes before recent observations; the last assistant message keeps its thinking', () => {
  // Ten exchanges with 50 KB of thinking each and small results: only the thinking can make room.
  const conversation = [
    userText('task'),
    ...Array.from({ length: 10 }, (_, index) => exchange(index, { thinking: 50_000 })).flat(),
  ];
  const changed = fitConversationToBudget(conversation, 100_000);
  assert.ok(changed >= 9);
  assert.ok(jsonBytes(conversation) <= 100_000);
  const withThinking = conversation.flatMap((message, index) =>
    message.content.some((block) => block.type === 'thinking') ? [index] : [],
  );
  assert.deepEqual(withThinking, [conversation.length - 2], 'only the last assistant message keeps its thinking');
  const kept = conversation[conversation.length - 2]?.content[0];
  assert.deepEqual(
    kept,
    { type: 'thinking', thinking: 't'.repeat(50_000), signature: 'sig9' },
    'unchanged, signature and all',
  );
  assertValid(conversation);
});

test('over 2 MB of observations, recent ones included, come under the budget with every tool pair intact', () => {
  // Three exchanges whose results are 900 KB each: old-observation compaction alone keeps the last six messages whole.
  const conversation = [userText('task'), ...[1, 2, 3].flatMap((index) => exchange(index, { result: 900_000 }))];
  assert.ok(jsonBytes(conversation) > 2_000_000);
  fitConversationToBudget(conversation, 1_000_000);
  assert.ok(jsonBytes(conversation) <= 1_000_000, `${jsonBytes(conversation)} bytes`);
  assertValid(conversation);
  assert.equal((conversation[0]?.content[0] as { text: string }).text, 'task', 'the task stays');
  const newest = conversation[conversation.length - 1]?.content[0] as { content: string };
  assert.equal(newest.content.length, 900_000, 'the newest observation is kept once the rest made room');
});

test('large inputs of earlier tool calls are emptied; the last call keeps its input', () => {
  const conversation = [userText('task'), ...[1, 2, 3, 4].flatMap((index) => exchange(index, { input: 200_000 }))];
  fitConversationToBudget(conversation, 300_000);
  assert.ok(jsonBytes(conversation) <= 300_000);
  const inputs = conversation.flatMap((message) =>
    toolCallsOf(message.role === 'assistant' ? message.content : []).map((call) => jsonBytes(call.input)),
  );
  assert.ok(
    inputs.slice(0, 3).every((bytes) => bytes < 200),
    `earlier inputs emptied: ${inputs}`,
  );
  assert.ok(inputs[3]! > 200_000, 'the last call keeps its input');
  assertValid(conversation);
});

test('an assistant message that had only thinking keeps a text block', () => {
  const conversation: Message[] = [
    userText('task'),
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'x'.repeat(10_000), signature: 's' }] },
    userText('go on'),
    { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
  ];
  fitConversationToBudget(conversation, 1_000);
  assert.equal(conversation[1]?.content.length, 1);
  assert.equal(conversation[1]?.content[0]?.type, 'text');
});

test('contextWindowTokens has an upper bound, with a message that says what to give', () => {
  assert.equal(parseDebugInput({ repo: '/x', contextWindowTokens: 1_000_000 }).contextWindowTokens, 1_000_000);
  assert.throws(
    () => parseDebugInput({ repo: '/x', contextWindowTokens: 10_000_000 }),
    /contextWindowTokens: at most 1000000 \(the largest Claude context window\)/,
  );
});

test('a patch preview keeps whole lines and says how much is left out and where the rest is', () => {
  const patch = Array.from({ length: 100 }, (_, index) => `+line ${index}`).join('\n') + '\n';
  const preview = patchPreview(patch, 50, 'see the store');
  const lines = preview.split('\n');
  assert.deepEqual(lines.slice(0, 5), ['+line 0', '+line 1', '+line 2', '+line 3', '+line 4']);
  assert.match(
    preview,
    /\[\.\.\. \d+ more bytes of this patch are not shown: it is too large for the report; see the store\]\n$/,
  );
  assert.ok(utf8Bytes(preview) < 200);
});

test('a very long run keeps its newest tool-call records and counts the rest', () => {
  const records = Array.from({ length: 2_500 }, (_, index) => ({ iteration: index }));
  assert.equal(dropOldestRecords(records, 2_000), 500);
  assert.equal(records.length, 2_000);
  assert.equal(records[0]?.iteration, 500);
  assert.equal(dropOldestRecords(records, 2_000), 0);
});

test('exceedsBytes agrees with counting the bytes, on both sides of every bound (its length-only shortcuts included)', () => {
  for (const text of ['', 'a'.repeat(10), 'é'.repeat(5), '😀'.repeat(3), 'ab’😀é'.repeat(4), '字'.repeat(4)]) {
    const bytes = Buffer.byteLength(text);
    for (let max = 0; max <= bytes * 3 + 2; max++)
      assert.equal(exceedsBytes(text, max), bytes > max, `${JSON.stringify(text)} against ${max}`);
  }
});
