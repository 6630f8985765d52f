// The ReAct loop's rules on the real dev server, with the real SDK talking to the fake API:
// stop conditions, stop reasons, parallel tool calls, signals, budgets and continue-as-new.
// Each scenario plays its own script against fixtures/01_off_by_one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { Budgets, DebugInputJson } from '../../src/agent/input.js';
import type { DebugReport } from '../../src/agent/report.js';
import { maxTextOnlyRepliesInARow } from '../../src/agent/reply.js';
import { startDebugRun } from '../../src/client.js';
import {
  raiseBudgetUpdate,
  statusQuery,
  hintSignal,
  stopSignal,
  transcriptQuery,
  type BudgetRaise,
  type TranscriptView,
} from '../../src/temporal/definitions.js';
import type { FakeApiOptions } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { Script, ScriptStep } from '../../src/demo/script.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';

let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

const runTests: ScriptStep = { thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] };
const readCode: ScriptStep = {
  thought: 'Reading the code.',
  tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }],
};
const fixLoop: ScriptStep = {
  thought: 'The loop skips the last element.',
  tool_calls: [
    {
      name: 'edit_file',
      input: { path: 'buggy_code.py', old_string: 'range(len(items) - 1)', new_string: 'range(len(items))' },
    },
  ],
};
const finish: ScriptStep = {
  thought: 'Fixed.',
  tool_calls: [{ name: 'finish', input: { root_cause: 'off-by-one in the loop of find_max' } }],
};
const fixingScript: ScriptStep[] = [runTests, readCode, fixLoop, runTests, finish];

interface Scenario {
  report: DebugReport;
  worker: TestWorker;
  handle: WorkflowHandle;
}

/** Runs fixture 01 with a script of its own; `during` may steer the run while it goes. */
async function scenario(
  responses: Script['responses'],
  options: {
    input?: Partial<DebugInputJson>;
    fake?: Partial<FakeApiOptions>;
    during?: (handle: WorkflowHandle, worker: TestWorker) => Promise<void>;
  } = {},
): Promise<Scenario> {
  const worker = await startTestWorker(server, {
    fake: { scripts: { [fixture.name]: { responses } }, ...options.fake },
  });
  try {
    const handle = await startDebugRun(server.client, {
      input: fixtureInput(fixture, options.input),
      taskQueue: worker.taskQueue,
    });
    await options.during?.(handle, worker);
    const report = (await handle.result()) as DebugReport;
    assert.deepEqual(
      worker.fake.rejected.map((request) => request.error),
      [],
      'the fake API rejected a request',
    );
    return { report, worker, handle };
  } finally {
    await worker.stop();
  }
}

type SentMessage = { role: string; content: Array<Record<string, unknown>> };
function messagesOf(worker: TestWorker, requestIndex: number): SentMessage[] {
  return worker.fake.requests.filter((request) => request.status === 200)[requestIndex]?.body.messages as SentMessage[];
}

async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('finish is verified; parallel tool calls all get results, in order, in one message', async () => {
  const parallel: ScriptStep = {
    thought: 'Let me look at everything at once.',
    tool_calls: [
      { name: 'list_files', input: {} },
      { name: 'read_file', input: { path: 'buggy_code.py' } },
      { name: 'read_file', input: { path: 'test_buggy_code.py', start_line: 1, end_line: 8 } },
    ],
  };
  const { report, worker } = await scenario([runTests, parallel, fixLoop, runTests, finish]);
  assert.equal(report.status, 'fixed');
  const afterParallel = messagesOf(worker, 2);
  const results = afterParallel[afterParallel.length - 1]?.content ?? [];
  assert.deepEqual(
    results.map((block) => block.type),
    ['tool_result', 'tool_result', 'tool_result'],
  );
  const calls = (afterParallel[afterParallel.length - 2]?.content ?? []).filter((block) => block.type === 'tool_use');
  assert.deepEqual(
    results.map((block) => block.tool_use_id),
    calls.map((block) => block.id),
  );
  assert.match(String(results[1]?.content), /range\(len\(items\) - 1\)/);
});

