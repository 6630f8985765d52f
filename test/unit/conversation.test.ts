import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendExchange, appendUserText, repairConversation, toolCallsOf, userText, type Message } from '../../src/agent/conversation.js';
import { compactConversation } from '../../src/agent/compaction.js';

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
    blocks.map((block) => (block.type === 'tool_result' ? `${block.tool_use_id}:${block.is_error ?? false}` : block.type)),
    ['a:false', 'b:true', 'c:false', 'text'],
  );
});

test('an interrupted exchange is repaired with is_error results, never sent half', () => {
  const conversation: Message[] = [userText('task'), assistantWithCalls('x', 'y')];
  assert.equal(repairConversation(conversation, 'the worker crashed'), 2);
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
    appendExchange(conversation, assistantWithCalls(`t${index}`), [{ type: 'tool_result', tool_use_id: `t${index}`, content: 'x'.repeat(5000) }]);
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
