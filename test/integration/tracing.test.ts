// OpenTelemetry tracing (issue 26): with an OTLP endpoint configured, a real run on the dev server
// and real Docker sends its spans over OTLP/HTTP to a collector stand-in (a real HTTP server that
// keeps what it receives): the workflow, each model call and each tool call, in one trace.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { fixtureInput, loadFixture, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';

interface ReceivedSpan {
  name: string;
  traceId: string;
}

let server: TestServer;
let worker: TestWorker;
let fixture: Fixture;
let collector: Server;
const received: ReceivedSpan[] = [];
const paths: string[] = [];

before(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(request.url ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: ReceivedSpan[] }> }>;
      };
      for (const resource of body.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans) received.push({ name: span.name, traceId: span.traceId });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const port = (collector.address() as AddressInfo).port;
  server = await startTestServer();
  fixture = await loadFixture('01_off_by_one');
  worker = await startTestWorker(server, {
    fake: { scripts: scriptsByName([fixture]), latencyMs: 200 },
    configOverrides: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
  });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await new Promise((resolve) => collector?.close(resolve));
});

test('with an OTLP endpoint, a run sends spans for its workflow, model calls and tool calls', async () => {
  const handle = await startDebugRun(server.client, {
    input: fixtureInput(fixture),
    taskQueue: worker.taskQueue,
    workflowId: `tracing-${process.pid}`,
  });
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);

  const wanted = ['RunWorkflow:debugRepository', 'RunActivity:callModel', 'RunActivity:runTool'];
  const deadline = Date.now() + 20_000;
  const names = () => new Set(received.map((span) => span.name));
  while (Date.now() < deadline && !wanted.every((name) => names().has(name)))
    await new Promise((resolve) => setTimeout(resolve, 250));
  assert.deepEqual(
    wanted.filter((name) => !names().has(name)),
    [],
    `spans received: ${[...names()].join(', ')}`,
  );
  assert.ok(
    paths.every((path) => path === '/v1/traces'),
    paths.join(', '),
  );
  // The model and tool calls belong to the workflow's trace.
  const trace = received.find((span) => span.name === 'RunWorkflow:debugRepository')?.traceId;
  const modelCalls = received.filter((span) => span.name === 'RunActivity:callModel');
  assert.ok(modelCalls.length >= 2);
  assert.ok(
    modelCalls.every((span) => span.traceId === trace),
    'model call spans in the workflow trace',
  );
  assert.ok(received.filter((span) => span.name === 'RunActivity:runTool').every((span) => span.traceId === trace));
});