test('replies without tool calls are nudged, and a few in a row stop the run (no_tool_calls)', async () => {
  const talk: ScriptStep = { thought: 'I believe the code is correct.' };
  const { report, worker } = await scenario([runTests, ...Array(maxTextOnlyRepliesInARow + 3).fill(talk)]);
  assert.equal(report.status, 'not_fixed');
  assert.equal(report.stopCondition, 'no_tool_calls');
  const nudged = messagesOf(worker, 2);
  assert.match(JSON.stringify(nudged[nudged.length - 1]), /You replied without calling a tool/);
  assert.equal(worker.fake.requests.length, 1 + maxTextOnlyRepliesInARow + 1);
});

test('the iteration budget stops the run (budget_exhausted)', async () => {
  const { report, worker } = await scenario(Array(10).fill(runTests), { input: { budgets: { maxIterations: 3 } } });
  assert.equal(report.status, 'budget_exhausted');
  assert.equal(report.stopCondition, 'max_iterations');
  assert.equal(report.iterations, 3);
  assert.equal(worker.fake.requests.length, 3);
});

test('the token budget stops the run before the next request would exceed it', async () => {
  const { report } = await scenario(Array(20).fill(readCode), { input: { budgets: { maxTokens: 12_000 } } });
  assert.equal(report.stopCondition, 'max_tokens');
  const used =
    report.tokens.inputTokens +
    report.tokens.outputTokens +
    report.tokens.cacheReadTokens +
    report.tokens.cacheWriteTokens;
  assert.ok(used <= 12_000, `used ${used} tokens`);
  assert.ok(report.iterations >= 2);
});

test('the cost budget stops the run', async () => {
  const { report } = await scenario(Array(20).fill(readCode), {
    input: { model: 'claude-sonnet-4-6', budgets: { maxCostUsd: 0.02 } },
  });
  assert.equal(report.stopCondition, 'max_cost');
  assert.ok((report.costUsd ?? 0) >= 0.02 && (report.costUsd ?? 0) < 0.05);
});

test('the wall-clock budget stops the run', async () => {
  const { report } = await scenario(Array(30).fill(readCode), {
    input: { budgets: { maxMinutes: 0.05 } },
    fake: { latencyMs: 400 },
  });
  assert.equal(report.stopCondition, 'max_duration');
  assert.ok(report.iterations < 30);
});

test('the stop signal ends the run gracefully with a report; a hint reaches the model', async () => {
  const { report, worker } = await scenario(Array(30).fill(readCode), {
    fake: { latencyMs: 300 },
    during: async (handle, running) => {
      await waitFor(async () => running.fake.requests.length >= 1);
      await handle.signal(hintSignal, 'Look at the loop bounds.');
      await waitFor(async () => running.fake.requests.length >= 4);
      await handle.signal(stopSignal, 'enough for today');
    },
  });
  assert.equal(report.status, 'stopped');
  assert.equal(report.stopCondition, 'stop_signal');
  assert.equal(report.stopDetail, 'enough for today');
  const sent = JSON.stringify(worker.fake.requests.map((request) => request.body.messages));
  assert.match(sent, /Hint from the user who started this run: Look at the loop bounds\./);
});

test('a paused run continues when its budget is raised', async () => {
  const { report } = await scenario(fixingScript, {
    input: { budgets: { maxIterations: 2 }, pauseOnBudgetMinutes: 5 },
    during: async (handle) => {
      await waitFor(async () => (await handle.query(statusQuery)).phase === 'paused');
      const status = await handle.executeUpdate(raiseBudgetUpdate, { args: [{ moreIterations: 5 }] });
      assert.equal(status.maxIterations, 7);
    },
  });
  assert.equal(report.status, 'fixed');
  assert.equal(report.iterations, 5);
});

