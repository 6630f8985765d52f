// The model call's conversation as a delta from the run's previous call, and the worker's cache
// that turns it back into the whole conversation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  appendExchange,
  appendUserText,
  conversationBytes,
  userText,
  type AssistantMessage,
  type Message,
} from '../../src/agent/conversation.js';
import {
  conversationDelta,
  messageMark,
  sentCharacters,
  type SentConversation,
} from '../../src/agent/conversationDelta.js';
import { ConversationCache } from '../../src/model/conversationCache.js';

const assistant = (id: string): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'list_files', input: {} }],
});
const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: `files for ${id}` });
const copy = (messages: Message[]) => structuredClone(messages);

/** Replays the workflow's side and the activity's side of a sequence of calls, as the worker would. */
function callAll(conversations: Message[][], cache = new ConversationCache()) {
  let sent: SentConversation | null = null;
  return conversations.map((conversation) => {
    const next = conversationDelta(sent, conversation);
    sent = next.sent;
    const rebuilt = cache.rebuild('run-1', next.delta);
    if (rebuilt) cache.remember('run-1', next.delta.sequence, rebuilt);
    return { delta: next.delta, rebuilt };
  });
}

test('each call carries only the messages added since the previous one, and the cache rebuilds the whole conversation', () => {
  const conversation: Message[] = [userText('fix the tests')];
  const snapshots: Message[][] = [copy(conversation)];
  for (const id of ['a', 'b', 'c']) {
    appendExchange(conversation, assistant(id), [result(id)]);
    snapshots.push(copy(conversation));
  }
  const calls = callAll(snapshots);
  assert.deepEqual(
    calls.map((call) => [call.delta.basedOn, call.delta.from, call.delta.messages.length]),
    [
      [0, 0, 1],
      [1, 1, 2],
      [2, 3, 2],
      [3, 5, 2],
    ],
  );
  calls.forEach((call, index) => assert.deepEqual(call.rebuilt, snapshots[index]));
});

test('a message changed after it was sent (a hint joining the last user message) is sent again', () => {
  const conversation: Message[] = [userText('fix the tests')];
  appendExchange(conversation, assistant('a'), [result('a')]);
  const first = copy(conversation);
  appendUserText(conversation, 'look at the loop bounds');
  const calls = callAll([first, copy(conversation)]);
  assert.equal(calls[1]?.delta.from, 2);
  assert.deepEqual(calls[1]?.rebuilt, conversation);
});

test('a conversation changed from its first message on (compaction of everything) is sent whole', () => {
  const calls = callAll([[userText('one')], [userText('one, compacted')]]);
  assert.deepEqual([calls[1]?.delta.basedOn, calls[1]?.delta.from], [0, 0]);
  assert.deepEqual(calls[1]?.rebuilt, [userText('one, compacted')]);
});

test('a worker that did not see the basis (another worker, a restart) gets null, so it reads the transcript query', () => {
  const conversation: Message[] = [userText('fix the tests')];
  const first = conversationDelta(null, conversation);
  appendExchange(conversation, assistant('a'), [result('a')]);
  const second = conversationDelta(first.sent, conversation);
  assert.equal(new ConversationCache().rebuild('run-1', second.delta), null);
  const cache = new ConversationCache();
  cache.remember('another-run', 1, [userText('fix the tests')]);
  assert.equal(cache.rebuild('run-1', second.delta), null);
});

test('a retry of the latest call still finds its basis; older calls are dropped, and the oldest runs beyond the limit', () => {
  const cache = new ConversationCache(2);
  for (const sequence of [1, 2, 3]) cache.remember('run-1', sequence, [userText(`call ${sequence}`)]);
  const delta = (basedOn: number) => ({ sequence: basedOn + 1, basedOn, from: 1, messages: [userText('new')] });
  assert.ok(cache.rebuild('run-1', delta(2)), 'the basis of a retried call 3');
  assert.ok(cache.rebuild('run-1', delta(3)));
  assert.equal(cache.rebuild('run-1', delta(1)), null);
  cache.remember('run-2', 1, [userText('x')]);
  cache.remember('run-3', 1, [userText('y')]);
  assert.equal(cache.size, 2);
  assert.equal(cache.rebuild('run-1', delta(3)), null);
});

test('a basis shorter than the delta says is not used', () => {
  const cache = new ConversationCache();
  cache.remember('run-1', 1, [userText('only one')]);
  assert.equal(cache.rebuild('run-1', { sequence: 2, basedOn: 1, from: 3, messages: [] }), null);
});

test('message marks differ for different content and agree for equal content', () => {
  assert.equal(messageMark(userText('a')), messageMark(userText('a')));
  assert.notEqual(messageMark(userText('a')), messageMark(userText('b')));
  assert.notEqual(messageMark(userText('ab')), messageMark(userText('ba')));
});

test("the size a call carried, read from its marks, is the conversation's size as conversationBytes counts it", () => {
  const conversation: Message[] = [];
  assert.equal(sentCharacters(conversationDelta(null, conversation).sent), conversationBytes(conversation));
  conversation.push(userText('fix the bug: “é” 😀'));
  assert.equal(sentCharacters(conversationDelta(null, conversation).sent), conversationBytes(conversation));
  for (const id of ['a', 'b', 'c']) {
    conversation.push(assistant(id), { role: 'user', content: [result(id)] });
    assert.equal(sentCharacters(conversationDelta(null, conversation).sent), conversationBytes(conversation));
  }
});
