// The cluster for real (`npm run test:cluster`, not part of `npm test`): Temporal's own server on
// PostgreSQL and the Web UI server, as `npm run cluster` runs them. A `durable-debugger worker`
// process serves it, `durable-debugger run` fixes a fixture through it with the model reached as a
// gateway (the fake Anthropic API), the run is found by its search attribute (advanced visibility
// on PostgreSQL), and it is seen in the cluster's Web UI in Chromium.
// A cluster that runs already is used and left running; one this test started is stopped after.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { DebugReport } from '../../src/agent/report.js';
import { clusterStatus, startCluster, stopCluster } from '../../deploy/cluster/clusterLauncher.js';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { clusterAddresses, clusterNamespace } from '../../deploy/cluster/clusterSettings.js';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const children: ChildProcess[] = [];
let startedHere = false;
let fake: FakeAnthropicApi;
let home: string;
let browser: Browser;
let connection: Connection;
// A task queue of this test's own: other workers on the same cluster never take its tasks.
const taskQueue = `cluster-test-${process.pid}`;

before(async () => {
  startedHere = !clusterStatus().every((part) => part.running);
  await startCluster((line) => console.log(`cluster: ${line}`));
  fake = new FakeAnthropicApi({ scripts: scriptsByName(await loadFixtures()) });
  await fake.start();
  home = await mkdtemp(join(tmpdir(), 'durable-debugger-cluster-test-'));
  connection = await Connection.connect({ address: clusterAddresses.temporal });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map((child) =>
      child.exitCode === null ? new Promise((resolve) => child.once('close', resolve)) : Promise.resolve(),
    ),
  );
  await connection?.close();
  await fake?.stop();
  if (home) await rm(home, { recursive: true, force: true });
  if (startedHere) await stopCluster();
});

async function waitForTextInSomeFrame(page: Page, text: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (
        await frame
          .getByText(text)
          .first()
          .isVisible()
          .catch(() => false)
      )
        return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.fail(`the Web UI does not show "${text}" within ${timeoutMs / 1000} s`);
}

/** Our CLI in a real process, against the cluster, with the model behind ANTHROPIC_BASE_URL. */
function cli(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, [...checkoutCli, ...args], {
    cwd: projectRoot,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: clusterAddresses.temporal,
      TEMPORAL_NAMESPACE: clusterNamespace,
      DURABLE_DEBUGGER_TASK_QUEUE: taskQueue,
      DURABLE_DEBUGGER_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, output })),
  );
  return { child, done };
}

test("a run on the cluster ends fixed, is found by its search attribute and is seen in the cluster's Web UI", async () => {
  const worker = cli(['worker']);
  const id = `cluster-01-off-by-one-${Date.now()}`;
  const run = await cli(['run', 'fixtures/01_off_by_one', '--id', id, '--json']).done;
  assert.equal(run.code, 0, run.output);
  const line = run.output
    .split('\n')
    .filter((entry) => entry.startsWith('{"type":"report"'))
    .pop();
  assert.ok(line, run.output);
  const report = (JSON.parse(line) as { report: DebugReport }).report;
  assert.equal(report.status, 'fixed');
  assert.equal(worker.child.exitCode, null, 'the worker runs on');

  // Advanced visibility on PostgreSQL: the run is listed by our search attribute.
  const client = new Client({ connection, namespace: clusterNamespace });
  const deadline = Date.now() + 60_000;
  let found: string[] = [];
  while (found.length === 0 && Date.now() < deadline) {
    found = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${id}' AND DebugStatus = 'fixed'` }))
      found.push(execution.workflowId);
    if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  assert.deepEqual(found, [id]);

  // The cluster's Web UI shows the run's timeline with the activity summaries, and its event history.
  const page = await browser.newPage({ viewport: { width: 1600, height: 1300 } });
  await page.goto(`${clusterAddresses.webUi}/namespaces/${clusterNamespace}/workflows/${id}`, {
    waitUntil: 'networkidle',
  });
  // UI 2.58 renders each activity's summary as markdown in a frame of its own.
  for (const summary of [
    'iteration 1 · run_tests',
    'iteration 1 · model',
    'iteration 4 · edit_file buggy_code.py',
    'verify the fix',
  ]) {
    await waitForTextInSomeFrame(page, summary);
  }
  const folder = join(projectRoot, 'test-output', 'cluster-web-ui');
  await mkdir(folder, { recursive: true });
  await page.screenshot({ path: join(folder, 'run-timeline.png'), fullPage: true });
  await page.getByText('Event History', { exact: false }).first().click();
  await page.getByText('callModel').first().waitFor({ timeout: 30_000 });

  // The workflow list, filtered by our search attribute, lists it.
  await page.goto(
    `${clusterAddresses.webUi}/namespaces/${clusterNamespace}/workflows?query=${encodeURIComponent(`DebugStatus="fixed"`)}`,
    { waitUntil: 'networkidle' },
  );
  await page.getByText(id).first().waitFor({ timeout: 60_000 });
  await page.screenshot({ path: join(folder, 'workflow-list.png'), fullPage: true });
  await page.close();
});
