// The trivial workflows of the dispatch floor (bench/dispatchFloor.ts): every iteration runs two
// no-op activities (two workflow tasks, two activity tasks).
//   trivialLoop: both activities on the workflow's own task queue (the SDK may hand them to its
//     worker eagerly, without the server's matching);
//   agentShapedLoop: the agent's shape, activities named like the agent's, each on a task queue
//     of its own (the agent's model calls go to the model endpoint's queue, its tools to the
//     sandbox host's queue), so every activity goes through matching, as the agent's do.
import { proxyActivities } from '@temporalio/workflow';

const timeouts = { startToCloseTimeout: '30 seconds' } as const;
const { noop } = proxyActivities<{ noop(): Promise<void> }>(timeouts);

export async function trivialLoop(iterations: number): Promise<void> {
  for (let iteration = 0; iteration < iterations; iteration++) {
    await noop();
    await noop();
  }
}

export async function agentShapedLoop(iterations: number, queues: { model: string; host: string }): Promise<void> {
  const { callModel } = proxyActivities<{ callModel(): Promise<void> }>({ ...timeouts, taskQueue: queues.model });
  const { runTool } = proxyActivities<{ runTool(): Promise<void> }>({ ...timeouts, taskQueue: queues.host });
  for (let iteration = 0; iteration < iterations; iteration++) {
    await callModel();
    await runTool();
  }
}
