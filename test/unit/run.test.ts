// The run core (src/agent/run.ts, reply.ts, turn.ts, compaction.ts): the state, what a reply
// means for the loop, tool outcomes, the finish call, budgets, the report and the status view,
// without Temporal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyUsage } from '../../src/agent/budgets.js';
import type { AssistantBlock, Message, ToolCall } from '../../src/agent/conversation.js';
import { parseDebugInput } from '../../src/agent/input.js';
import { maxToolCallRecords } from '../../src/agent/payloads.js';
import * as prompts from '../../src/agent/prompts.js';
import { compactIfContextIsFull } from '../../src/agent/compaction.js';
import type { ModelReply } from '../../src/agent/modelReply.js';
import { decideReply } from '../../src/agent/reply.js';
import {
  beginIteration,
  buildReport,
  sandboxSettings,
  progressLine,
  raiseBudgets,
  recordModelCall,
  replyIterationsOf,
  resumeEarlierState,
  seedConversation,
  startRunState,
  statusView,
  stopBeforeNextCall,
  stopWhileWaiting,
  testsAfterRun,
} from '../../src/agent/run.js';
import {
  applyToolOutcome,
  groupCalls,
  judgeFix,
  maxGuardrailRefusals,
  observeTurn,
  reviewVerdict,
  type RunnableCall,
  type Turn,
} from '../../src/agent/turn.js';
import type { RunState } from '../../src/agent/runState.js';
import { iterationOfReply } from '../../src/cli/showRun.js';
import type { TestSummary } from '../../src/agent/testResults.js';

const input = parseDebugInput({ repo: '/repos/stats', budgets: { maxIterations: 5 } });
const failing: TestSummary = {
  passed: 3,
  failed: 1,
  skipped: 0,
  failing: ['test_mean'],
  exitCode: 1,
  timedOut: false,
  recognized: true,
};
const passing: TestSummary = {
  passed: 4,
  failed: 0,
  skipped: 0,
  failing: [],
  exitCode: 0,
  timedOut: false,
  recognized: true,
};

/** A run past its baseline, with the task as its first message. */
function begunRun(): RunState {
  const state = startRunState(input, undefined, 1_000);
  state.snapshot = {
    snapshotId: 'snap',
    repositoryName: 'stats',
    fileCount: 3,
    totalBytes: 100,
    testCommand: 'pytest',
  };
  state.workspace = { snapshotId: 'snap', mutations: [], digest: 'snap' };
  state.baseline = failing;
  seedConversation(state, input);
  return state;
}

function reply(content: AssistantBlock[], over: Partial<ModelReply> = {}): ModelReply {
  return {
    content,
    stopReason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    usage: { ...emptyUsage(), inputTokens: 100, outputTokens: 20 },
    costUsd: 0.01,
    budgetCostUsd: 0.01,
    priceNote: null,
    model: 'claude-test',
    answeredBy: 'Claude (claude-test)',
    requestId: null,
    oversizedToolInputs: [],
    ...over,
  };
}

const use = (id: string, name: string, input: unknown): AssistantBlock => ({ type: 'tool_use', id, name, input });
const outcome = (content: string, over: object = {}) => ({
  content,
  isError: false,
  mutations: [],
  digest: 'snap',
  ...over,
});

function act(state: RunState, content: AssistantBlock[], over: Partial<ModelReply> = {}): Turn {
  beginIteration(state);
  const step = decideReply(state, reply(content, over), input);
  assert.equal(step.next, 'act');
  return (step as { turn: Turn }).turn;
}

test('a new run starts from its input; a carried state counts one more workflow run; the task is the first message once', () => {
  const state = startRunState(parseDebugInput({ repo: '/r', model: 'm', resumeFrom: 'earlier' }), undefined, 42);
  assert.equal(state.startedAt, 42);
  assert.equal(state.model, 'm');
  assert.equal(state.resumedFrom, 'earlier');
  assert.equal(state.workflowRuns, 1);
  assert.equal(startRunState(input, state, 99).workflowRuns, 2);
  assert.equal(startRunState(input, state, 99).startedAt, 42);

  const begun = begunRun();
  assert.equal(begun.conversation.length, 1);
  assert.match(JSON.stringify(begun.conversation[0]), /Repository: stats/);
  seedConversation(begun, input);
  assert.equal(begun.conversation.length, 1);
});

