// Our CLI as a person uses it, in real processes: the model is the fake API reached through
// ANTHROPIC_BASE_URL, as any Anthropic-compatible gateway would be.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';
import type { DebugReport } from '../../src/agent/report.js';
import { statusQuery } from '../../src/temporal/definitions.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, startCli, type CliProcess } from '../support/cli.js';

let server: TestServer;
let fake: FakeAnthropicApi;

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({ scripts: scriptsByName(await loadFixtures()), latencyMs: 400 });
  await fake.start();
});
after(async () => {
  killCliProcesses();
  await fake?.stop();
  await server?.stop();
});

/** Our CLI, with the fake API as its model (reached through ANTHROPIC_BASE_URL). */
function cli(args: string[]): CliProcess {
  return startCli(server, args, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url });
}

async function waitFor(predicate: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('killing `run` in the middle: `resume` by the same user on the same machine serves the run to its end, and `watch` shows it fixed', async () => {
  const id = 'cli-killed-mid-run';
  const run = cli(['run', 'fixtures/01_off_by_one', '--id', id]);
  const before = fake.requests.length;
  // A deadline for a loaded machine: the command starts its worker (two workflow workers) before the run.
  await waitFor(() => fake.requests.length >= before + 3, 180_000);
  run.child.kill('SIGKILL');
  await run.done;

  // The run's activities are on the private queue of the killed process: a shared worker never takes them.
  const resume = cli(['resume', id]);
  const watch = cli(['watch', id]);
  const watched = await watch.done;
  const resumed = await resume.done;
  assert.equal(resumed.code, 0, resumed.output);
  assert.match(resumed.output, /still running/);
  assert.equal(watched.code, 0, watched.output);
  assert.match(watched.output, /thought I'll start by running the test suite/);
  assert.match(watched.output, /→ edit_file buggy_code\.py/);
  assert.match(watched.output, /Status: fixed/);
  assert.match(watched.output, /\+    for i in range\(len\(items\)\):/);
  assert.deepEqual(
    fake.rejected.map((request) => request.error),
    [],
  );
});

test('`resume` of a budget-exhausted run continues it to a fix, with one coherent transcript', async () => {
  const id = 'cli-budget-then-resume';
  const first = await cli(['run', 'fixtures/01_off_by_one', '--id', id, '--max-iterations', '3']).done;
  assert.equal(first.code, 1);
  assert.match(first.output, /Status: budget_exhausted/);

  const resumed = await cli(['resume', id, '--more-iterations', '5']).done;
  assert.equal(resumed.code, 0, resumed.output);
  assert.match(resumed.output, /Continuing cli-budget-then-resume in a new run, cli-budget-then-resume-resumed-2/);
  assert.match(resumed.output, /Status: fixed/);
  assert.match(resumed.output, /6 iterations/);

  // The resumed run's last request carries the whole conversation, both runs' parts in one.
  type Block = { type: string; id?: string; tool_use_id?: string; text?: string };
  const messages = fake.requests.filter((request) => request.status === 200).at(-1)?.body.messages as Array<{
    role: string;
    content: Block[];
  }>;
  const roles = messages.map((message) => message.role);
  assert.ok(
    roles.every((role, index) => index === 0 || role !== roles[index - 1]),
    'roles alternate',
  );
  const uses = messages.flatMap((message) =>
    message.content.filter((block) => block.type === 'tool_use').map((block) => block.id),
  );
  const results = messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])),
  );
  assert.deepEqual(results, uses, 'every tool call has its result, once');
  assert.equal(uses.length, 5, 'five tool calls before the final finish');
  assert.match(JSON.stringify(messages), /This run continues the earlier run cli-budget-then-resume/);
  assert.deepEqual(
    fake.rejected.map((request) => request.error),
    [],
  );
});

