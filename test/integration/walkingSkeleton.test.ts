// The thinnest complete slice, on the real parts: the real Temporal dev server, real Docker,
// and the real Anthropic SDK talking HTTP to the fake API playing fixtures/01_off_by_one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { sandboxIdFor } from '../../src/agent/ids.js';
import { connectDocker, containerName } from '../../src/sandbox/container/container.js';
import { loadFixture, scriptsByName, fixtureInput } from '../../src/demo/fixtures.js';
import {
  containersOf,
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let worker: TestWorker;

before(async () => {
  server = await startTestServer();
  const fixture = await loadFixture('01_off_by_one');
  worker = await startTestWorker(server, { fake: { scripts: scriptsByName([fixture]) } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

test('fixes 01_off_by_one: tests run in the sandbox container, the fix is verified, the patch applies', async () => {
  const fixture = await loadFixture('01_off_by_one');
  const docker = connectDocker();
  const since = Math.floor(Date.now() / 1000) - 1;
  const { report, handle } = await runToReport(server, worker.taskQueue, fixtureInput(fixture));

  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.stopCondition, 'finish_verified');
  assert.match(report.rootCause ?? '', /range\(len\(items\) - 1\)/);
  assert.deepEqual(report.testsBefore?.failing, ['test_buggy_code.py::test_max_at_the_end']);
  assert.equal(report.testsAfter?.failed, 0);
  assert.equal(report.testsAfter?.passed, 5);

  // Every model turn went over HTTP to the fake API, and none broke the API's rules.
  assert.equal(worker.fake.requests.length, 6);
  assert.equal(worker.fake.rejected.length, 0);

  // The test commands ran inside the run's sandbox container, not on the host.
  const sandbox = containerName(sandboxIdFor(handle.workflowId));
  const events = await dockerEventsSince(docker, since);
  const execs = events.filter(
    (event) => event.Action?.startsWith('exec_start') && event.Actor?.Attributes?.name === sandbox,
  );
  assert.ok(
    execs.some((event) => event.Action?.includes('pytest')),
    `no pytest exec in ${sandbox}`,
  );
  assert.ok(
    events.some((event) => event.Action === 'destroy' && event.Actor?.Attributes?.name === sandbox),
    'container not destroyed',
  );

  // The workflow ran the tests itself after finish (verification, in a fresh sandbox), then built the patch.
  const activities = await activityTypes(handle);
  // The run takes its place in the sandbox queue first; the queue's workflow claims a host for it.
  assert.deepEqual(activities.slice(0, 5), [
    'requestSandbox',
    'snapshotRepository',
    'prepareEnvironment',
    'prepareSandbox',
    'runTestSuite',
  ]);
  const lastModelCall = activities.lastIndexOf('callModel');
  assert.deepEqual(activities.slice(lastModelCall), [
    'callModel',
    'prepareSandbox',
    'runTestSuite',
    'computePatch',
    'destroySandbox',
  ]);

  // The patch fixes a fresh copy of the fixture, on the host.
  const copy = await mkdtemp(join(tmpdir(), 'patched-'));
  try {
    await cp(fixture.path, copy, { recursive: true });
    await writeFile(join(copy, 'fix.patch'), report.patch);
    execFileSync('git', ['apply', 'fix.patch'], { cwd: copy });
    execFileSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], {
      cwd: copy,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
  assert.equal(await containersOf(server), 0);
});

test('a finish without a fix is not reported as fixed', async () => {
  const fixture = await loadFixture('01_off_by_one');
  const lazy = await startTestWorker(server, {
    fake: {
      scripts: {
        '01_off_by_one': {
          responses: [
            { thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] },
            {
              thought: 'Looks fine to me.',
              tool_calls: [{ name: 'finish', input: { root_cause: 'nothing is wrong' } }],
            },
          ],
        },
      },
    },
  });
  try {
    const { report } = await runToReport(server, lazy.taskQueue, fixtureInput(fixture));
    assert.notEqual(report.status, 'fixed');
    assert.equal(report.testsAfter?.failed, 1);
    assert.equal(report.patch, '');
    // The model was told its finish was not verified.
    const third = lazy.fake.requests[2]?.body.messages as Array<{
      role: string;
      content: Array<{ type: string; is_error?: boolean; content?: string }>;
    }>;
    const verdict = third[third.length - 1]?.content.find((block) => block.type === 'tool_result');
    assert.equal(verdict?.is_error, true);
    assert.match(verdict?.content ?? '', /not verified/);
  } finally {
    await lazy.stop();
  }
});

interface DockerEvent {
  Action?: string;
  Actor?: { Attributes?: Record<string, string> };
}

async function dockerEventsSince(docker: ReturnType<typeof connectDocker>, since: number): Promise<DockerEvent[]> {
  const stream = (await docker.getEvents({ since, until: Math.floor(Date.now() / 1000) + 1 })) as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as DockerEvent);
}
