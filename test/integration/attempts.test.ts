// Parallel attempts as child workflows, on the real dev server, real Docker and the real SDK
// speaking to the fake API. The scripted model tells the attempts apart by their opening
// instruction ("Attempt k of n"), so each attempt plays its own story.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { createModelClient } from '../../src/model/anthropic.js';
import { modelEndpointId } from '../../src/model/endpoint.js';
import { ServedRuns } from '../../src/temporal/servedRuns.js';
import { startWorker } from '../../src/worker.js';
import type { Script, ScriptStep } from '../../src/demo/script.js';
import { statusQuery, stopSignal } from '../../src/temporal/definitions.js';
import {
  containersOf,
  startTestServer,
  startTestWorker,
  uniqueTaskQueue,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { runCli, type CliResult } from '../support/cli.js';

const repo = join(projectRoot, 'fixtures', '01_off_by_one');

const smallFix = {
  name: 'edit_file',
  input: {
    path: 'buggy_code.py',
    old_string: '    for i in range(len(items) - 1):',
    new_string: '    for i in range(len(items)):',
  },
};
// The same bug fixed by rewriting the whole loop: a verified fix with a larger diff.
const largeFix = {
  name: 'edit_file',
  input: {
    path: 'buggy_code.py',
    old_string: '    for i in range(len(items) - 1):\n        if items[i] > largest:\n            largest = items[i]',
    new_string: '    for item in items:\n        if item > largest:\n            largest = item',
  },
};
const finish = (rootCause: string) => ({ name: 'finish', input: { root_cause: rootCause } });

/** One script whose turn t plays, for each attempt, that attempt's step t (matched by its opening). */
function scriptFor(attempts: number, stories: Array<ScriptStep[]>): Script {
  const turns = Math.max(...stories.map((story) => story.length));
  return {
    responses: Array.from({ length: turns }, (_, turn) =>
      stories.map((story, index) => ({
        ...(story[turn] ?? { thought: 'Nothing more to do.' }),
        when: { request_includes: `Attempt ${index + 1} of ${attempts}` },
      })),
    ),
  };
}

const givesUp: ScriptStep[] = [
  { thought: 'It must be fine already.', tool_calls: [finish('nothing is wrong')] },
  { thought: 'I cannot tell what is wrong.' },
  { thought: 'I give up.' },
];
const fixesLarge: ScriptStep[] = [
  { thought: 'Rewrite the loop over the items.', tool_calls: [largeFix] },
  { thought: 'Done.', tool_calls: [finish('the loop skipped the last element (rewritten)')] },
];
const fixesSmall: ScriptStep[] = [
  { thought: 'Fix the bound.', tool_calls: [smallFix] },
  { thought: 'Done.', tool_calls: [finish('range(len(items) - 1) skipped the last element')] },
];
/** An attempt that keeps looking around for as many turns as it is given. */
const wanders = (turns: number): ScriptStep[] =>
  Array.from({ length: turns }, () => ({
    thought: 'Looking around.',
    tool_calls: [{ name: 'list_files', input: {} }],
  }));

let server: TestServer;
let worker: TestWorker;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await worker?.stop();
  await server?.stop();
});

/** Each test has its own worker and fake model, playing that test's script. */
async function useScript(script: Script): Promise<void> {
  await worker?.stop();
  worker = await startTestWorker(server, { fake: { scripts: { '01_off_by_one': script }, latencyMs: 200 } });
}

async function childReport(workflowId: string): Promise<DebugReport> {
  return (await server.client.workflow.getHandle(workflowId).result()) as DebugReport;
}

const sumOf = (values: number[]) => values.reduce((sum, value) => sum + value, 0);

