// What the agent's workflow does per iteration besides its two activities, costed one by one on
// the trivial workflow of the dispatch floor (bench/floor/trivialWithExtras.ts): a search-attribute
// upsert, the current details, activity summaries; alternating, on a server with the product's
// settings. (Measured for issue 14 on a 2-core machine: the upsert added 3–13 ms per iteration, more when the machine was busy; the others nothing measurable.)
//   node --import tsx bench/workflowExtras.ts [repetitions]
import { join } from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { startTestServer } from '../lab/support/harness.js';
import { formatDispatchFloor, measureFloor, type FloorRunner } from './dispatchFloor.js';

const silentLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const variants: Array<[string, Record<string, boolean>]> = [
  ['two no-op activities only', {}],
  ['+ upsertSearchAttributes', { upsert: true }],
  ['+ setCurrentDetails', { details: true }],
  ['+ activity summaries', { summaries: true }],
  ['+ all three', { upsert: true, details: true, summaries: true }],
];

const server = await startTestServer({ persistent: true });
const connection = await NativeConnection.connect({ address: server.address });
const taskQueue = `workflow-extras-${process.pid}`;
const worker = await Worker.create({
  connection,
  taskQueue,
  workflowBundle: await bundleWorkflowCode({ workflowsPath: join(import.meta.dirname, 'floor', 'trivialWithExtras.ts'), logger: silentLogger }),
  activities: { async noop() {} },
});
const running = worker.run();
let runs = 0;
const runner = ([name, extras]: (typeof variants)[number]): FloorRunner => ({
  name,
  async run(iterations) {
    runs += 1;
    const workflowId = `${taskQueue}-${runs}`;
    await server.client.workflow.execute('trivialLoopWithExtras', { taskQueue, workflowId, args: [iterations, extras] });
    return workflowId;
  },
  async close() {},
});
try {
  const result = await measureFloor(server.client, variants.map(runner), Number(process.argv[2] ?? 4));
  console.log(formatDispatchFloor(result).join('\n'));
} finally {
  worker.shutdown();
  await running;
  await connection.close();
  await server.stop();
}
