// What the parent of parallel attempts asks outside the workflow: the usage of an attempt that
// ended without a report (cancelled by first-wins, or failed), read through its status query
// (a closed run replays to answer it).
import type { Client } from '@temporalio/client';
import type { TokenUsage } from '../src/agent/budgets.js';
import { statusQuery } from '../src/temporal/definitions.js';

export interface AttemptUsage {
  iterations: number;
  tokens: TokenUsage;
  costUsd: number | null;
}

export function createAttemptActivities(temporal: Client) {
  return {
    /** Null when the attempt never started (cancelled before its start) or cannot answer. */
    async attemptUsage(request: { workflowId: string }): Promise<AttemptUsage | null> {
      try {
        const status = await temporal.workflow.getHandle(request.workflowId).query(statusQuery);
        return { iterations: status.iteration, tokens: status.tokens, costUsd: status.costUsd };
      } catch {
        return null;
      }
    },
  };
}

export type AttemptActivities = ReturnType<typeof createAttemptActivities>;
