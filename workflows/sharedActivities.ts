// Activities that any worker of the run's queue can do (snapshots, patches, saved states, removing a
// container): the workflow's task queue, or the private queue of the CLI that started the run.
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/sandbox.js';
import { sharedActivityRetry } from '../src/temporal/retryPolicies.js';

export const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '5 minutes',
  retry: sharedActivityRetry,
});

/** The same on the run's private queue when its input names one (the starter's worker), else `shared`. */
export function sharedOf(input: { privateQueue?: string }): typeof shared {
  if (!input.privateQueue) return shared;
  return proxyActivities<SharedActivities>({
    taskQueue: input.privateQueue,
    startToCloseTimeout: '5 minutes',
    retry: sharedActivityRetry,
  });
}
