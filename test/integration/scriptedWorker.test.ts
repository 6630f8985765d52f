// `durable-debugger worker --scripted` as docs/deployment.md has a person use it, offline: the worker
// answers the model calls of a fixture run started by `run` without an API key (the default
// endpoint) with the fixture's scripted responses. Then `watch` and `status` of the closed run:
// while a worker serves the task queue its last status is answered by replay; once none does, by
// the report, without waiting for the query to time out.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import type { DebugReport } from '../../src/agent/report.js';
import { containersOf, startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, runCli, startCli, type CliProcess } from '../support/cli.js';

// No key and no gateway anywhere: the scripted worker is the only model there is.
const offline = { ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' };

let server: TestServer;
let worker: CliProcess | undefined;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  killCliProcesses();
  await server?.stop();
});

async function waitFor(predicate: () => boolean, what: () => string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const start = Date.now();
  const result = await work();
  return { result, ms: Date.now() - start };
}

/** SIGTERM, as Ctrl-C would: the worker shuts down cleanly and exits 0. */
async function stopWorker(): Promise<void> {
  if (!worker || worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGTERM');
  const stopped = await worker.done;
  assert.equal(stopped.code, 0, stopped.output);
}

test(
  '`worker --scripted` fixes a fixture run started by `run` without a key; `watch` and `status` of the closed run show its last status, then at once its report once no worker is left',
  { timeout: 600_000 },
  async () => {
    try {
      worker = startCli(server, ['worker', '--scripted'], offline);
      const started = worker;
      await waitFor(
        () => started.output().includes('Worker ready') || started.child.exitCode !== null,
        () => started.output(),
      );
      assert.match(started.output(), /SCRIPTED MODEL: model calls are answered by fixtures\/<name>\/script\.json/);
      assert.match(started.output(), /Model calls: the scripted model and the default endpoint/);

      const id = 'scripted-worker-off-by-one';
      const run = await runCli(server, ['run', join(projectRoot, 'fixtures', '01_off_by_one'), '--id', id], offline);
      assert.equal(run.code, 0, run.output);
      assert.match(run.output, /Status: fixed/);
      const report = (await server.client.workflow.getHandle(id).result()) as DebugReport;
      assert.equal(report.status, 'fixed');
      assert.match(
        report.answeredBy ?? '',
        /scripted responses \(fixtures\/\*\/script\.json\) played by a local fake Anthropic API/,
      );

      // The run is closed; the scripted worker still serves its task queue and answers its queries.
      const watched = await runCli(server, ['watch', id, '--json'], offline);
      assert.equal(watched.code, 0, watched.output);
      const statuses = watched.stdout
        .split('\n')
        .filter((line) => line.startsWith('{"type":"status"'))
        .map((line) => (JSON.parse(line) as { status: { phase: string; iteration: number } }).status);
      assert.equal(statuses.length, 1, watched.stdout);
      assert.equal(statuses[0]?.phase, 'done');
      assert.equal(statuses[0]?.iteration, report.iterations);
      const status = await runCli(server, ['status', id], offline);
      assert.equal(status.code, 0, status.output);
      assert.match(status.stdout, new RegExp(`${id} · completed · phase done\n`));
      assert.match(status.stdout, new RegExp(`iteration ${report.iterations}/`));

      // No worker at all: the queries cannot be answered, the report still can, at once (the server
      // would hold a query of a run nobody replays for about 30 s). The bound leaves room for a CLI
      // that starts slowly on a loaded machine and still tells such a hold apart.
      await stopWorker();
      const unserved = await timed(() => runCli(server, ['watch', id], offline));
      assert.equal(unserved.result.code, 0, unserved.result.output);
      assert.match(unserved.result.output, /Status: fixed/);
      assert.ok(unserved.ms < 25_000, `watch took ${unserved.ms} ms`);
      const unservedStatus = await timed(() => runCli(server, ['status', id], offline));
      assert.equal(unservedStatus.result.code, 0, unservedStatus.result.output);
      assert.match(unservedStatus.result.stdout, new RegExp(`${id} · completed · status fixed`));
      assert.match(unservedStatus.result.stdout, new RegExp(`${report.iterations} iterations`));
      assert.match(unservedStatus.result.stdout, /live status needs a running worker .*durable-debugger worker/);
      assert.ok(unservedStatus.ms < 25_000, `status took ${unservedStatus.ms} ms`);
      const unservedJson = await timed(() => runCli(server, ['status', id, '--json'], offline));
      assert.equal(unservedJson.result.code, 0, unservedJson.result.output);
      const line = JSON.parse(unservedJson.result.stdout) as {
        workflowStatus: string;
        report: { status: string; iterations: number };
      };
      assert.equal(line.workflowStatus, 'COMPLETED');
      assert.equal(line.report.status, 'fixed');
      assert.equal(line.report.iterations, report.iterations);
      assert.ok(unservedJson.ms < 25_000, `status --json took ${unservedJson.ms} ms`);
    } finally {
      await stopWorker().catch(() => worker?.child.kill('SIGKILL'));
    }
    assert.equal(await containersOf(server), 0, 'no sandbox container is left behind');
  },
);