test('resuming takes over the earlier run: conversation, workspace, usage; the clock goes on; the model is told', () => {
  const earlier = begunRun();
  earlier.iteration = 4;
  earlier.conversationVersion = 2;
  earlier.tokens = { ...emptyUsage(), inputTokens: 500 };
  earlier.workflowRuns = 2;
  // The earlier run ended between a reply and its results: that half exchange is repaired.
  earlier.conversation.push({ role: 'assistant', content: [use('t1', 'read_file', { path: 'a.py' })] });
  const state = startRunState(parseDebugInput({ repo: '/r', resumeFrom: 'run-1' }), undefined, 10_000);
  resumeEarlierState(state, earlier, { workflowId: 'run-1', elapsedMs: 3_000, now: 10_000 });
  assert.equal(state.startedAt, 7_000);
  assert.equal(state.iteration, 4);
  assert.equal(state.tokens.inputTokens, 500);
  assert.equal(state.workflowRuns, 3);
  assert.equal(state.resumedFrom, 'run-1');
  assert.equal(state.conversationVersion, 4, 'one more for the adoption, one for the repair');
  const last = state.conversation[state.conversation.length - 1] as Message;
  assert.equal(last.role, 'user');
  assert.match(JSON.stringify(last), /continues the earlier run run-1/);
  assert.match(JSON.stringify(last), /tool_result/);
});

test('each iteration brings the user’s hints; a model call is counted in tokens, cost and the next request’s estimate', () => {
  const state = begunRun();
  state.pendingHints.push('look at mean()');
  beginIteration(state);
  assert.equal(state.iteration, 1);
  assert.deepEqual(state.pendingHints, []);
  assert.match(JSON.stringify(state.conversation.at(-1)), /Hint from the user who started this run: look at mean\(\)/);
  recordModelCall(state, reply([{ type: 'text', text: 'hm' }]));
  recordModelCall(state, reply([{ type: 'text', text: 'hm' }]));
  assert.equal(state.modelCalls, 2);
  assert.equal(state.tokens.inputTokens, 200);
  assert.equal(state.costUsd, 0.02);
  assert.equal(state.lastRequestTokens, 100);
  assert.equal(state.answeredBy, 'Claude (claude-test)');
});

test('a reply with tools: refused calls are answered at once, reads are grouped, mutations run alone, finish is kept apart', () => {
  const state = begunRun();
  const turn = act(state, [
    { type: 'text', text: 'Reading both files.' },
    use('r1', 'read_file', { path: 'a.py' }),
    use('r2', 'read_file', { path: 'b.py' }),
    use('bad', 'teleport', {}),
    use('e1', 'edit_file', { path: 'a.py', old_string: 'x', new_string: 'y' }),
    use('r3', 'list_files', {}),
    use('f1', 'finish', { root_cause: 'mean divides by n-1', summary: 'divide by n' }),
  ]);
  assert.equal(state.lastThought, 'Reading both files.');
  assert.deepEqual(
    turn.groups.map((group) => group.map((call) => call.id)),
    [['r1', 'r2'], ['e1'], ['r3']],
  );
  assert.equal(turn.finish?.id, 'f1');
  assert.equal(state.rootCause, 'mean divides by n-1');
  assert.equal(state.fixSummary, 'divide by n');
  assert.equal(turn.results.get('bad')?.is_error, true);
  assert.deepEqual(
    state.toolCalls.map((call) => call.name),
    ['teleport'],
  );
});

