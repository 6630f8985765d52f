import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AssistantBlock, AssistantMessage, Message } from '../../src/agent/conversation.js';
import { userText } from '../../src/agent/conversation.js';
import {
  appendReply,
  maxTextOnlyRepliesInARow,
  maxThoughtCharacters,
  planReply,
  sanitizeReply,
  sortToolCalls,
} from '../../src/agent/reply.js';
import { validateRequest } from '../../src/demo/fakeAnthropicApi.js';

const call = (id: string, name = 'read_file', input: unknown = { path: 'a.py' }): AssistantBlock => ({
  type: 'tool_use',
  id,
  name,
  input,
});
const text = (value: string): AssistantBlock => ({ type: 'text', text: value });
const plan = (
  content: AssistantBlock[],
  stopReason = 'end_turn',
  textOnlyRepliesInARow = 0,
  paused?: AssistantMessage,
) => planReply({ content, stopReason, textOnlyRepliesInARow, paused });

/** The request the conversation would make, as the strict fake judges it. */
function rejection(conversation: Message[]): string | null {
  return validateRequest({ model: 'm', max_tokens: 100, messages: conversation }, { countTokens: false });
}

test('empty and whitespace-only text blocks never enter the conversation', () => {
  assert.deepEqual(sanitizeReply([text('\n\n'), text(''), call('a')]), [call('a')]);
  const reply = plan([text('\n\n'), call('a')], 'tool_use');
  assert.equal(reply.next, 'act');
  assert.deepEqual(reply.assistant?.content, [call('a')]);
});

test('an empty reply is a reply without tool calls, and no assistant message is stored for it', () => {
  const reply = plan([]);
  assert.equal(reply.next, 'nudge');
  assert.equal(reply.assistant, null);
  const conversation: Message[] = [userText('task')];
  appendReply(conversation, reply.assistant, [], reply.next === 'nudge' ? reply.notes : []);
  assert.equal(conversation.length, 1, 'the nudge joins the last user message');
  assert.equal(rejection(conversation), null);
  assert.equal(plan([text('  ')]).assistant, null);
});

test(`text-only replies are nudged up to ${maxTextOnlyRepliesInARow} in a row; a tool call resets the count`, () => {
  let count = 0;
  for (let reply = 1; reply <= maxTextOnlyRepliesInARow; reply++) {
    const planned = plan([text('I think it is fine.')], 'end_turn', count);
    assert.equal(planned.next, 'nudge', `reply ${reply}`);
    count = planned.textOnlyRepliesInARow;
  }
  const last = plan([text('Still fine.')], 'end_turn', count);
  assert.equal(last.next, 'stop');
  assert.equal(last.next === 'stop' && last.stop.condition, 'no_tool_calls');
  assert.equal(plan([call('a')], 'tool_use', count).textOnlyRepliesInARow, 0);
});

test('max_tokens: the tool call being written is dropped, complete ones run, a shorter reply is asked for', () => {
  const reply = plan([text('Reading and editing.'), call('a'), call('b', 'edit_file', { path: 'a.py' })], 'max_tokens');
  assert.equal(reply.next, 'act');
  assert.deepEqual(reply.next === 'act' && reply.calls.map((each) => each.id), ['a']);
  assert.match(reply.next === 'act' ? reply.notes.join() : '', /cut off at the output token limit/);
  const onlyCut = plan([text('\n'), call('b', 'edit_file', { path: 'a.py' })], 'max_tokens');
  assert.equal(onlyCut.next, 'nudge');
  assert.equal(onlyCut.assistant, null);
  assert.match(onlyCut.next === 'nudge' ? onlyCut.notes.join() : '', /cut off/);
});

test('refusal stops the run and the refused turn is not stored', () => {
  const reply = plan([text('I cannot help with that.')], 'refusal');
  assert.equal(reply.next, 'stop');
  assert.equal(reply.assistant, null);
  assert.equal(reply.next === 'stop' && reply.stop.condition, 'refusal');
  assert.match(reply.next === 'stop' ? reply.stop.detail : '', /I cannot help with that/);
});

test('pause_turn keeps the paused turn to continue; the next reply completes it', () => {
  const paused = plan([text('Thinking about the loop… ')], 'pause_turn');
  assert.equal(paused.next, 'pause');
  const completed = plan([call('a')], 'tool_use', 0, paused.assistant ?? undefined);
  assert.deepEqual(
    completed.assistant?.content.map((block) => block.type),
    ['text', 'tool_use'],
  );
  assert.equal(plan([text('\n\n')], 'pause_turn').assistant, null, 'an empty paused turn is not stored');
  assert.equal(plan([call('a')], 'pause_turn').next, 'act', 'a paused turn that asks for tools is acted on');
});

test('a very long thought is stored bounded, head and tail kept', () => {
  const long = `START ${'x'.repeat(200_000)} END`;
  const [block] = sanitizeReply([text(long)]);
  assert.ok(block?.type === 'text' && block.text.length <= maxThoughtCharacters);
  assert.ok(block?.type === 'text' && block.text.startsWith('START') && block.text.endsWith('END'));
  assert.match(block?.type === 'text' ? block.text : '', /characters of this reply removed/);
  assert.ok(plan([text(long), call('a')], 'tool_use').thought.length <= maxThoughtCharacters);
  assert.deepEqual(sanitizeReply([block as AssistantBlock]), [block], 'shortening twice changes nothing');
});

test('thinking blocks are kept unchanged; a reply of thinking alone is not stored', () => {
  const thinking: AssistantBlock = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
  assert.deepEqual(plan([thinking, call('a')], 'tool_use').assistant?.content, [thinking, call('a')]);
  assert.equal(plan([thinking], 'end_turn').assistant, null);
});

test('tool calls: unknown tools, bad inputs and extra finish calls are refused; the first finish is verified after the others', () => {
  const sorted = sortToolCalls(
    [
      { id: 'f1', name: 'finish', input: { root_cause: 'first' } },
      { id: 'r', name: 'read_file', input: { path: 'a.py' } },
      { id: 'u', name: 'str_replace_based_edit_tool', input: {} },
      { id: 'bad', name: 'read_file', input: { file_path: 'a.py' } },
      { id: 'f2', name: 'finish', input: { root_cause: 'second' } },
      { id: 'big', name: 'edit_file', input: {} },
    ],
    { allowCommands: false, oversizedInputs: [{ id: 'big', bytes: 10_000_000 }] },
  );
  assert.deepEqual(
    sorted.runnable.map((each) => each.id),
    ['r'],
  );
  assert.equal(sorted.finish?.id, 'f1');
  assert.deepEqual(
    sorted.refused.map((each) => [each.call.id, each.error.split(/[.:]/)[0]]),
    [
      ['u', 'Unknown tool "str_replace_based_edit_tool"'],
      ['bad', 'Invalid input for read_file'],
      ['f2', 'finish was called more than once in one reply'],
      ['big', 'The input of this edit_file call was 10000000 bytes, over the limit of 262144'],
    ],
  );
  const invalidFirst = sortToolCalls(
    [
      { id: 'f1', name: 'finish', input: {} },
      { id: 'f2', name: 'finish', input: { root_cause: 'real' } },
    ],
    { allowCommands: false },
  );
  assert.equal(invalidFirst.finish?.id, 'f2', 'an invalid finish does not hide a valid one');
});
