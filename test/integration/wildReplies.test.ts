// Odd but legal replies from Claude (test/wild-replies/*.json), played by the strict fake API
// through the real SDK against fixtures/01_off_by_one: every case must end with a sensible
// report, and the fake must reject no request. Also: a conversation stored by older code with
// an empty assistant message is repaired when it is continued or resumed.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { emptyUsage } from '../../src/agent/budgets.js';
import type { Message } from '../../src/agent/conversation.js';
import type { DebugInputJson } from '../../src/agent/input.js';
import { nudgeAfterTextOnly, taskPrompt } from '../../src/agent/prompts.js';
import type { DebugReport, RunStatus } from '../../src/agent/report.js';
import type { RunState } from '../../src/agent/runState.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { Script } from '../../src/demo/script.js';
import { statusQuery, transcriptQuery } from '../../src/temporal/definitions.js';
import { startTestServer, startTestWorker, type TestServer } from '../../harness/devStack.js';

interface WildCase extends Script {
  input?: Partial<DebugInputJson>;
  expect: {
    status: RunStatus;
    stopCondition: string;
    /** Text the report's stopDetail must contain. */
    stopDetail?: string;
    /** How many requests the fake answered. */
    requests?: number;
    rootCause?: string;
    /** Tool calls reported as failed (is_error), by name in order. */
    toolErrors?: string[];
    /** Every tool call, by name in order. */
    toolCalls?: string[];
    /** Texts that must each appear in a tool result of the run's conversation. */
    observations?: string[];
    /** No request body may be larger. */
    maxRequestBytes?: number;
    /** The run's workflow history (as JSON) may not be larger. */
    maxHistoryBytes?: number;
  };
}

const casesFolder = join(projectRoot, 'test', 'wild-replies');
let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

const caseNames = (await readdir(casesFolder)).filter((name) => name.endsWith('.json')).sort();

for (const name of caseNames) {
  const wild = JSON.parse(await readFile(join(casesFolder, name), 'utf8')) as WildCase;
  test(`wild reply ${name.replace(/\.json$/, '')}: ${wild.description}`, async () => {
    const worker = await startTestWorker(server, {
      fake: { scripts: { [fixture.name]: { responses: wild.responses } } },
    });
    try {
      const handle = await startDebugRun(server.client, {
        input: fixtureInput(fixture, wild.input),
        taskQueue: worker.taskQueue,
      });
      const report = (await handle.result()) as DebugReport;
      const requests = worker.fake.requests;
      assert.deepEqual(
        worker.fake.rejected.map((request) => request.error),
        [],
        'the fake API rejected no request',
      );
      const expect = wild.expect;
      assert.equal(report.status, expect.status, report.stopDetail);
      assert.equal(report.stopCondition, expect.stopCondition);
      if (expect.stopDetail) assert.ok(report.stopDetail.includes(expect.stopDetail), report.stopDetail);
      if (expect.requests !== undefined) assert.equal(requests.length, expect.requests, 'requests answered');
      if (expect.rootCause) assert.ok(report.rootCause?.includes(expect.rootCause), String(report.rootCause));
      const names = (errors: boolean) =>
        report.toolCalls.filter((call) => !errors || call.isError).map((call) => call.name);
      assert.deepEqual(names(true), expect.toolErrors ?? [], 'tool calls reported as failed');
      if (expect.toolCalls) assert.deepEqual(names(false), expect.toolCalls);
      const sent = requests.map((request) => JSON.stringify(request.body));
      if (expect.observations) {
        const { messages } = await handle.query(transcriptQuery);
        const results = messages.flatMap((message) =>
          message.content.flatMap((block) => (block.type === 'tool_result' ? [block.content] : [])),
        );
        for (const text of expect.observations)
          assert.ok(
            results.some((result) => result.includes(text)),
            `no tool result said ${text}`,
          );
      }
      if (expect.maxRequestBytes !== undefined) {
        const largest = Math.max(...sent.map((body) => body.length));
        assert.ok(largest <= expect.maxRequestBytes, `a request of ${largest} bytes`);
        const status = await handle.query(statusQuery);
        assert.ok(status.lastThought.length <= expect.maxRequestBytes, 'the status view stays small too');
      }
      if (expect.maxHistoryBytes !== undefined) {
        // The server's own size of the history it stores.
        const historyBytes = (await handle.describe()).historySize ?? NaN;
        assert.ok(historyBytes <= expect.maxHistoryBytes, `a history of ${historyBytes} bytes`);
      }
    } finally {
      await worker.stop();
    }
  });
}

