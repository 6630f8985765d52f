import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  appendExchange,
  appendUserText,
  repairConversation,
  toolCallsOf,
  userText,
  type Message,
} from '../../src/agent/conversation.js';
import { compactConversation } from '../../src/agent/compaction.js';
import { validateRequest } from '../../src/demo/fakeApiRules.js';

const assistantWithCalls = (...ids: string[]) => ({
  role: 'assistant' as const,
  content: [
    { type: 'text' as const, text: 'thinking' },
    ...ids.map((id) => ({ type: 'tool_use' as const, id, name: 'read_file', input: { path: id } })),
  ],
});

test('every tool_use gets exactly one result, in call order, before any text', () => {
  const conversation: Message[] = [userText('task')];
  appendExchange(
    conversation,
    assistantWithCalls('a', 'b', 'c'),
    [
      { type: 'tool_result', tool_use_id: 'c', content: 'C' },
      { type: 'tool_result', tool_use_id: 'a', content: 'A' },
    ],
    ['a hint'],
  );
  const reply = conversation[2];
  assert.equal(reply?.role, 'user');
  const blocks = reply?.content ?? [];
  assert.deepEqual(
    blocks.map((block) =>
      block.type === 'tool_result' ? `${block.tool_use_id}:${block.is_error ?? false}` : block.type,
    ),
    ['a:false', 'b:true', 'c:false', 'text'],
  );
});

test('an interrupted exchange is repaired with is_error results, never sent half', () => {
  const conversation: Message[] = [userText('task'), assistantWithCalls('x', 'y')];
  assert.ok(repairConversation(conversation, 'the worker crashed') > 0);
  const results = conversation[2]?.content ?? [];
  assert.equal(results.length, 2);
  assert.ok(results.every((block) => block.type === 'tool_result' && block.is_error));
  assert.equal(repairConversation(conversation, 'again'), 0, 'a complete conversation is left alone');
});

test('text for the model joins a trailing user message so roles keep alternating', () => {
  const conversation: Message[] = [userText('task')];
  appendUserText(conversation, 'hint');
  assert.equal(conversation.length, 1);
  conversation.push(assistantWithCalls());
  appendUserText(conversation, 'nudge');
  assert.equal(conversation.length, 3);
});

test('compaction shortens old observations once and keeps tool pairs intact', () => {
  const conversation: Message[] = [userText('task')];
  for (let index = 0; index < 6; index++) {
    appendExchange(conversation, assistantWithCalls(`t${index}`), [
      { type: 'tool_result', tool_use_id: `t${index}`, content: 'x'.repeat(5000) },
    ]);
  }
  const before = JSON.stringify(conversation).length;
  const compacted = compactConversation(conversation, 4);
  assert.equal(compacted, 4);
  assert.ok(JSON.stringify(conversation).length < before / 2);
  assert.equal(compactConversation(conversation, 4), 0, 'a compacted observation is not compacted again');
  const calls = conversation.flatMap((message) => (message.role === 'assistant' ? toolCallsOf(message.content) : []));
  const results = conversation.flatMap((message) => message.content.filter((block) => block.type === 'tool_result'));
  assert.equal(calls.length, results.length);
});

/** The request the conversation would make, as the strict fake judges it. */
function rejection(conversation: Message[]): string | null {
  return validateRequest({ model: 'm', max_tokens: 100, messages: conversation }, { countTokens: false });
}

test('a conversation stored with an empty assistant message (older code) is repaired to a valid request', () => {
  const conversation: Message[] = [
    userText('task'),
    assistantWithCalls('a'),
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'A' }] },
    { role: 'assistant', content: [] },
    userText('You replied without calling a tool.'),
  ];
  assert.match(rejection(conversation) ?? '', /all messages must have non-empty content/);
  assert.ok(repairConversation(conversation, 'stored') > 0);
  assert.equal(rejection(conversation), null);
  assert.deepEqual(
    conversation.map((message) => message.role),
    ['user', 'assistant', 'user'],
  );
  assert.deepEqual(
    conversation[2]?.content.map((block) => block.type),
    ['tool_result', 'text'],
    'the joined user message keeps its result first',
  );
  assert.equal(repairConversation(conversation, 'again'), 0, 'a valid conversation is left alone');
});

test('whitespace-only text, orphan and duplicate results, and a paused turn ending in whitespace are repaired', () => {
  const conversation: Message[] = [
    userText('task'),
    {
      role: 'assistant',
      content: [
        { type: 'text', text: '\n\n' },
        { type: 'tool_use', id: 'a', name: 'read_file', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'note' },
        { type: 'tool_result', tool_use_id: 'zzz', content: 'orphan' },
        { type: 'tool_result', tool_use_id: 'a', content: 'A' },
        { type: 'tool_result', tool_use_id: 'a', content: 'A again' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Let me think…  \n' }] },
  ];
  assert.ok(rejection(conversation));
  repairConversation(conversation, 'stored');
  assert.equal(rejection(conversation), null);
  assert.deepEqual(
    conversation[2]?.content.map((block) =>
      block.type === 'tool_result' ? block.content : block.type === 'text' ? block.text : block.type,
    ),
    ['A', 'note'],
  );
  const last = conversation[3]?.content[0];
  assert.equal(last?.type === 'text' && last.text, 'Let me think…');
});

test('two user messages in a row, or an assistant turn with unanswered calls at the end, become valid', () => {
  const conversation: Message[] = [userText('task'), userText('hint'), assistantWithCalls('x')];
  repairConversation(conversation, 'interrupted');
  assert.equal(rejection(conversation), null);
  assert.equal(conversation.length, 3);
  assert.deepEqual(
    conversation[0]?.content.map((block) => block.type),
    ['text', 'text'],
  );
});