/** Raises the budget each time the run pauses (the raises in order, then `then`), until the run ends. */
async function raiseEachPause(
  handle: WorkflowHandle,
  raises: BudgetRaise[],
  then: BudgetRaise,
): Promise<Array<{ before: Budgets; after: Budgets }>> {
  const seen: Array<{ before: Budgets; after: Budgets }> = [];
  while ((await handle.describe()).status.name === 'RUNNING') {
    const status = await handle.query(statusQuery);
    if (status.phase === 'paused') {
      assert.ok(seen.length < 10, 'the run paused again and again: the raise did not cover what paused it');
      const raised = await handle.executeUpdate(raiseBudgetUpdate, { args: [raises[seen.length] ?? then] });
      seen.push({ before: status.budgets, after: raised.budgets });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return seen;
}

test('a run paused on its token budget: a raise of iterations also raises the tokens (by their first amount), and `{}` raises just them', async () => {
  let raises: Array<{ before: Budgets; after: Budgets }> = [];
  const { report } = await scenario(fixingScript, {
    input: { budgets: { maxTokens: 3000 }, pauseOnBudgetMinutes: 5 },
    during: async (handle) => {
      raises = await raiseEachPause(handle, [{ moreIterations: 1 }], {});
    },
  });
  assert.equal(report.status, 'fixed');
  const [first, ...rest] = raises;
  assert.ok(first, 'the run paused');
  assert.equal(first.after.maxIterations, first.before.maxIterations + 1);
  assert.ok(
    (first.after.maxTokens ?? 0) >= (first.before.maxTokens ?? 0) + 3000,
    `tokens ${first.before.maxTokens} → ${first.after.maxTokens}`,
  );
  for (const raise of rest) {
    assert.equal(raise.after.maxIterations, raise.before.maxIterations, '{} leaves the iteration budget alone');
    assert.ok((raise.after.maxTokens ?? 0) >= (raise.before.maxTokens ?? 0) + 3000);
  }
});

test('a run paused on its time budget: `{}` raises the minutes by their first amount; unset budgets stay unset', async () => {
  let raises: Array<{ before: Budgets; after: Budgets }> = [];
  const { report } = await scenario(fixingScript, {
    input: { budgets: { maxMinutes: 0.05 }, pauseOnBudgetMinutes: 5 },
    fake: { latencyMs: 500 },
    during: async (handle) => {
      raises = await raiseEachPause(handle, [{ moreTokens: 1000, moreCostUsd: 1 }], {});
    },
  });
  assert.equal(report.status, 'fixed');
  assert.ok(raises.length >= 1, 'the run paused');
  for (const raise of raises) {
    assert.ok(
      (raise.after.maxMinutes ?? 0) >= (raise.before.maxMinutes ?? 0) + 0.05,
      `minutes ${raise.before.maxMinutes} → ${raise.after.maxMinutes}`,
    );
    assert.equal(raise.after.maxTokens, undefined);
    assert.equal(raise.after.maxCostUsd, undefined);
  }
});

test('raiseBudget refuses `{}` on a run that is not paused, unknown budgets, and non-positive amounts', async () => {
  await scenario(Array(30).fill(readCode), {
    fake: { latencyMs: 300 },
    during: async (handle, running) => {
      await waitFor(async () => running.fake.requests.length >= 1);
      const refusal = async (raise: BudgetRaise) => {
        const error = await handle.executeUpdate(raiseBudgetUpdate, { args: [raise] }).then(
          () => null,
          (failure: Error) => failure,
        );
        return String((error?.cause as Error | undefined)?.message ?? 'accepted');
      };
      assert.match(await refusal({}), /an empty raise is only for a paused run/);
      assert.match(await refusal({ moreApples: 3 } as BudgetRaise), /Unknown budget\(s\) "moreApples"/);
      assert.match(await refusal({ moreIterations: -2 }), /must be positive numbers/);
      await handle.signal(stopSignal, 'enough');
    },
  });
});

test('the guardrail refuses edits of test files, and repeated attempts stop the run', async () => {
  const editTest: ScriptStep = {
    thought: 'The test expectation looks wrong; I will change it.',
    tool_calls: [
      { name: 'edit_file', input: { path: 'test_buggy_code.py', old_string: '== 5\n', new_string: '== 4\n' } },
    ],
  };
  const { report, worker } = await scenario([runTests, editTest, editTest, editTest]);
  assert.equal(report.stopCondition, 'guardrail');
  assert.equal(report.status, 'not_fixed');
  assert.equal(report.patch, '', 'the test file was not changed');
  assert.match(JSON.stringify(messagesOf(worker, 2)), /is a test file, and this run does not allow changing tests/);
});

test('stop_reason max_tokens: the cut-off tool call is dropped and a shorter reply is asked for', async () => {
  const cut: ScriptStep = {
    stop_reason: 'max_tokens',
    content: [
      { type: 'text', text: 'Let me edit the file with a long explanation' },
      { type: 'tool_use', id: 'toolu_cut', name: 'edit_file', input: { path: 'buggy_code.py' } },
    ],
  };
  const { report, worker } = await scenario([runTests, cut, readCode, fixLoop, runTests, finish]);
  assert.equal(report.status, 'fixed');
  const next = messagesOf(worker, 2);
  const assistant = next[next.length - 2];
  assert.deepEqual(
    assistant?.content.map((block) => block.type),
    ['text'],
  );
  assert.match(JSON.stringify(next[next.length - 1]), /cut off at the output token limit/);
});

test('stop_reason refusal ends the run', async () => {
  const { report } = await scenario([
    runTests,
    { stop_reason: 'refusal', content: [{ type: 'text', text: 'I cannot help with that.' }] },
  ]);
  assert.equal(report.stopCondition, 'refusal');
  assert.equal(report.status, 'not_fixed');
});

test('stop_reason pause_turn: the paused reply is sent back and completed by the next one', async () => {
  const paused: ScriptStep = {
    stop_reason: 'pause_turn',
    content: [{ type: 'text', text: 'Thinking about the loop…' }],
  };
  let transcript: TranscriptView | null = null;
  const { report, worker } = await scenario([runTests, paused, readCode, fixLoop, runTests, finish], {
    // Read while the worker still answers queries.
    during: async (handle) => {
      await handle.result();
      transcript = await handle.query(transcriptQuery);
    },
  });
  assert.equal(report.status, 'fixed');
  const continued = messagesOf(worker, 2);
  assert.equal(continued[continued.length - 1]?.role, 'assistant');
  const { messages, replyIterations } = transcript as unknown as TranscriptView;
  const roles = messages.map((message) => message.role);
  assert.ok(
    roles.every((role, index) => index === 0 || role !== roles[index - 1]),
    'roles alternate',
  );
  // Iterations as the workflow counts them (the follower shows these): the paused turn and the
  // reply that completes it are one message, of iteration 3; so there is one reply fewer than
  // iterations. (The scripted API picks its step by the number of replies, so it serves the
  // read twice.)
  assert.equal(report.iterations, 7);
  assert.deepEqual(replyIterations, [1, 3, 4, 5, 6, 7]);
});

test('stop_reason model_context_window_exceeded: old observations are compacted, then the run goes on', async () => {
  const overflow: ScriptStep = { stop_reason: 'model_context_window_exceeded', content: [{ type: 'text', text: '' }] };
  const afterOverflow = [{ ...fixLoop, when: { request_includes: '[compacted]' } }, overflow];
  const { report, worker } = await scenario([
    runTests,
    readCode,
    readCode,
    readCode,
    readCode,
    afterOverflow,
    runTests,
    finish,
  ]);
  assert.equal(report.status, 'fixed');
  const afterCompaction = JSON.stringify(messagesOf(worker, 6));
  assert.match(afterCompaction, /\[compacted\]/);
  assert.equal(report.compactions, 1, 'the report records the compaction');
});

test('continue-as-new mid-run carries the conversation, budgets and workspace without a seam', async () => {
  const { report, worker } = await scenario(fixingScript, { input: { continueAsNewEvery: 2 } });
  assert.equal(report.status, 'fixed');
  assert.ok(report.workflowRuns >= 3, `workflowRuns ${report.workflowRuns}`);
  assert.equal(report.iterations, 5);
  assert.equal(report.toolCalls.length, 5);
  assert.match(report.patch, /range\(len\(items\)\)/);
  const last = messagesOf(worker, 4);
  assert.equal(last.length, 9, 'the last request carries the whole conversation');
});
