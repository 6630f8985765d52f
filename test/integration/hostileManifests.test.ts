// A repository's manifests, read by the worker on the host to plan its environment, as an attacker
// commits them (issue 33 item 2): `.nvmrc` a symlink to the worker's own /proc/self/environ (where
// its API key is), `pyproject.toml` a symlink to /dev/zero. The worker runs in a process of its own,
// started with a canary API key, as a user's worker is; the runs go through the real server and Docker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import proto from '@temporalio/proto';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { connectDocker } from '../../src/sandbox/container/container.js';
import {
  startTestServer,
  startWorkerProcess,
  uniqueTaskQueue,
  type TestServer,
  type WorkerProcess,
} from '../../harness/devStack.js';

const apiKey = `sk-ant-api03-hostile-${randomBytes(8).toString('hex')}`;
let server: TestServer;
let fake: FakeAnthropicApi;
let worker: WorkerProcess;
let taskQueue: string;
let scratch: string;
const imagesBuilt = new Set<string>();

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({ scripts: {} });
  await fake.start();
  scratch = await mkdtemp(join(tmpdir(), 'hostile-manifests-'));
  taskQueue = uniqueTaskQueue('hostile-manifests');
  worker = await startWorkerProcess(server, {
    taskQueue,
    hostId: 'hostile-manifests',
    fakeUrl: fake.url,
    env: { ANTHROPIC_API_KEY: apiKey },
  });
});

after(async () => {
  await worker?.stop();
  await fake?.stop();
  await server?.stop();
  for (const image of imagesBuilt)
    await connectDocker()
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

async function runRepository(name: string, files: Record<string, string>, links: Record<string, string>) {
  const repo = join(scratch, name);
  await mkdir(repo, { recursive: true });
  for (const [path, text] of Object.entries(files)) await writeFile(join(repo, path), text);
  for (const [path, target] of Object.entries(links)) await symlink(target, join(repo, path));
  const handle = await startDebugRun(server.client, { input: { repo }, taskQueue });
  const report = (await handle.result()) as DebugReport;
  if (report.environment) imagesBuilt.add(report.environment.image);
  // Every byte of the run's history: its payloads are JSON in the encoded events.
  const history = Buffer.from(proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish());
  return { report, history };
}

test(
  'a committed .nvmrc -> /proc/self/environ is not followed: the worker’s API key is in no report and no history',
  { timeout: 600_000 },
  async () => {
    const requestsBefore = fake.requests.length;
    const { report, history } = await runRepository(
      'nvmrc_environ',
      {
        'package.json': JSON.stringify({
          name: 'nvmrc-environ',
          version: '1.0.0',
          scripts: { test: 'node --test' },
          devDependencies: { 'left-pad': '1.3.0' },
        }),
        'add.test.js':
          "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.equal(1 + 1, 2));\n",
      },
      { '.nvmrc': '/proc/self/environ' },
    );
    assert.doesNotMatch(JSON.stringify(report), new RegExp(apiKey), 'the report holds the worker’s API key');
    assert.equal(history.includes(apiKey), false, 'the run’s history holds the worker’s API key');
    assert.doesNotMatch(
      JSON.stringify(report),
      /ANTHROPIC_|TEMPORAL_ADDRESS=/,
      'the report holds the worker’s environment',
    );
    // The link is left out as if absent: the host's Node major, and the tests ran.
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(report.environment?.description ?? '', /node/);
    assert.equal(fake.requests.length, requestsBefore, 'no model call');
  },
);

test(
  'a committed pyproject.toml -> /dev/zero is not read: the run goes on without it',
  { timeout: 600_000 },
  async () => {
    const { report } = await runRepository(
      'pyproject_dev_zero',
      { 'test_ok.py': 'def test_ok():\n    assert True\n' },
      { 'pyproject.toml': '/dev/zero', '.durable-debugger-ignore': '/dev/zero' },
    );
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
  },
);
