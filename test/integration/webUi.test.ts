// The Temporal Web UI, seen in a real browser (Debian's Chromium driven by playwright-core):
// a finished run shows its activities with their summaries, and a screenshot is kept under
// test-output/ for a person to look at.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { projectRoot } from '../../src/config.js';
import { fixtureInput, loadFixture, scriptsByName } from '../../src/demo/fixtures.js';
import {
  freePort,
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let server: TestServer;
let worker: TestWorker;
let browser: Browser;
let uiPort: number;

before(async () => {
  uiPort = await freePort();
  server = await startTestServer({ uiPort });
  const fixture = await loadFixture('01_off_by_one');
  worker = await startTestWorker(server, { fake: { scripts: scriptsByName([fixture]) } });
  // Flags as this workplace's probe used them: no sandbox as root, no background network.
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
  await worker?.stop();
  await server?.stop();
});

test('a finished run shows its activity summaries in the Web UI', async () => {
  const fixture = await loadFixture('01_off_by_one');
  const { report, handle } = await runToReport(server, worker.taskQueue, fixtureInput(fixture));
  assert.equal(report.status, 'fixed');

  const page = await browser.newPage({ viewport: { width: 1600, height: 1300 } });
  await page.goto(`http://127.0.0.1:${uiPort}/namespaces/default/workflows/${handle.workflowId}`, {
    waitUntil: 'networkidle',
  });
  // The timeline names each activity by its summary.
  await page.getByText('iteration 1 · run_tests').first().waitFor({ timeout: 30_000 });
  for (const summary of [
    'iteration 1 · model',
    'iteration 3 · read_file buggy_code.py',
    'iteration 4 · edit_file buggy_code.py',
    'verify the fix',
  ]) {
    assert.ok(await page.getByText(summary).first().isVisible(), `the UI shows "${summary}"`);
  }
  const folder = join(projectRoot, 'test-output', 'web-ui');
  await mkdir(folder, { recursive: true });
  await page.screenshot({ path: join(folder, 'run-timeline.png'), fullPage: true });

  // The event history lists the activities too.
  await page.getByText('Event History', { exact: false }).first().click();
  await page.getByText('callModel').first().waitFor({ timeout: 30_000 });
  assert.ok(await page.getByText('runTool').first().isVisible());
  await page.screenshot({ path: join(folder, 'run-event-history.png'), fullPage: true });

  // The run's static summary and details (repository and goal).
  await page.getByText('User Metadata').first().click();
  // The UI renders summaries and details as markdown, each in a frame of its own.
  await page.frameLocator('#user-metadata-summary').getByText('Debug 01_off_by_one').waitFor({ timeout: 30_000 });
  await page
    .frameLocator('#user-metadata-details')
    .getByText(`Repository: ${fixture.path}`)
    .waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(folder, 'run-user-metadata.png'), fullPage: true });
  await page.close();
});
