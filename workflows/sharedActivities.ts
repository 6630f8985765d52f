// Activities that any worker can do (snapshots, patches, saved states, removing a container).
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/sandbox.js';
import { sharedActivityRetry } from '../src/temporal/retryPolicies.js';

export const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '5 minutes',
  retry: sharedActivityRetry,
});