test('tool outcomes grow the workspace log; all results are appended in the reply’s order as one unit, finish last', () => {
  const state = begunRun();
  const turn = act(state, [
    use('e1', 'edit_file', { path: 'a.py', old_string: 'x', new_string: 'y' }),
    use('r1', 'read_file', { path: 'a.py' }),
    use('f1', 'finish', { root_cause: 'x' }),
  ]);
  const [[edit], [read]] = turn.groups as [[RunnableCall], [RunnableCall]];
  // Outcomes may arrive in any order within a turn: the results still follow the reply.
  applyToolOutcome(state, turn, read, outcome('print(y)', { digest: 'd2' }));
  applyToolOutcome(
    state,
    turn,
    edit,
    outcome('edited', {
      mutations: [{ path: 'a.py', after: { kind: 'file', blob: 'b1', executable: false }, toolUseId: 'e1' }],
      digest: 'd2',
    }),
  );
  assert.equal(state.workspace?.mutations.length, 1);
  assert.equal(state.workspace?.digest, 'd2');
  const before = state.conversation.length;
  const stop = observeTurn(state, turn, reviewVerdict(judgeFix(failing, passing)));
  assert.deepEqual(stop, { condition: 'finish_verified', detail: 'finish was called and the fix was verified' });
  assert.equal(state.conversation.length, before + 2);
  const results = (state.conversation.at(-1) as Message).content;
  assert.deepEqual(
    results.map((block) => (block.type === 'tool_result' ? block.tool_use_id : block.type)),
    ['e1', 'r1', 'f1'],
  );
  assert.deepEqual(results[2], {
    type: 'tool_result',
    tool_use_id: 'f1',
    content: prompts.fixVerified,
    is_error: false,
  });
  assert.deepEqual(
    state.toolCalls.map((call) => [call.name, call.isError]),
    [
      ['read_file', false],
      ['edit_file', false],
      ['finish', false],
    ],
  );
});

test('a fix that is not verified goes back to the model as an error, and the run goes on', () => {
  const state = begunRun();
  const turn = act(state, [use('f1', 'finish', { root_cause: 'x' })]);
  const verdict = judgeFix(failing, failing);
  assert.equal(verdict.fixed, false);
  assert.equal(observeTurn(state, turn, reviewVerdict(verdict)), null);
  const result = (state.conversation.at(-1) as Message).content[0];
  assert.equal(result?.type === 'tool_result' && result.is_error, true);
  assert.match(JSON.stringify(result), /Your fix was not verified/);
});

test(`the run ends after ${maxGuardrailRefusals} refused test-file edits`, () => {
  const state = begunRun();
  for (let refusal = 1; refusal <= maxGuardrailRefusals; refusal++) {
    const turn = act(state, [use(`e${refusal}`, 'edit_file', { path: 'test_a.py', old_string: 'x', new_string: 'y' })]);
    applyToolOutcome(
      state,
      turn,
      (turn.groups[0] as RunnableCall[])[0] as RunnableCall,
      outcome('refused', { isError: true, refusedBy: 'test-file-guardrail' }),
    );
    const stop = observeTurn(state, turn, null);
    assert.equal(stop?.condition ?? null, refusal < maxGuardrailRefusals ? null : 'guardrail');
  }
});

test('a paused turn is kept as the last message and merged with the reply that continues it', () => {
  const state = begunRun();
  beginIteration(state);
  assert.deepEqual(
    decideReply(state, reply([{ type: 'text', text: 'Let me think.' }], { stopReason: 'pause_turn' }), input),
    { next: 'think' },
  );
  assert.equal(state.conversation.at(-1)?.role, 'assistant');
  const turn = act(state, [use('r1', 'read_file', { path: 'a.py' })]);
  assert.deepEqual(turn.assistant.content, [
    { type: 'text', text: 'Let me think.' },
    use('r1', 'read_file', { path: 'a.py' }),
  ]);
  assert.equal(
    state.conversation.filter((message) => message.role === 'assistant').length,
    0,
    'the paused message was taken back',
  );
});

test('a reply cut off at max_tokens loses its unfinished tool call and asks for a shorter reply', () => {
  const state = begunRun();
  const turn = act(state, [use('r1', 'read_file', { path: 'a.py' }), use('w1', 'write_file', { path: 'a.py' })], {
    stopReason: 'max_tokens',
  });
  assert.deepEqual(
    turn.calls.map((call: ToolCall) => call.id),
    ['r1'],
  );
  assert.deepEqual(turn.notes, [prompts.askForShorterReply]);
});

