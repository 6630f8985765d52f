// One path for a reply (src/agent/reply.ts): cleaned once where it arrives (cleanReply, in the
// API client), then decided once (decideReply) into the step the loop reads: stop, think, act.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { userText, type AssistantBlock, type Message, type StopReason } from '../../src/agent/conversation.js';
import { parseDebugInput } from '../../src/agent/input.js';
import * as prompts from '../../src/agent/prompts.js';
import { cleanReply, decideReply, maxTextOnlyRepliesInARow, maxThoughtCharacters } from '../../src/agent/reply.js';
import { startRunState } from '../../src/agent/run.js';
import type { RunState } from '../../src/agent/runState.js';
import { sortToolCalls } from '../../src/agent/turn.js';
import { projectRoot } from '../../src/config.js';
import { validateRequest } from '../../src/demo/fakeApiRules.js';

const call = (id: string, name = 'read_file', input: unknown = { path: 'a.py' }): AssistantBlock => ({
  type: 'tool_use',
  id,
  name,
  input,
});
const text = (value: string): AssistantBlock => ({ type: 'text', text: value });

/** A run whose conversation holds the task. */
function run(): RunState {
  const state = startRunState(parseDebugInput({ repo: '/repos/stats' }), undefined, 0);
  state.conversation.push(userText('task'));
  return state;
}

/** A raw reply as the loop gets it: cleaned by the API client, then decided. */
function decide(state: RunState, content: AssistantBlock[], stopReason: StopReason = 'end_turn') {
  return decideReply(state, { ...cleanReply(content), stopReason }, { allowCommands: false });
}

const assistants = (state: RunState) => state.conversation.filter((message) => message.role === 'assistant');

/** The request the conversation would make, as the strict fake judges it. */
function rejection(conversation: Message[]): string | null {
  return validateRequest({ model: 'm', max_tokens: 100, messages: conversation }, { countTokens: false });
}

test('empty and whitespace-only text blocks never enter the conversation', () => {
  assert.deepEqual(cleanReply([text('\n\n'), text(''), call('a')]).content, [call('a')]);
  const step = decide(run(), [text('\n\n'), call('a')], 'tool_use');
  assert.equal(step.next, 'act');
  assert.deepEqual(step.next === 'act' && step.turn.assistant.content, [call('a')]);
});

test('an empty reply is a reply without tool calls, and no assistant message is stored for it', () => {
  const state = run();
  assert.deepEqual(decide(state, []), { next: 'think' });
  assert.equal(state.conversation.length, 1, 'the nudge joins the last user message');
  assert.match(JSON.stringify(state.conversation[0]), /You replied without calling a tool/);
  assert.equal(rejection(state.conversation), null);
  const blank = run();
  decide(blank, [text('  ')]);
  assert.deepEqual(assistants(blank), []);
});

test(`text-only replies are nudged up to ${maxTextOnlyRepliesInARow} in a row; a tool call resets the count`, () => {
  const state = run();
  for (let reply = 1; reply <= maxTextOnlyRepliesInARow; reply++) {
    assert.deepEqual(decide(state, [text('I think it is fine.')]), { next: 'think' }, `reply ${reply}`);
    assert.equal(state.textOnlyRepliesInARow, reply);
  }
  const last = decide(state, [text('Still fine.')]);
  assert.equal(last.next === 'stop' && last.stop.condition, 'no_tool_calls');
  assert.equal(rejection(state.conversation), null);
  const acting = run();
  acting.textOnlyRepliesInARow = maxTextOnlyRepliesInARow;
  assert.equal(decide(acting, [call('a')], 'tool_use').next, 'act');
  assert.equal(acting.textOnlyRepliesInARow, 0);
});

test('max_tokens: the tool call being written is dropped, complete ones run, a shorter reply is asked for', () => {
  const step = decide(
    run(),
    [text('Reading and editing.'), call('a'), call('b', 'edit_file', { path: 'a.py' })],
    'max_tokens',
  );
  assert.equal(step.next, 'act');
  assert.deepEqual(step.next === 'act' && step.turn.calls.map((each) => each.id), ['a']);
  assert.deepEqual(step.next === 'act' && step.turn.notes, [prompts.askForShorterReply]);
  const onlyCut = run();
  assert.deepEqual(decide(onlyCut, [text('\n'), call('b', 'edit_file', { path: 'a.py' })], 'max_tokens'), {
    next: 'think',
  });
  assert.deepEqual(assistants(onlyCut), []);
  assert.match(JSON.stringify(onlyCut.conversation.at(-1)), /cut off/);
});

