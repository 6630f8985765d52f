// A run tells the worker that closes it its last status and transcript (the RunSinks of
// src/temporal/definitions.ts), so that a command following it in that process reads them without
// a replay: what it leaves is what its queries answer after the close, and a run closed on another
// worker leaves nothing here (the follower then asks the queries, as before).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import { expectClosingView } from '../../src/temporal/closingViews.js';
import { statusQuery, transcriptQuery } from '../../src/temporal/definitions.js';
import { startTestServer, startTestWorker, type TestServer } from '../../harness/devStack.js';

let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

test("the worker that closes a run keeps its last answers for a follower in its process: the same as its queries' after the close", async () => {
  const worker = await startTestWorker(server, { fake: { scripts: { [fixture.name]: fixture.script } } });
  try {
    const workflowId = `closing-view-${Date.now()}`;
    const closing = expectClosingView(workflowId);
    const handle = await startDebugRun(server.client, {
      input: fixtureInput(fixture),
      taskQueue: worker.taskQueue,
      workflowId,
    });
    assert.equal((await handle.result()).status, 'fixed');
    const { runId } = await handle.describe();
    const view = closing.take(runId);
    assert.ok(view, 'the closing run left its view');
    const [status, transcript] = view;
    // One after the other, as the follower asks a closed run (src/cli/follow.ts, askInTurn).
    const queriedStatus = await handle.query(statusQuery);
    const queriedTranscript = await handle.query(transcriptQuery);
    assert.deepEqual(transcript, queriedTranscript);
    assert.ok(transcript.messages.length > 2, `${transcript.messages.length} messages`);
    assert.equal(status.phase, 'done');
    assert.deepEqual({ ...status, elapsedMs: 0 }, { ...queriedStatus, elapsedMs: 0 });
    assert.equal(closing.take(runId), null, 'taken once');
  } finally {
    await worker.stop();
  }
});

test('a run nobody here follows leaves nothing behind', async () => {
  const worker = await startTestWorker(server, { fake: { scripts: { [fixture.name]: fixture.script } } });
  try {
    const handle = await startDebugRun(server.client, { input: fixtureInput(fixture), taskQueue: worker.taskQueue });
    await handle.result();
    const { runId } = await handle.describe();
    // Expected only after it closed: the view was not kept.
    assert.equal(expectClosingView(handle.workflowId).take(runId), null);
  } finally {
    await worker.stop();
  }
});
