// `durable-debugger worker --scripted` as the README has a person use it, offline: the worker
// answers the model calls of a fixture run started by `run` without an API key (the default
// endpoint) with the fixture's scripted responses. Then `watch` of the closed run: while a worker
// serves the task queue its last status is answered by replay; once none does, by the report.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import type { DebugReport } from '../../src/agent/report.js';
import { containersOf, startTestServer, type TestServer } from '../../lab/support/harness.js';
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

/** SIGTERM, as Ctrl-C would: the worker shuts down cleanly and exits 0. */
async function stopWorker(): Promise<void> {
  if (!worker || worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGTERM');
  const stopped = await worker.done;
  assert.equal(stopped.code, 0, stopped.output);
}

test('`worker --scripted` fixes a fixture run started by `run` without a key; `watch` of the closed run shows its last status, then its report once no worker is left', { timeout: 600_000 }, async () => {
  try {
    worker = startCli(server, ['worker', '--scripted'], offline);
    const started = worker;
    await waitFor(() => started.output().includes('Worker ready') || started.child.exitCode !== null, () => started.output());
    assert.match(started.output(), /SCRIPTED MODEL: model calls are answered by fixtures\/<name>\/script\.json/);
    assert.match(started.output(), /Model calls: the scripted model and the default endpoint/);

    const id = 'scripted-worker-off-by-one';
    const run = await runCli(server, ['run', join(projectRoot, 'fixtures', '01_off_by_one'), '--id', id], offline);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /Status: fixed/);
    const report = (await server.client.workflow.getHandle(id).result()) as DebugReport;
    assert.equal(report.status, 'fixed');
    assert.match(report.answeredBy ?? '', /scripted responses \(fixtures\/\*\/script\.json\) played by a local fake Anthropic API/);

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

    // No worker at all: the queries cannot be answered, the report still can.
    await stopWorker();
    const unserved = await runCli(server, ['watch', id], offline);
    assert.equal(unserved.code, 0, unserved.output);
    assert.match(unserved.output, /Status: fixed/);
  } finally {
    await stopWorker().catch(() => worker?.child.kill('SIGKILL'));
  }
  assert.equal(await containersOf(server), 0, 'no sandbox container is left behind');
});