test('refusal stops the run and the refused turn is not stored', () => {
  const state = run();
  const step = decide(state, [text('I cannot help with that.')], 'refusal');
  assert.equal(step.next === 'stop' && step.stop.condition, 'refusal');
  assert.match(step.next === 'stop' ? step.stop.detail : '', /I cannot help with that/);
  assert.deepEqual(assistants(state), []);
});

test('pause_turn keeps the paused turn to continue; the next reply completes it', () => {
  const state = run();
  assert.deepEqual(decide(state, [text('Thinking about the loop…')], 'pause_turn'), { next: 'think' });
  assert.equal(state.conversation.at(-1)?.role, 'assistant');
  const completed = decide(state, [call('a')], 'tool_use');
  assert.deepEqual(completed.next === 'act' && completed.turn.assistant.content.map((block) => block.type), [
    'text',
    'tool_use',
  ]);
  assert.deepEqual(assistants(state), [], 'the paused message was taken back into the turn');
  const empty = run();
  decide(empty, [text('\n\n')], 'pause_turn');
  assert.deepEqual(assistants(empty), [], 'an empty paused turn is not stored');
  assert.equal(decide(run(), [call('a')], 'pause_turn').next, 'act', 'a paused turn that asks for tools is acted on');
});

test('a very long thought is stored bounded, head and tail kept', () => {
  const long = `START ${'x'.repeat(200_000)} END`;
  const [block] = cleanReply([text(long)]).content;
  assert.ok(block?.type === 'text' && block.text.length <= maxThoughtCharacters);
  assert.ok(block?.type === 'text' && block.text.startsWith('START') && block.text.endsWith('END'));
  assert.match(block?.type === 'text' ? block.text : '', /characters of this reply removed/);
  const state = run();
  decide(state, [text(long), call('a')], 'tool_use');
  assert.ok(state.lastThought.length <= maxThoughtCharacters);
  assert.deepEqual(cleanReply([block as AssistantBlock]).content, [block], 'shortening twice changes nothing');
});

test('a repeated tool_use id is dropped and an oversized input is emptied and named, once, by cleanReply', () => {
  const huge = { path: 'a.py', content: 'x'.repeat(2_000_000) };
  const cleaned = cleanReply([call('a'), call('a'), call('w', 'write_file', huge)]);
  assert.deepEqual(
    cleaned.content.map((block) => (block.type === 'tool_use' ? [block.id, block.input] : block.type)),
    [
      ['a', { path: 'a.py' }],
      ['w', {}],
    ],
  );
  assert.equal(cleaned.oversizedToolInputs.length, 1);
  assert.equal(cleaned.oversizedToolInputs[0]?.id, 'w');
  const step = decideReply(run(), { ...cleaned, stopReason: 'tool_use' }, { allowCommands: false });
  assert.match(step.next === 'act' ? String(step.turn.results.get('w')?.content) : '', /over the limit/);
});

test('thinking blocks are kept unchanged; a reply of thinking alone is not stored', () => {
  const thinking: AssistantBlock = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
  const step = decide(run(), [thinking, call('a')], 'tool_use');
  assert.deepEqual(step.next === 'act' && step.turn.assistant.content, [thinking, call('a')]);
  const alone = run();
  decide(alone, [thinking]);
  assert.deepEqual(assistants(alone), []);
});

test('a reply is cleaned in one place: the API client; the loop and the activity take it as it comes', () => {
  const sources = ['src', 'workflows', 'activities', 'bench'].flatMap((folder) =>
    typeScriptFiles(join(projectRoot, folder)),
  );
  const cleaners = sources
    .filter((file) => /\bcleanReply\(/.test(readFileSync(file, 'utf8')))
    .map((file) => relative(projectRoot, file));
  assert.deepEqual(cleaners.sort(), ['src/agent/reply.ts', 'src/model/anthropic.ts']);
});

function typeScriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? typeScriptFiles(join(folder, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(folder, entry.name)]
        : [],
  );
}

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
