// The retry policies of the run's activities, named, each limit with its reason. Workflow code
// imports them (src/temporal sits below workflows/).
import type { RetryPolicy } from '@temporalio/common';
import { environmentFailure } from '../agent/environment.js';
import { sandboxNeedsPrepare } from '../agent/sandboxProtocol.js';

/** Quick, idempotent activities on any worker (snapshot, patch, saved state, host claim); bad input is final. */
export const sharedActivityRetry: RetryPolicy = { maximumAttempts: 5, nonRetryableErrorTypes: ['InvalidInput'] };

/** The approval gate's shared activities (the patch): quick and idempotent. */
export const approvalActivityRetry: RetryPolicy = { maximumAttempts: 5 };

/**
 * Model calls: overloads and rate limits pass within minutes, so eight attempts back off up to a
 * minute apart; failures that cannot pass (authentication, a bad request) are non-retryable where
 * they are classified (src/model/errors.ts).
 */
export const modelCallRetry: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 8,
};

/** Sandbox work on its host; a sandbox that must be prepared again is not retried here but prepared by the workflow. */
export const sandboxActivityRetry: RetryPolicy = {
  initialInterval: '1 second',
  maximumAttempts: 5,
  nonRetryableErrorTypes: [sandboxNeedsPrepare],
};

/** The environment build (installs, with network): a failed install is final, a flaky download gets three tries. */
export const environmentActivityRetry: RetryPolicy = {
  initialInterval: '5 seconds',
  maximumAttempts: 3,
  nonRetryableErrorTypes: [environmentFailure, 'InvalidInput'],
};

/** The attempts' bookkeeping activities (parallel attempts, workflows/attemptsParent.ts). */
export const attemptActivityRetry: RetryPolicy = { maximumAttempts: 3 };
