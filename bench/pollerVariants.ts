// Hypothesis 2 of issue 14, measured: do the TypeScript SDK worker's poller settings change how
// long tasks wait? The trivial workflow of the dispatch floor, on one TypeScript worker per
// setting (each on its own task queue, all in this process), alternating, with the bare gRPC loop
// (no SDK worker) beside them as the server's own floor. Every variant changes one setting.
//   node --import tsx bench/pollerVariants.ts [repetitions] [extra dev server flags…]
import type { WorkerOptions } from '@temporalio/worker';
import { startTestServer } from '../harness/devStack.js';
import { devServerFlags } from '../src/temporal/serverSettings.js';
import {
  formatDispatchFloor,
  measureFloor,
  pythonFloorRunners,
  typescriptFloorRunner,
  type FloorRunner,
} from './dispatchFloor.js';

export const pollerVariants: Array<{ name: string; options: Partial<WorkerOptions> }> = [
  { name: 'SDK defaults', options: {} },
  {
    name: 'fixed pollers: 20 workflow, 20 activity',
    options: { maxConcurrentWorkflowTaskPolls: 20, maxConcurrentActivityTaskPolls: 20 },
  },
  {
    name: 'fixed pollers: 2 workflow, 1 activity',
    options: { maxConcurrentWorkflowTaskPolls: 2, maxConcurrentActivityTaskPolls: 1 },
  },
  {
    name: 'autoscaling pollers',
    options: {
      workflowTaskPollerBehavior: { type: 'autoscaling' },
      activityTaskPollerBehavior: { type: 'autoscaling' },
    },
  },
  { name: 'nonStickyToStickyPollRatio 1', options: { nonStickyToStickyPollRatio: 1 } },
  { name: 'no workflow cache (no sticky queue)', options: { maxCachedWorkflows: 0 } },
  { name: 'no eager activity dispatch', options: { maxEagerActivityReservationsPerWorkflowTask: 0 } },
];

const repetitions = Number(process.argv[2] ?? 3);
// The product's server settings, and any flags given after them.
const server = await startTestServer({
  persistent: true,
  extraArgs: [...devServerFlags({ databaseFile: true }), ...process.argv.slice(3)],
  metrics: true,
});
const runners: FloorRunner[] = [];
try {
  const python = await pythonFloorRunners(server.address, server.client.options.namespace);
  runners.push(python.raw);
  for (const variant of pollerVariants)
    runners.push(await typescriptFloorRunner(server.client, server.address, variant.name, variant.options));
  const result = await measureFloor(server, runners, repetitions);
  console.log(formatDispatchFloor(result).join('\n'));
  await python.sdk.close();
} finally {
  for (const runner of runners.slice(1)) await runner.close();
  await server.stop();
}
