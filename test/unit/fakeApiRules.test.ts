// The fake Messages API refuses what the real one refuses (with the real 400 wording where
// known), so that a request our code builds wrongly fails in tests, not in front of a user.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { thinkingKey, validateRequest } from '../../src/demo/fakeApiRules.js';

type Body = Record<string, unknown>;
const task = { role: 'user', content: [{ type: 'text', text: 'task' }] };
const callA = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Reading.' },
    { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a' } },
  ],
};
const resultA = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' }] };
const body = (messages: unknown[], extra: Body = {}): Body => ({
  model: 'claude',
  max_tokens: 4096,
  messages,
  ...extra,
});
const check = (request: Body, issuedThinking?: Set<string>) =>
  validateRequest(request, { countTokens: false, issuedThinking });

test('a well-formed tool-use conversation is accepted', () => {
  assert.equal(check(body([task, callA, resultA])), null);
});

test('empty messages and blank text blocks are refused, except an empty final assistant message', () => {
  assert.match(
    check(
      body([task, { role: 'assistant', content: [] }, { role: 'user', content: [{ type: 'text', text: 'go on' }] }]),
    ) ?? '',
    /messages\.1: all messages must have non-empty content except for the optional final assistant message/,
  );
  assert.match(
    check(body([task, { role: 'assistant', content: [{ type: 'text', text: '\n\n' }, callA.content[1]] }, resultA])) ??
      '',
    /messages\.1\.content\.0\.text: text content blocks must contain non-whitespace text/,
  );
  assert.match(
    check(body([{ role: 'user', content: [{ type: 'text', text: '' }] }])) ?? '',
    /text content blocks must be non-empty/,
  );
  assert.equal(check(body([task, { role: 'assistant', content: [] }])), null);
  assert.match(
    check(body([task, { role: 'assistant', content: [{ type: 'text', text: 'Let me see \n' }] }])) ?? '',
    /final assistant content cannot end with trailing whitespace/,
  );
});

test('roles alternate and start with the user; block types belong to their role', () => {
  assert.match(check(body([task, task])) ?? '', /roles must alternate/);
  assert.match(check(body([callA, resultA])) ?? '', /first message must use the "user" role/);
  assert.match(
    check(body([{ role: 'user', content: [{ type: 'tool_use', id: 'x', name: 'n', input: {} }] }])) ?? '',
    /Input tag 'tool_use'/,
  );
});

test('tool_use and tool_result: paired, results first, no strangers or duplicates, unique ids, object inputs', () => {
  assert.match(
    check(body([task, callA, { role: 'user', content: [{ type: 'text', text: 'hm' }] }])) ?? '',
    /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_a/,
  );
  assert.match(
    check(body([task, callA, { role: 'user', content: [{ type: 'text', text: 'hm' }, resultA.content[0]] }])) ?? '',
    /without `tool_result` blocks immediately after/,
  );
  assert.match(
    check(
      body([
        task,
        callA,
        { role: 'user', content: [resultA.content[0], { type: 'tool_result', tool_use_id: 'toolu_zz', content: '?' }] },
      ]),
    ) ?? '',
    /unexpected `tool_use_id`/,
  );
  assert.match(
    check(body([task, callA, { role: 'user', content: [resultA.content[0], resultA.content[0]] }])) ?? '',
    /single result/,
  );
  assert.match(check(body([task, callA, resultA, callA, resultA])) ?? '', /`tool_use` ids must be unique/);
  assert.match(
    check(body([task, { role: 'assistant', content: [{ type: 'tool_use', id: 'bad id', name: 'n', input: {} }] }])) ??
      '',
    /id: String should match pattern/,
  );
  assert.match(
    check(
      body([
        task,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'n', input: 'text' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: '' }] },
      ]),
    ) ?? '',
    /input: Input should be a valid dictionary/,
  );
});

test('cache breakpoints: at most four, ephemeral, 1h before 5m, not on empty text or thinking', () => {
  const marked = (ttl?: string) => ({
    type: 'text',
    text: 'x',
    cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) },
  });
  const system = (...blocks: unknown[]) => ({ system: blocks });
  assert.match(
    check(body([task], system(marked(), marked(), marked(), marked(), marked()))) ?? '',
    /A maximum of 4 blocks with cache_control may be provided. Found 5/,
  );
  assert.equal(check(body([task], system(marked('1h'), marked('5m'), marked()))), null);
  assert.match(
    check(body([task], system(marked('5m'), marked('1h')))) ?? '',
    /ttl='1h' cache_control block must not come after a ttl='5m'/,
  );
  assert.match(
    check(body([task], system({ type: 'text', text: 'x', cache_control: { type: 'persistent' } }))) ?? '',
    /cache_control.type: Input should be 'ephemeral'/,
  );
  assert.match(
    check(body([task], system({ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '2h' } }))) ?? '',
    /ttl: Input should be '5m' or '1h'/,
  );
  assert.match(
    check(body([task], system({ type: 'text', text: '', cache_control: { type: 'ephemeral' } }))) ?? '',
    /cache_control cannot be set for empty text blocks/,
  );
  const thinking = { type: 'thinking', thinking: 't', signature: 's', cache_control: { type: 'ephemeral' } };
  assert.match(
    check(
      body([
        task,
        { role: 'assistant', content: [thinking, { type: 'text', text: 'ok' }] },
        { role: 'user', content: [{ type: 'text', text: 'next' }] },
      ]),
    ) ?? '',
    /thinking.cache_control/,
  );
});

test('extended thinking: budget, temperature, top_k, forced tools, the tool cycle starts with thinking, signatures unchanged', () => {
  const thinking = (budget: number, extra: Body = {}) =>
    body([task], { thinking: { type: 'enabled', budget_tokens: budget }, ...extra });
  assert.match(check(thinking(512)) ?? '', /budget_tokens: Input should be greater than or equal to 1024/);
  assert.match(check(thinking(4096)) ?? '', /`max_tokens` must be greater than `thinking.budget_tokens`/);
  assert.match(
    check(thinking(2048, { temperature: 0.2 })) ?? '',
    /`temperature` may only be set to 1 when thinking is enabled/,
  );
  assert.match(check(thinking(2048, { top_k: 5 })) ?? '', /`top_k` must be unset/);
  assert.match(check(thinking(2048, { tool_choice: { type: 'any' } })) ?? '', /tool_choice forces tool use/);

  const block = { type: 'thinking', thinking: 'The bound is off by one.', signature: 'c2ln' };
  const issued = new Set([thinkingKey(block)]);
  const withThinking = { role: 'assistant', content: [block, ...callA.content] };
  const enabled = { thinking: { type: 'enabled', budget_tokens: 2048 } };
  assert.equal(check(body([task, withThinking, resultA], enabled), issued), null);
  assert.match(
    check(body([task, callA, resultA], enabled), issued) ?? '',
    /Expected `thinking` or `redacted_thinking`, but found `text`/,
  );
  const changed = {
    role: 'assistant',
    content: [{ ...block, thinking: 'The bound is off by two.' }, ...callA.content],
  };
  assert.match(check(body([task, changed, resultA], enabled), issued) ?? '', /Invalid `signature` in `thinking` block/);
  assert.equal(check(body([task, callA, resultA])), null, 'without thinking, no thinking block is needed');
});
