// Worker options that change how the TypeScript SDK runs workflow code, measured on the floor's
// trivial workflow of the agent's shape (bench/floor/trivialWorkflow.ts), one worker per variant
// in this process, alternating, on a server with the product's settings.
//   node --import tsx bench/workerVariants.ts [repetitions]
// Measured (issue 14, 5 repetitions, a busy 2-core machine): one workflow task running, median
// 10.9 ms with the defaults, 12.7 ms with a context per workflow, 11.6 ms with workflows on the
// main thread; iterations 69.1 / 74.3 / 58.6 ms, within the noise of each other. None is kept.
import type { WorkerOptions } from '@temporalio/worker';
import { startTestServer } from '../harness/devStack.js';
import { formatDispatchFloor, measureFloor, typescriptFloorRunner, type FloorRunner } from './dispatchFloor.js';

const variants: Array<{ name: string; options: Partial<WorkerOptions> }> = [
  { name: 'SDK defaults (one V8 context reused by all workflows, in a worker thread)', options: {} },
  { name: 'reuseV8Context: false (a context per workflow)', options: { reuseV8Context: false } },
  { name: 'debugMode: true (workflows on the main thread; not for production)', options: { debugMode: true } },
];

const server = await startTestServer({ persistent: true, metrics: true });
const runners: FloorRunner[] = [];
try {
  for (const variant of variants) {
    runners.push(
      await typescriptFloorRunner(server.client, server.address, variant.name, variant.options, { agentShaped: true }),
    );
  }
  const result = await measureFloor(server, runners, Number(process.argv[2] ?? 3));
  console.log(formatDispatchFloor(result).join('\n'));
} finally {
  for (const runner of runners) await runner.close();
  await server.stop();
}
