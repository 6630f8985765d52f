// The model activity gets its conversation without a round trip through the server: its input
// carries only what changed since the run's previous model call, and the worker rebuilds the rest
// from what it kept of that call. A worker that did not make that call (another worker, a restart)
// reads the transcript query instead, and the run goes on unchanged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi, type RecordedRequest } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { Script, ScriptStep } from '../../src/demo/script.js';
import { startTestServer, startTestWorker, uniqueTaskQueue, type TestServer } from '../../harness/devStack.js';

let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

const listFiles: ScriptStep = { thought: 'Listing the files.', tool_calls: [{ name: 'list_files', input: {} }] };
/** Six iterations of list_files before the fixture's own script fixes the bug. */
const longerScript = (): Script => ({ responses: [...Array(6).fill(listFiles), ...fixture.script.responses] });

/** Each request sends the whole conversation so far: two more messages than the one before. */
function assertWholeConversations(requests: RecordedRequest[]): void {
  const lengths = requests.map((request) => (request.body.messages as unknown[]).length);
  lengths
    .slice(1)
    .forEach((length, index) =>
      assert.equal(length, (lengths[index] as number) + 2, `request lengths ${lengths.join(', ')}`),
    );
}

test('a run served by one worker never reads the transcript query: every model call rebuilds its conversation from the cache', async () => {
  const sources: string[] = [];
  const worker = await startTestWorker(server, {
    fake: { scripts: { [fixture.name]: longerScript() } },
    onTranscript: (source) => sources.push(source),
  });
  try {
    const handle = await startDebugRun(server.client, { input: fixtureInput(fixture), taskQueue: worker.taskQueue });
    const report = await handle.result();
    assert.equal(report.status, 'fixed');
    assert.equal(sources.length, worker.fake.requests.length);
    assert.deepEqual(
      sources.filter((source) => source !== 'cache'),
      [],
      `sources: ${sources.join(', ')}`,
    );
    assertWholeConversations(worker.fake.requests);
  } finally {
    await worker.stop();
  }
});

test('a worker that did not make the previous model call reads the transcript query once, and the run goes on', async () => {
  const fake = new FakeAnthropicApi({ scripts: { [fixture.name]: longerScript() } });
  await fake.start();
  const taskQueue = uniqueTaskQueue('transcript-cache');
  const firstSources: string[] = [];
  const first = await startTestWorker(server, { fake, taskQueue, onTranscript: (source) => firstSources.push(source) });
  let second: Awaited<ReturnType<typeof startTestWorker>> | null = null;
  try {
    const handle = await startDebugRun(server.client, { input: fixtureInput(fixture), taskQueue });
    while (fake.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await first.stop();
    const secondSources: string[] = [];
    second = await startTestWorker(server, { fake, taskQueue, onTranscript: (source) => secondSources.push(source) });
    const report = await handle.result();
    assert.equal(report.status, 'fixed');
    assert.equal(secondSources[0], 'query', `the new worker's sources: ${secondSources.join(', ')}`);
    assert.deepEqual(
      secondSources.slice(1).filter((source) => source !== 'cache'),
      [],
    );
    assert.deepEqual(
      firstSources.filter((source) => source !== 'cache'),
      [],
    );
    assertWholeConversations(fake.requests.filter((request) => request.status === 200));
  } finally {
    await second?.stop();
    await fake.stop();
  }
});
