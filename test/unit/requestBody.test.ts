import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from '../../src/agent/conversation.js';
import { apiTools } from '../../src/agent/tools.js';
import { buildRequestBody } from '../../src/model/anthropic.js';

const request = (messages: Message[]) => ({
  model: 'claude-sonnet-4-6',
  maxOutputTokens: 1000,
  system: 'system',
  tools: apiTools({ allowCommands: false }),
  messages,
});

test('a conversation that needs repair is repaired for the request and left as it was for its owner', () => {
  const conversation: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'task' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'a hint' },
        { type: 'text', text: '   ' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'call-1', name: 'list_files', input: { path: '.' } },
        { type: 'tool_use', id: 'call-2', name: 'read_file', input: { path: 'a.py' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call-2', content: 'file a.py' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Paused here   ' }] },
  ];
  const before = structuredClone(conversation);
  const body = buildRequestBody(request(conversation));
  assert.deepEqual(conversation, before);
  const messages = body.messages as unknown as Array<{ role: string; content: Array<Record<string, unknown>> }>;
  assert.deepEqual(
    messages.map((message) => message.role),
    ['user', 'assistant', 'user', 'assistant'],
  );
  assert.deepEqual(
    messages[0]?.content.map((block) => block.text),
    ['task', 'a hint'],
  );
  assert.deepEqual(
    messages[2]?.content.map((block) => [block.tool_use_id, block.is_error ?? false]),
    [
      ['call-1', true],
      ['call-2', false],
    ],
  );
  assert.equal(messages[3]?.content[0]?.text, 'Paused here');
  // The rolling cache breakpoints go on the request's copies only.
  assert.ok(messages[2]?.content.at(-1)?.cache_control);
  assert.equal(JSON.stringify(conversation).includes('cache_control'), false);
});
