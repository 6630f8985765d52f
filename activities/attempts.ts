// What the parent of parallel attempts asks outside the workflow: the usage of an attempt that
// ended without a report (cancelled by first-wins, or failed), read through its status query
// (a closed run replays to answer it), and, when it resumes an interrupted parent, what became
// of that parent's attempts.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { EarlierAttempt } from '../src/agent/parallelAttempts.js';
import type { TokenUsage } from '../src/agent/budgets.js';
import type { DebugReport } from '../src/agent/report.js';
import { statusQuery } from '../src/temporal/definitions.js';

export interface AttemptUsage {
  iterations: number;
  tokens: TokenUsage;
  costUsd: number | null;
}

const invalidInput = (message: string) => ApplicationFailure.nonRetryable(`resumeFrom: ${message}`, 'InvalidInput');

export function createAttemptActivities(temporal: Client) {
  /** One attempt of the earlier parent: finished with a report, ended without one, or never started. */
  async function earlierAttempt(attempt: number, workflowId: string, resumedBy: string): Promise<EarlierAttempt> {
    const handle = temporal.workflow.getHandle(workflowId);
    const description = await handle.describe().catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    });
    if (!description) return { attempt, workflowId, found: 'not_started' };
    if (description.status.name === 'COMPLETED')
      return { attempt, workflowId, found: 'finished', report: (await handle.result()) as DebugReport };
    if (description.status.name === 'RUNNING') {
      // Its parent has ended, so nobody waits for it: it ends here, and goes on in the new attempt.
      await handle.terminate(`its parent ended; ${resumedBy} resumes it`).catch(() => undefined);
    }
    return { attempt, workflowId, found: 'unfinished' };
  }

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

    /** The attempts of the interrupted parent `workflowId`, for the parent `resumedBy` that resumes it. */
    async earlierAttempts(request: {
      workflowId: string;
      attempts: number;
      resumedBy: string;
    }): Promise<EarlierAttempt[]> {
      const handle = temporal.workflow.getHandle(request.workflowId);
      const found = await Promise.all([handle.describe(), handle.query(statusQuery)]).catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError)
          throw invalidInput(`no run with workflow id "${request.workflowId}"`);
        throw error;
      });
      const [description, status] = found;
      if (!status.attempts) {
        throw invalidInput(
          `"${request.workflowId}" is a single run, not a parent of parallel attempts: resume it with attempts 1`,
        );
      }
      if (status.attempts.length !== request.attempts) {
        throw invalidInput(
          `"${request.workflowId}" ran ${status.attempts.length} attempts: resume it with attempts ${status.attempts.length}, not ${request.attempts}`,
        );
      }
      if (description.status.name === 'RUNNING') {
        throw invalidInput(
          `"${request.workflowId}" is still running (its attempts go on in any worker); stop or terminate it before resuming it`,
        );
      }
      return Promise.all(
        status.attempts.map((entry) => earlierAttempt(entry.attempt, entry.workflowId, request.resumedBy)),
      );
    },
  };
}

export type AttemptActivities = ReturnType<typeof createAttemptActivities>;