test('text-only replies are nudged, then end the run; a refusal ends it; an overflow compacts or ends it', () => {
  const state = begunRun();
  for (let reply_ = 1; reply_ <= 3; reply_++) {
    beginIteration(state);
    assert.deepEqual(decideReply(state, reply([{ type: 'text', text: `thinking ${reply_}` }]), input), {
      next: 'think',
    });
  }
  beginIteration(state);
  const fourth = decideReply(state, reply([{ type: 'text', text: 'still thinking' }]), input);
  assert.equal(fourth.next === 'stop' && fourth.stop.condition, 'no_tool_calls');

  const refused = begunRun();
  const step = decideReply(refused, reply([], { stopReason: 'refusal' }), input);
  assert.equal(step.next === 'stop' && step.stop.condition, 'refusal');

  const tooLong = begunRun();
  const overflow = decideReply(tooLong, reply([], { stopReason: 'model_context_window_exceeded' }), input);
  assert.equal(
    overflow.next === 'stop' && overflow.stop.condition,
    'context_exhausted',
    'nothing old enough to shorten',
  );
});

test('budgets: a stop request comes first; a wait for a model worker spends no iteration and only the time budget counts', () => {
  const state = begunRun();
  state.iteration = 5;
  assert.equal(stopBeforeNextCall(state, 2_000)?.condition, 'max_iterations');
  assert.equal(stopWhileWaiting(state, 2_000), null);
  state.stopRequested = 'enough';
  assert.deepEqual(stopBeforeNextCall(state, 2_000), { condition: 'stop_signal', detail: 'enough' });
  assert.deepEqual(stopWhileWaiting(state, 2_000), { condition: 'stop_signal', detail: 'enough' });

  const running = begunRun();
  running.iteration = 5;
  raiseBudgets(running, input, {}, 2_000);
  assert.equal(running.budgets.maxIterations, 15);
  assert.deepEqual(running.pendingHints, [prompts.budgetRaised('10 more iterations')]);
  assert.equal(stopBeforeNextCall(running, 2_000), null);
});

test('budgets: the next request counts against a token budget; without one the conversation is not serialized for it', () => {
  let serialized = 0;
  const counted = (text: string) => ({
    role: 'user' as const,
    content: [{ type: 'text' as const, text }],
    toJSON() {
      serialized += 1;
      return { role: 'user', content: [{ type: 'text', text }] };
    },
  });
  const unbudgeted = begunRun();
  unbudgeted.conversation.push(counted('x'.repeat(40_000)));
  assert.equal(stopBeforeNextCall(unbudgeted, 2_000), null);
  assert.equal(serialized, 0, 'no token budget: nothing reads the size of the next request');

  const budgeted = begunRun();
  budgeted.budgets.maxTokens = 5_000;
  budgeted.conversation.push(counted('x'.repeat(40_000)));
  assert.equal(stopBeforeNextCall(budgeted, 2_000)?.condition, 'max_tokens', 'about 10,000 new tokens over 5,000');
  assert.equal(serialized, 1);
  budgeted.budgets.maxTokens = 50_000;
  assert.equal(stopBeforeNextCall(budgeted, 2_000), null);
});

test('the context: old tool-call records are dropped beyond their limit, and a conversation that fits is left as it is', () => {
  const state = begunRun();
  const records = maxToolCallRecords + 100;
  for (let index = 0; index < records; index++)
    state.toolCalls.push({ iteration: 1, name: 'read_file', description: 'read_file a.py', isError: false });
  assert.equal(compactIfContextIsFull(state, input), null);
  assert.ok(state.toolCalls.length <= maxToolCallRecords);
  assert.equal((state.earlierToolCalls ?? 0) + state.toolCalls.length, records);
  assert.equal(state.compactions, 0);
});

