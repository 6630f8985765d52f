// What the agent's workflow does per iteration besides its two activities, costed one by one on
// the trivial workflow of the dispatch floor (bench/floor/trivialWithExtras.ts): a search-attribute
// upsert, the current details, activity summaries, the agent's activity timeouts, payloads of the
// agent's size; alternating, on a server with the product's settings. Measured for issue 14 on a
// 2-core machine: before the server's transfer queue was read faster, the upsert added 3–13 ms per
// iteration; since, each extra alone is within the noise (25.6–29.6 ms per iteration against
// 29.6 ms with none, 5 repetitions) and all five together take 31.2 ms, the server's own handling
// of the tasks 21.6 ms against 19.6 ms.
//   node --import tsx bench/workflowExtras.ts [repetitions]
import { join } from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startTestServer } from '../harness/devStack.js';
import { formatDispatchFloor, measureFloor, type FloorRunner } from './dispatchFloor.js';

const silentLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const variants: Array<[string, Record<string, boolean>]> = [
  ['two no-op activities only', {}],
  ['+ upsertSearchAttributes', { upsert: true }],
  ['+ setCurrentDetails', { details: true }],
  ['+ activity summaries', { summaries: true }],
  ["+ the agent's activity timeouts (schedule-to-start 30 s, heartbeat 20 s)", { timeouts: true }],
  ["+ payloads of the agent's size (1.5 KB in, 0.8 KB out)", { payloads: true }],
  ['+ all five', { upsert: true, details: true, summaries: true, timeouts: true, payloads: true }],
];

const server = await startTestServer({ persistent: true, metrics: true });
const connection = await NativeConnection.connect({ address: server.address });
const taskQueue = `workflow-extras-${process.pid}`;
const worker = await Worker.create({
  connection,
  taskQueue,
  workflowBundle: await bundleWorkflowCode({
    workflowsPath: join(import.meta.dirname, 'floor', 'trivialWithExtras.ts'),
    logger: silentLogger,
  }),
  activities: {
    async noop(_input?: string, resultBytes?: number) {
      return resultBytes ? 'x'.repeat(resultBytes) : undefined;
    },
  },
});
const running = worker.run();
let runs = 0;
const runner = ([name, extras]: (typeof variants)[number]): FloorRunner => ({
  name,
  async run(iterations) {
    runs += 1;
    const workflowId = `${taskQueue}-${runs}`;
    await server.client.workflow.execute('trivialLoopWithExtras', {
      taskQueue,
      workflowId,
      args: [iterations, extras],
    });
    return workflowId;
  },
  async close() {},
});
try {
  const result = await measureFloor(server, variants.map(runner), Number(process.argv[2] ?? 4));
  console.log(formatDispatchFloor(result).join('\n'));
} finally {
  worker.shutdown();
  await running;
  await connection.close();
  await server.stop();
}