test('`resume` of a run stopped by its token budget raises that budget (by its first amount, or by --more-tokens), so the run goes on', async () => {
  const id = 'cli-tokens-then-resume';
  const first = await cli(['run', 'fixtures/01_off_by_one', '--id', id, '--max-tokens', '3000', '--json']).done;
  assert.equal(first.code, 1, first.output);
  const reportOf = (output: string) =>
    (
      output
        .split('\n')
        .filter((line) => line.startsWith('{"type":"report"'))
        .map((line) => JSON.parse(line) as { report: DebugReport })
        .pop() as { report: DebugReport }
    ).report;
  const stopped = reportOf(first.output);
  assert.equal(stopped.stopCondition, 'max_tokens');

  // No flags: the token budget that stopped it grows by its first amount; the run makes progress before it stops again.
  const again = await cli(['resume', id, '--json']).done;
  const second = reportOf(again.output);
  assert.ok(
    second.iterations > stopped.iterations,
    `the resumed run stopped at once (${second.iterations} iterations)`,
  );
  assert.match(again.output, new RegExp(`Continuing ${id} in a new run, ${id}-resumed-2: tokens 3000 → \\d+\\.`));
  const raised = Number(/tokens 3000 → (\d+)/.exec(again.output)?.[1]);
  assert.ok(raised >= 6_000, `raised to ${raised}`);
  assert.equal(second.stopCondition, 'max_tokens', 'one more first amount is not enough to finish here');
  // Time counts on across the resume, as tokens, cost and iterations do.
  assert.ok(second.durationMs >= stopped.durationMs, `${second.durationMs} ms after ${stopped.durationMs} ms`);

  // --more-tokens names the amount; the iteration budget is left as it was.
  const last = await cli(['resume', `${id}-resumed-2`, '--more-tokens', '200000']).done;
  assert.equal(last.code, 0, last.output);
  assert.match(
    last.output,
    new RegExp(`Continuing ${id}-resumed-2 in a new run, ${id}-resumed-3: tokens ${raised} → \\d+\\.`),
  );
  assert.match(last.output, /Status: fixed/);
  assert.deepEqual(
    fake.rejected.map((request) => request.error),
    [],
  );
});

