// Iterations and cost reach the run's search attributes at most every few seconds (each upsert is
// a visibility write on the server, issue 14), and their final values always at the end.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import proto from '@temporalio/proto';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, type Fixture } from '../../src/demo/fixtures.js';
import type { ScriptStep } from '../../src/demo/script.js';
import { searchAttributes } from '../../src/temporal/definitions.js';
import { startTestServer, startTestWorker, type TestServer } from '../../harness/devStack.js';

const EventType = proto.temporal.api.enums.v1.EventType;
let server: TestServer;
let fixture: Fixture;

before(async () => {
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
});
after(async () => server?.stop());

test('a run of quick iterations upserts its progress a few times, not once per iteration, and ends with the final values', async () => {
  const listFiles: ScriptStep = { thought: 'Listing the files.', tool_calls: [{ name: 'list_files', input: {} }] };
  const worker = await startTestWorker(server, {
    fake: { scripts: { [fixture.name]: { responses: [...Array(8).fill(listFiles), ...fixture.script.responses] } } },
  });
  try {
    const handle = await startDebugRun(server.client, { input: fixtureInput(fixture), taskQueue: worker.taskQueue });
    const report = await handle.result();
    assert.equal(report.status, 'fixed');
    const events = (await handle.fetchHistory()).events ?? [];
    // The SDK's own upserts of TemporalChangeVersion (one per patched() a run records) are not progress.
    const upserts = events.filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES &&
        Object.keys(event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}).some(
          (key) => key !== 'TemporalChangeVersion',
        ),
    ).length;
    // The first iteration, at most one more per 5 s, 'running' at the start and the final one.
    const seconds = report.durationMs / 1000;
    assert.ok(
      upserts <= 3 + Math.ceil(seconds / 5),
      `${upserts} upserts in ${report.iterations} iterations over ${seconds} s`,
    );
    assert.ok(upserts < report.iterations, `${upserts} upserts in ${report.iterations} iterations`);
    const attributes = (await handle.describe()).typedSearchAttributes;
    assert.equal(attributes.get(searchAttributes.iterations), report.iterations);
    assert.equal(attributes.get(searchAttributes.status), 'fixed');
    assert.equal(typeof attributes.get(searchAttributes.costUsd), 'number');
  } finally {
    await worker.stop();
  }
});
