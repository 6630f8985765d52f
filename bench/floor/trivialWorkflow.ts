// The trivial workflow of the dispatch floor (bench/dispatchFloor.ts): every iteration runs two
// no-op activities, the shape of one agent iteration (two workflow tasks, two activity tasks).
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '30 seconds' });

export async function trivialLoop(iterations: number): Promise<void> {
  for (let iteration = 0; iteration < iterations; iteration++) {
    await noop();
    await noop();
  }
}