test('`raise-budget --more-tokens` of a run paused on its token budget raises the tokens, and the run goes on to a fix; `resume` points to it', async () => {
  const id = 'cli-paused-on-tokens';
  const worker = cli(['worker']);
  try {
    const handle = await server.client.workflow.start('debugRepository', {
      taskQueue: 'durable-debugger',
      workflowId: id,
      args: [
        {
          repo: join(projectRoot, 'fixtures', '01_off_by_one'),
          budgets: { maxTokens: 3000 },
          pauseOnBudgetMinutes: 10,
        },
      ],
    });
    const deadline = Date.now() + 120_000;
    // A query times out until the worker (started above, slow on a loaded machine) polls: asked again.
    const phase = () =>
      handle.query(statusQuery).then(
        (status) => status.phase,
        () => 'no worker yet',
      );
    while ((await phase()) !== 'paused') {
      assert.ok(Date.now() < deadline, 'the run did not pause');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // `resume` continues an ended run; a paused one is still running: it says what to use instead.
    const refused = await cli(['resume', id, '--more-tokens', '100000']).done;
    assert.equal(refused.code, 2, refused.output);
    assert.match(
      refused.output,
      new RegExp(`${id} is paused on its budget, not ended: raise it with \`durable-debugger raise-budget ${id}\``),
    );
    const resumed = await cli(['raise-budget', id, '--more-tokens', '100000', '--more-minutes', '5']).done;
    assert.equal(resumed.code, 0, resumed.output);
    assert.match(
      resumed.output,
      /Ignored --more-minutes \(the run has no time budget\): budgets that were not set stay unset\./,
    );
    assert.match(resumed.output, new RegExp(`Raised the budget of ${id}: tokens 3000 → \\d+\\.`));
    assert.match(resumed.output, /Status: fixed/);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.done;
  }
});

test('`resume` takes a workflow id no run has used: `-resumed-N` held by a closed and by a running run moves on; a taken --id is refused', async () => {
  const id = 'cli-resume-free-id';
  const first = await cli(['run', 'fixtures/01_off_by_one', '--id', id, '--max-iterations', '3']).done;
  assert.equal(first.code, 1, first.output);
  // The ids a resume would take are held already: a closed run and a running one (no worker serves its queue).
  const start = (workflowId: string) =>
    server.client.workflow.start('debugRepository', {
      taskQueue: `nobody-${process.pid}`,
      workflowId,
      args: [{ repo: '/nowhere' }],
    });
  const closed = await start(`${id}-resumed-2`);
  await closed.terminate('made by the test');
  const running = await start(`${id}-resumed-3`);
  try {
    const resumed = await cli(['resume', id, '--more-iterations', '5']).done;
    assert.equal(resumed.code, 0, resumed.output);
    assert.match(resumed.output, /Continuing cli-resume-free-id in a new run, cli-resume-free-id-resumed-4/);
    assert.match(resumed.output, /Status: fixed/);
    // The closed run still answers for its id: it was not replaced by the resumed one.
    assert.equal(
      (await server.client.workflow.getHandle(`${id}-resumed-2`).describe()).runId,
      closed.firstExecutionRunId,
    );
  } finally {
    await running.terminate('test over');
  }
  const taken = await cli(['resume', id, '--id', `${id}-resumed-2`]).done;
  assert.equal(taken.code, 2, taken.output);
  assert.match(
    taken.output,
    /The workflow id "cli-resume-free-id-resumed-2" is already used by another run; choose another --id/,
  );
});

test('`start --max-cost` with a model that has no listed price says which price the budget counts', async () => {
  const id = 'cli-unpriced-model';
  const started = await cli([
    'start',
    'fixtures/01_off_by_one',
    '--id',
    id,
    '--model',
    'claude-unreleased-9',
    '--max-cost',
    '0.5',
  ]).done;
  await server.client.workflow.getHandle(id).terminate('only the note was wanted');
  assert.equal(started.code, 0, started.output);
  assert.match(
    started.output,
    /Note: claude-unreleased-9 has no listed price, so the cost budget counts it at the highest listed price \(\$10 input, \$50 output/,
  );
  const priced = await cli([
    'start',
    'fixtures/01_off_by_one',
    '--id',
    `${id}-priced`,
    '--model',
    'claude-sonnet-4-6',
    '--max-cost',
    '0.5',
  ]).done;
  await server.client.workflow.getHandle(`${id}-priced`).terminate('only the note was wanted');
  assert.doesNotMatch(priced.output, /no listed price/);
});

test('errors say what is wrong, with a non-zero exit code', async () => {
  const missing = await cli(['run', 'no/such/repo']).done;
  assert.equal(missing.code, 2);
  assert.match(missing.output, /The repository "no\/such\/repo" does not exist/);
  const badNumber = await cli(['run', 'fixtures/01_off_by_one', '--max-iterations', 'lots']).done;
  assert.notEqual(badNumber.code, 0);
  assert.match(badNumber.output, /argument 'lots' is invalid\. expected a positive/);
  const unknown = await cli(['status', 'no-such-run']).done;
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.output, /no-such-run/);
});

test('list shows recent runs with their status, iterations and cost', async () => {
  const listed = await cli(['list', '--json']).done;
  assert.equal(listed.code, 0, listed.output);
  const rows = listed.output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { workflowId: string; status: string; iterations: number });
  const resumed = rows.find((row) => row.workflowId === 'cli-budget-then-resume-resumed-2');
  assert.equal(resumed?.status, 'fixed');
  assert.equal(resumed?.iterations, 6);
});

test(
  'repositories with dependencies through `run`: each environment fixture ends fixed, and the output says how its environment was made',
  { timeout: 900_000 },
  async () => {
    for (const name of [
      '16_pyproject_dependencies',
      '17_requirements_pytest_asyncio',
      '18_ts_vitest',
      '19_js_node_test_semver',
      '20_ts_build_lib',
    ]) {
      const { code, output } = await cli(['run', `fixtures/${name}`, '--id', `cli-environment-${name}-${process.pid}`])
        .done;
      assert.equal(code, 0, output);
      assert.match(output, /Status: fixed/);
      assert.match(output, /environment: (built in \d+ s|reused) \((python|node), \d+ packages\)/);
      assert.match(output, /Environment: (built in \d+ s|reused) \(/);
    }
  },
);