/**
 * The state a run written by older code carried: after a run_tests call, Claude answered with
 * no content, and the empty assistant message was stored, followed by the nudge.
 */
function stateStoredByOlderCode(repositoryName: string): RunState {
  const callId = 'toolu_stored_0';
  const conversation: Message[] = [
    {
      role: 'user',
      content: [
        {
          type: 'text',
          text: taskPrompt({
            repositoryName,
            goal: 'Make the failing tests pass by fixing the bug in the code.',
            testCommand: 'python -m pytest',
            baseline: {
              passed: 2,
              failed: 1,
              skipped: 0,
              failing: ['test_max_at_the_end'],
              exitCode: 1,
              timedOut: false,
              recognized: true,
            },
          }),
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Running the tests.' },
        { type: 'tool_use', id: callId, name: 'run_tests', input: {} },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: callId, content: '1 failed, 2 passed: test_max_at_the_end' }],
    },
    { role: 'assistant', content: [] },
    { role: 'user', content: [{ type: 'text', text: nudgeAfterTextOnly }] },
  ];
  return {
    phase: 'thinking',
    startedAt: Date.now(),
    conversation,
    conversationVersion: 0,
    iteration: 2,
    budgets: { maxIterations: 30 },
    tokens: emptyUsage(),
    costUsd: 0,
    modelCalls: 2,
    lastRequestTokens: 0,
    lastRequestCharacters: 0,
    model: null,
    answeredBy: null,
    lastThought: '',
    toolCalls: [{ iteration: 1, name: 'run_tests', description: 'run_tests', isError: false }],
    pendingHints: [],
    // Older code had a `nudged` flag and no count of text-only replies.
    ...({ nudged: true } as object),
    stopRequested: 'stopped by the user before the fix',
    guardrailRefusals: 0,
    rootCause: null,
    fixSummary: null,
    compactions: 0,
    workflowRuns: 1,
    resumedFrom: null,
  } as RunState;
}

test('a stored conversation with an empty assistant message is repaired on resume, and the resumed run ends fixed', async () => {
  const later = [
    { thought: 'Reading the code.', tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }] },
    {
      thought: 'The loop skips the last element.',
      tool_calls: [
        {
          name: 'edit_file',
          input: { path: 'buggy_code.py', old_string: 'range(len(items) - 1)', new_string: 'range(len(items))' },
        },
      ],
    },
    { thought: 'Checking.', tool_calls: [{ name: 'run_tests', input: {} }] },
    {
      thought: 'Fixed.',
      tool_calls: [{ name: 'finish', input: { root_cause: 'off-by-one in the loop of find_max' } }],
    },
  ];
  // The stored conversation has one assistant turn once repaired: the script goes on from there.
  const responses = [{ thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] }, ...later];
  const worker = await startTestWorker(server, { fake: { scripts: { [fixture.name]: { responses } } } });
  try {
    // The earlier run: started as a continuation (continue-as-new input) of a state stored by older code.
    const earlierId = `stored-empty-message-${Date.now()}`;
    const earlier = await server.client.workflow.start('debugRepository', {
      taskQueue: worker.taskQueue,
      workflowId: earlierId,
      args: [fixtureInput(fixture), { state: stateStoredByOlderCode(fixture.name) }],
    });
    const stopped = (await earlier.result()) as DebugReport;
    assert.equal(stopped.status, 'stopped');
    assert.equal(worker.fake.requests.length, 0);

    const resumed = await startDebugRun(server.client, {
      input: fixtureInput(fixture, { resumeFrom: earlierId }),
      taskQueue: worker.taskQueue,
    });
    const report = (await resumed.result()) as DebugReport;
    assert.deepEqual(
      worker.fake.rejected.map((request) => request.error),
      [],
      'the fake API rejected no request',
    );
    assert.equal(report.status, 'fixed', report.stopDetail);
    assert.equal(report.resumedFrom, earlierId);
    const first = worker.fake.requests[0]?.body.messages as Array<{ role: string; content: unknown[] }>;
    assert.ok(
      first.every((message) => message.content.length > 0),
      'no empty message was sent',
    );
    assert.deepEqual(
      first.map((message) => message.role),
      ['user', 'assistant', 'user'],
    );
  } finally {
    await worker.stop();
  }
});