test('three attempts: one fails, two fix the bug; the smaller fix is kept and the totals add up', async () => {
  await useScript(scriptFor(3, [givesUp, fixesLarge, fixesSmall]));
  const id = 'attempts-smallest-wins';
  const handle = await startDebugRun(server.client, {
    input: { repo, attempts: 3, budgets: { maxIterations: 30 } },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  const watched = cliOutput(['watch', id]);
  const report = (await handle.result()) as DebugReport;

  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.chosenAttempt, 3);
  assert.deepEqual(
    report.attempts?.map((attempt) => [attempt.attempt, attempt.workflowId, attempt.status, attempt.diffLines]),
    [
      [1, `${id}-attempt-1`, 'not_fixed', 0],
      [2, `${id}-attempt-2`, 'fixed', 6],
      [3, `${id}-attempt-3`, 'fixed', 2],
    ],
  );
  assert.match(report.patch, /\+    for i in range\(len\(items\)\):/);
  assert.equal(report.rootCause, 'range(len(items) - 1) skipped the last element');

  // Totals are the sums over the children's own reports.
  const children = await Promise.all([1, 2, 3].map((k) => childReport(`${id}-attempt-${k}`)));
  assert.equal(report.iterations, sumOf(children.map((child) => child.iterations)));
  for (const key of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const) {
    assert.equal(report.tokens[key], sumOf(children.map((child) => child.tokens[key])), key);
  }
  assert.ok(report.costUsd !== null && report.costUsd > 0);
  assert.ok(Math.abs((report.costUsd ?? 0) - sumOf(children.map((child) => child.costUsd ?? 0))) < 1e-9);

  // Each attempt had its own opening, temperature and budget share.
  const bodies = worker.fake.requests
    .map((request) => request.body)
    .filter((body) => JSON.stringify(body.messages).includes(`Attempt `));
  for (const [k, temperature] of [
    [1, 0.2],
    [2, 0.6],
    [3, 1],
  ] as const) {
    const own = bodies.filter((body) => JSON.stringify(body.messages).includes(`Attempt ${k} of 3`));
    assert.ok(own.length > 0, `attempt ${k} called the model`);
    assert.ok(
      own.every((body) => body.temperature === temperature),
      `attempt ${k} at temperature ${temperature}`,
    );
  }
  const childDescription = await server.client.workflow.getHandle(`${id}-attempt-2`).describe();
  assert.equal(childDescription.parentExecution?.workflowId, id);
  assert.match(
    (await childDescription.staticSummary()) ?? '',
    /^Attempt 2 of 3 · the second most likely hypothesis · temperature 0\.6$/,
  );
  const { input } = await server.client.workflow
    .getHandle(`${id}-attempt-2`)
    .query<{ input: { budgets: { maxIterations: number } } }>('savedState');
  assert.equal(input.budgets.maxIterations, 10);
  const parentDescription = await handle.describe();
  assert.equal(parentDescription.searchAttributes.DebugStatus?.[0], 'fixed');
  assert.equal(await containersOf(server), 0, 'every sandbox was removed');

  // `watch` follows the attempts as they start and end, then prints the report with every attempt.
  const output = await watched;
  assert.match(
    output,
    new RegExp(
      `› attempt 2 of 3 · the second most likely hypothesis · temperature 0\\.6: running \\(${id}-attempt-2\\)`,
    ),
  );
  assert.match(output, /› attempt 1 of 3 .*: not_fixed/);
  assert.match(output, /Status: fixed/);
  assert.match(
    output,
    /Attempts: 3, kept attempt 3 \(iterations, tokens and cost above are their sums; tool calls are the kept attempt’s\)/,
  );
  assert.match(
    output,
    /✔ chosen 3\. fixed · 2 lines changed · 2 iterations · \$\d+\.\d{4} · attempts-smallest-wins-attempt-3\n\s+root cause: range\(len\(items\) - 1\) skipped the last element/,
  );
  // A finish that is not verified, then text-only replies: nudged three times in a row, the fourth ends it.
  assert.match(output, /  1\. not_fixed · 0 lines changed · 5 iterations/);
  assert.match(output, /  2\. fixed · 6 lines changed · 2 iterations/);
});

test('first wins: once one fix is verified the other attempts are cancelled, their sandboxes removed, their usage counted', async () => {
  await useScript(scriptFor(3, [wanders(40), wanders(40), fixesSmall]));
  const id = 'attempts-first-wins';
  const handle = await startDebugRun(server.client, {
    input: { repo, attempts: 3, firstWins: true, budgets: { maxIterations: 120 } },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.chosenAttempt, 3);
  assert.deepEqual(
    report.attempts?.map((attempt) => attempt.status),
    ['cancelled', 'cancelled', 'fixed'],
  );
  for (const k of [1, 2]) {
    const description = await server.client.workflow.getHandle(`${id}-attempt-${k}`).describe();
    assert.equal(description.status.name, 'CANCELLED', `attempt ${k}`);
  }
  assert.equal(await containersOf(server), 0, 'the cancelled attempts’ sandboxes were removed');
  // The cancelled attempts worked before they were cancelled; their usage is in the totals.
  const [first, second, third] = report.attempts ?? [];
  assert.ok((first?.iterations ?? 0) > 0 && (second?.iterations ?? 0) > 0);
  assert.equal(report.iterations, (first?.iterations ?? 0) + (second?.iterations ?? 0) + (third?.iterations ?? 0));
  assert.equal(
    report.tokens.outputTokens,
    (first?.tokens.outputTokens ?? 0) + (second?.tokens.outputTokens ?? 0) + (third?.tokens.outputTokens ?? 0),
  );
  assert.ok((first?.tokens.outputTokens ?? 0) > 0);
  assert.ok(
    Math.abs((report.costUsd ?? 0) - sumOf((report.attempts ?? []).map((attempt) => attempt.costUsd ?? 0))) < 1e-9,
  );
});

test('stop on one attempt stops only it; stop on the parent stops the rest; status shows the attempts', async () => {
  await useScript(scriptFor(2, [wanders(60), wanders(60)]));
  const id = 'attempts-stopped';
  const handle = await startDebugRun(server.client, {
    input: { repo, attempts: 2, budgets: { maxIterations: 120 } },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  const childHandle = (k: number) => server.client.workflow.getHandle(`${id}-attempt-${k}`);
  await waitFor(async () => {
    const statuses = await Promise.all(
      [1, 2].map((k) =>
        childHandle(k)
          .query(statusQuery)
          .catch(() => null),
      ),
    );
    return statuses.every((status) => (status?.iteration ?? 0) >= 2);
  });
  const status = await handle.query(statusQuery);
  assert.deepEqual(
    status.attempts?.map((attempt) => [attempt.workflowId, attempt.status]),
    [
      [`${id}-attempt-1`, 'running'],
      [`${id}-attempt-2`, 'running'],
    ],
  );
  const printed = await cliOutput(['status', id]);
  assert.match(
    printed,
    /attempt 1 of 2 · the most likely hypothesis · temperature 0\.2 · running · phase \w+ · iteration \d+\/60/,
  );
  assert.match(printed, new RegExp(`${id}-attempt-2`));

  // `stop` on one attempt (our CLI) stops only that attempt.
  const stopped = await cli(['stop', `${id}-attempt-1`, 'enough of this one']);
  assert.equal(stopped.code, 0, stopped.output);
  const first = (await childHandle(1).result()) as DebugReport;
  assert.equal(first.status, 'stopped');
  assert.equal((await childHandle(2).describe()).status.name, 'RUNNING', 'the other attempt goes on');

  await handle.signal(stopSignal, 'enough');
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'stopped');
  assert.deepEqual(
    report.attempts?.map((attempt) => [attempt.status, attempt.detail]),
    [
      ['stopped', 'enough of this one'],
      ['stopped', 'enough'],
    ],
  );
  assert.equal(await containersOf(server), 0);
  // A parent that ended with a report has nothing left to resume: the user is told to resume one attempt.
  const resumed = await cli(['resume', id]);
  assert.equal(resumed.code, 2, resumed.output);
  assert.match(
    resumed.output,
    new RegExp(
      `${id} ended with a report: every attempt finished, so nothing is left to resume\\. To give one attempt more budget, resume that attempt \\(${id}-attempt-1, ${id}-attempt-2\\)`,
    ),
  );
  // raise-budget is for one running run: a parent's attempts each have their own budget.
  const raised = await cli(['raise-budget', id, '--more-iterations', '5']);
  assert.equal(raised.code, 2, raised.output);
  assert.match(raised.output, /has ended \(completed\): continue it in a new run with `durable-debugger resume/);
});

test('resume of an interrupted parent: a finished attempt is kept, the unfinished ones go on from their saved state, and the run ends as without the interruption', async () => {
  const fake = new FakeAnthropicApi({
    scripts: {
      '01_off_by_one': scriptFor(3, [givesUp, [...wanders(10), ...fixesLarge], [...wanders(12), ...fixesSmall]]),
    },
    latencyMs: 200,
  });
  await fake.start();
  try {
    await worker?.stop();
    worker = await startTestWorker(server, { fake });
    const id = 'attempts-resumed';
    const handle = await startDebugRun(server.client, {
      input: { repo, attempts: 3, budgets: { maxIterations: 60 } },
      taskQueue: worker.taskQueue,
      workflowId: id,
    });
    const child = (k: number) => server.client.workflow.getHandle(`${id}-attempt-${k}`);
    // Attempt 1 has ended (with a report); attempts 2 and 3 are under way.
    await waitFor(async () => {
      const first = await child(1)
        .describe()
        .catch(() => null);
      const others = await Promise.all(
        [2, 3].map((k) =>
          child(k)
            .query(statusQuery)
            .catch(() => null),
        ),
      );
      return first?.status.name === 'COMPLETED' && others.every((status) => (status?.iteration ?? 0) >= 2);
    });
    // The interruption: attempt 2 and the parent are terminated (attempt 3 is cancelled with its parent), and the worker is gone.
    await child(2).terminate('interrupted by the test');
    await handle.terminate('interrupted by the test');
    // Read before the worker goes (a closed run replays on a worker to answer).
    const earlierUsage = await Promise.all(
      [2, 3].map(async (k) => (await child(k).query(statusQuery)).tokens.outputTokens),
    );
    const taskQueue = worker.taskQueue;
    await worker.stop();
    worker = undefined as unknown as TestWorker;
    assert.equal((await child(2).describe()).status.name, 'TERMINATED');
    assert.notEqual((await child(3).describe()).status.name, 'COMPLETED', 'attempt 3 had not finished');

    // `resume` of the parent, served by the CLI's own worker (the same model endpoint: the fake API).
    const resumed = await cli(['resume', id], {
      DURABLE_DEBUGGER_TASK_QUEUE: taskQueue,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    });
    assert.equal(resumed.code, 0, resumed.output);
    const next = `${id}-resumed-2`;
    assert.match(
      resumed.output,
      new RegExp(`Resuming ${id} \\(terminated\\) in a new run, ${next}: its finished attempts are kept`),
    );
    assert.match(resumed.output, /Status: fixed/);
    assert.match(resumed.output, new RegExp(`Resumed from: ${id} \\(its work before the resume is counted here\\)`));
    assert.match(
      resumed.output,
      new RegExp(`1\\. not_fixed · 0 lines changed · \\d+ iterations · \\$\\d+\\.\\d{4} · ${id}-attempt-1\\n`),
    );

    const report = (await server.client.workflow.getHandle(next).result()) as DebugReport;
    // As the run without the interruption ends: the smaller verified fix, attempt 3, is kept.
    assert.equal(report.status, 'fixed', report.stopDetail);
    assert.equal(report.chosenAttempt, 3);
    assert.equal(report.resumedFrom, id);
    assert.equal(report.rootCause, 'range(len(items) - 1) skipped the last element');
    assert.deepEqual(
      report.attempts?.map((attempt) => [attempt.attempt, attempt.workflowId, attempt.status, attempt.diffLines]),
      [
        [1, `${id}-attempt-1`, 'not_fixed', 0],
        [2, `${next}-attempt-2`, 'fixed', 6],
        [3, `${next}-attempt-3`, 'fixed', 2],
      ],
    );
    // Each unfinished attempt went on from its own saved state: its usage before the interruption is counted once, in its report.
    const children = await Promise.all(report.attempts?.map((attempt) => childReport(attempt.workflowId)) ?? []);
    assert.deepEqual(
      children.map((each) => each.resumedFrom),
      [null, `${id}-attempt-2`, `${id}-attempt-3`],
    );
    for (const [index, earlier] of earlierUsage.entries()) {
      assert.ok(
        (children[index + 1]?.tokens.outputTokens ?? 0) > earlier,
        `attempt ${index + 2} carries its earlier usage`,
      );
    }
    assert.equal(report.iterations, sumOf(children.map((each) => each.iterations)));
    assert.equal(report.tokens.outputTokens, sumOf(children.map((each) => each.tokens.outputTokens)));
    assert.ok(Math.abs((report.costUsd ?? 0) - sumOf(children.map((each) => each.costUsd ?? 0))) < 1e-9);
    // The resumed attempts did not start over: no second task prompt for them, and attempt 2 went on past its wandering.
    const description = await server.client.workflow.getHandle(`${next}-attempt-2`).describe();
    assert.equal(description.parentExecution?.workflowId, next);
    assert.equal(
      await description.staticSummary(),
      `Attempt 2 of 3 · the second most likely hypothesis · temperature 0.6 · resumed from ${id}-attempt-2`,
    );
    assert.match(
      (await (await server.client.workflow.getHandle(next).describe()).staticSummary()) ?? '',
      new RegExp(`· 3 attempts · resumes ${id}$`),
    );

    // Resumes that do not fit are refused at once, naming what to do instead.
    const more = await cli(['resume', id, '--more-iterations', '5'], {
      DURABLE_DEBUGGER_TASK_QUEUE: taskQueue,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    });
    assert.equal(more.code, 2, more.output);
    assert.match(
      more.output,
      new RegExp(
        `${id} ran 3 attempts, each with its own share of the budgets: to give one more, resume that attempt with the --more-\\* options`,
      ),
    );
    worker = await startTestWorker(server, { fake, taskQueue });
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [
        { resumeFrom: id },
        new RegExp(`resumeFrom: "${id}" ran 3 parallel attempts: resume it with attempts 3, or resume one attempt`),
      ],
      [
        { attempts: 2, resumeFrom: id },
        new RegExp(`resumeFrom: "${id}" ran 3 attempts: resume it with attempts 3, not 2`),
      ],
      [
        { attempts: 2, resumeFrom: `${id}-attempt-1` },
        new RegExp(`resumeFrom: "${id}-attempt-1" is a single run, not a parent of parallel attempts`),
      ],
    ];
    for (const [fields, expected] of refused) {
      const bad = await startDebugRun(server.client, { input: { repo, ...fields }, taskQueue });
      await assert.rejects(
        bad.result(),
        (error: Error & { cause?: Error }) => expected.test(error.cause?.message ?? ''),
        JSON.stringify(fields),
      );
    }
  } finally {
    await fake.stop();
  }
});

test('resume of a parent whose worker is gone: no new run, this command’s worker takes it to its end', async () => {
  const fake = new FakeAnthropicApi({
    scripts: {
      '01_off_by_one': scriptFor(2, [
        [...wanders(4), ...fixesLarge],
        [...wanders(4), ...fixesSmall],
      ]),
    },
    latencyMs: 200,
  });
  await fake.start();
  try {
    await worker?.stop();
    const taskQueue = uniqueTaskQueue('attempts-lost');
    const id = 'attempts-worker-lost';
    // Started as `run` does: with the starter's model endpoint and the private queue of this user's
    // commands (the data folder is the server's, as the CLI's below), served by such a worker.
    const modelEndpoint = modelEndpointId({ apiKey: 'test-key', baseURL: fake.url }) as string;
    const served = ServedRuns.forDataFolder(server.home);
    const first = await startWorker({
      config: server.config({ DURABLE_DEBUGGER_TASK_QUEUE: taskQueue }),
      address: server.address,
      anthropic: createModelClient({ apiKey: 'test-key', baseURL: fake.url, timeoutMs: 30_000 }),
      modelEndpoint,
      servedRuns: served,
    });
    const handle = await startDebugRun(server.client, {
      input: { repo, attempts: 2, modelEndpoint, privateQueue: served.queue, budgets: { maxIterations: 40 } },
      taskQueue,
      workflowId: id,
      starting: (workflowId) => served.starting(workflowId),
    });
    await waitFor(async () => {
      const statuses = await Promise.all(
        [1, 2].map((k) =>
          server.client.workflow
            .getHandle(`${id}-attempt-${k}`)
            .query(statusQuery)
            .catch(() => null),
        ),
      );
      return statuses.every((status) => (status?.iteration ?? 0) >= 1);
    });
    await first.shutdown();
    worker = undefined as unknown as TestWorker;
    const resumed = await cli(['resume', id], {
      DURABLE_DEBUGGER_TASK_QUEUE: taskQueue,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    });
    assert.equal(resumed.code, 0, resumed.output);
    assert.match(
      resumed.output,
      new RegExp(
        `${id} is still running \\(phase attempts\\): following it; this command's worker serves it if its own is gone`,
      ),
    );
    assert.match(resumed.output, /Status: fixed/);
    const report = (await handle.result()) as DebugReport;
    assert.equal(report.chosenAttempt, 2);
    assert.deepEqual(
      report.attempts?.map((attempt) => attempt.workflowId),
      [`${id}-attempt-1`, `${id}-attempt-2`],
    );
  } finally {
    await fake.stop();
  }
});

test('attempts with approve: the parent waits for approval of the kept fix; a rejection sends that attempt on with the feedback; approve ends fixed', async () => {
  const rewriteAfterSmallFix = {
    name: 'edit_file',
    input: {
      path: 'buggy_code.py',
      old_string: '    for i in range(len(items)):\n        if items[i] > largest:\n            largest = items[i]',
      new_string: '    for item in items:\n        if item > largest:\n            largest = item',
    },
  };
  await useScript(
    scriptFor(2, [
      fixesLarge,
      [
        ...fixesSmall,
        { thought: 'Rewrite as the reviewer asks.', tool_calls: [rewriteAfterSmallFix] },
        {
          thought: 'Done again.',
          tool_calls: [finish('the loop skipped the last element (rewritten for the reviewer)')],
        },
      ],
    ]),
  );
  const id = 'attempts-approval';
  const handle = await startDebugRun(server.client, {
    input: { repo, attempts: 2, approve: true, budgets: { maxIterations: 20 } },
    taskQueue: worker.taskQueue,
    workflowId: id,
  });
  const awaiting = async (since = 0) => {
    let patch = '';
    await waitFor(async () => {
      const status = await handle.query(statusQuery);
      patch = status.awaitingApproval && status.awaitingApproval.since !== since ? status.awaitingApproval.patch : '';
      return patch !== '';
    });
    return { patch, since: (await handle.query(statusQuery)).awaitingApproval?.since ?? 0 };
  };
  // Both attempts fixed it; the parent asks about the smaller fix, attempt 2's, and waits.
  const first = await awaiting();
  assert.match(first.patch, /\+    for i in range\(len\(items\)\):/);
  assert.equal((await handle.describe()).searchAttributes.DebugStatus?.[0], 'awaiting_approval');
  const rejected = await cli(['reject', id, 'loop', 'over', 'the', 'items', 'themselves']);
  assert.equal(rejected.code, 0, rejected.output);

  // Attempt 2 goes on from where it was, with the feedback, and its revised fix is asked about.
  const second = await awaiting(first.since);
  assert.match(second.patch, /\+    for item in items:/);
  assert.ok(
    worker.fake.requests.some((request) =>
      JSON.stringify(request.body.messages).includes(
        'the reviewer rejected it and wrote: loop over the items themselves',
      ),
    ),
    'the attempt received the feedback',
  );
  const approved = await cli(['approve', id]);
  assert.equal(approved.code, 0, approved.output);

  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.match(report.stopDetail, /kept attempt 2 of 2.*approved$/);
  assert.equal(report.chosenAttempt, 2);
  assert.equal(report.rootCause, 'the loop skipped the last element (rewritten for the reviewer)');
  assert.deepEqual(
    report.attempts?.map((attempt) => [attempt.workflowId, attempt.status]),
    [
      [`${id}-attempt-1`, 'fixed'],
      [`${id}-attempt-2-review-1`, 'fixed'],
    ],
  );
  // The revised attempt's report carries its usage before the review: totals count it once.
  const children = await Promise.all((report.attempts ?? []).map((attempt) => childReport(attempt.workflowId)));
  assert.equal(children[1]?.resumedFrom, `${id}-attempt-2`);
  assert.equal(report.iterations, sumOf(children.map((each) => each.iterations)));
  assert.equal(report.tokens.outputTokens, sumOf(children.map((each) => each.tokens.outputTokens)));
  assert.equal((await handle.describe()).searchAttributes.DebugStatus?.[0], 'fixed');
});

async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function cliOutput(args: string[]): Promise<string> {
  const { code, output } = await cli(args);
  if (code !== 0) throw new Error(`exit ${code}: ${output}`);
  return output;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(server, args, env);
}