test('the end: the tests after the run are the last suite run on this workspace, or run again; the report and status view', () => {
  const state = begunRun();
  state.iteration = 3;
  state.rootCause = 'off by one';
  const stop = { condition: 'finish_verified' as const, detail: 'verified' };
  // Stopped while it waited for a sandbox host: no sandbox ever held the workspace, nothing to run.
  assert.equal(testsAfterRun(state, stop), 'none');
  state.sandbox = { sandboxId: 'sandbox-w', taskQueue: 'q/host/h', host: 'h' };
  assert.equal(testsAfterRun(state, stop), 'run');
  state.lastSuiteRun = { digest: 'snap', summary: passing };
  assert.deepEqual(testsAfterRun(state, stop), { known: passing });
  assert.equal(testsAfterRun(state, { condition: 'no_failing_tests', detail: '' }), 'none');

  const report = buildReport(state, input, {
    workflowId: 'w',
    stop,
    testsAfter: passing,
    patch: { patch: 'diff', fullPatch: null },
    problems: [],
    now: 4_000,
  });
  assert.equal(report.status, 'fixed');
  assert.equal(report.iterations, 3);
  assert.equal(report.durationMs, 3_000);
  assert.equal(report.repository, '/repos/stats');
  assert.equal(report.rootCause, 'off by one');

  const view = statusView(state, input, { now: 2_500, awaitingApproval: null, waitingFor: null });
  assert.equal(view.iteration, 3);
  assert.equal(view.maxIterations, 5);
  assert.equal(view.elapsedMs, 1_500);
  assert.equal(view.modelEndpoint, 'default');
  assert.match(progressLine(state, 'thinking'), /^phase: thinking · iteration 3\/5 · 0 tokens · \$0\.0000$/);
  assert.deepEqual(groupCalls([]), []);
});

test('a run that ends unfixed because its suite ran out of memory names it in the report; a fixed run does not', () => {
  const state = begunRun();
  const outOfMemory = {
    ...passing,
    exitCode: 137,
    recognized: false,
    outOfMemory: { how: 'killed' as const, limitMb: 512 },
  };
  const end = (condition: 'max_iterations' | 'finish_verified') => ({
    workflowId: 'w',
    stop: { condition, detail: '' },
    testsAfter: outOfMemory,
    patch: { patch: '', fullPatch: null },
    problems: [],
    now: 4_000,
  });
  assert.deepEqual(buildReport(state, input, end('max_iterations')).problems, [
    'the test run ran out of memory (512 MB): the kernel killed a process of it (exit 137); raise it with --memory (run, start), sandbox.memoryMb in the run input, or "sandbox": {"memoryMb": 2048} in durable-debugger.json',
  ]);
  assert.deepEqual(buildReport(state, input, end('finish_verified')).problems, []);
  // The limits the run's sandbox gets: the input's, raised by the repository's file.
  state.snapshot = { ...(state.snapshot as NonNullable<typeof state.snapshot>), sandboxLimits: { memoryMb: 4096 } };
  assert.equal(sandboxSettings(state, input).limits.memoryMb, 4096);
});

test('each assistant message keeps the iteration it was written in: a paused turn spans two, a compaction retry spends one', () => {
  const state = begunRun();
  beginIteration(state);
  decideReply(state, reply([{ type: 'text', text: 'Let me think.' }], { stopReason: 'pause_turn' }), input);
  assert.deepEqual(replyIterationsOf(state), [1]);
  const turn = act(state, [use('r1', 'read_file', { path: 'a.py' })]);
  observeTurn(state, turn, null);
  assert.deepEqual(
    replyIterationsOf(state),
    [2],
    'the paused message and its continuation are one reply, of iteration 2',
  );
  beginIteration(state);
  state.replyIterations = undefined;
  assert.equal(replyIterationsOf(state), null, 'a state from older code does not know them');
  state.replyIterations = [2];
  decideReply(state, reply([{ type: 'text', text: 'Done reading.' }]), input);
  assert.deepEqual(replyIterationsOf(state), [2, 3]);
  // The follower shows these numbers, not a count of the replies.
  const messages = state.conversation;
  const lastReply = messages
    .map((message, index) => (message.role === 'assistant' ? index : -1))
    .filter((index) => index >= 0);
  assert.deepEqual(
    lastReply.map((index) => iterationOfReply(messages, index, replyIterationsOf(state))),
    [2, 3],
  );
  assert.deepEqual(
    lastReply.map((index) => iterationOfReply(messages, index, null)),
    [1, 2],
  );
});
