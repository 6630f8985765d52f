// Whether a run's workflow has closed: what the reaper and the sandbox queue ask before they take
// back what a run held (a terminated run never gives anything back itself).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { sandboxAdmissionIdFor, sandboxReleaseSignal } from './definitions.js';

/** Why a workflow no longer needs what it holds ("workflow terminated", "workflow unknown"), or null while it runs. */
export async function closedReason(client: Client, workflowId: string): Promise<string | null> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING' ? null : `workflow ${description.status.name.toLowerCase()}`;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'workflow unknown';
    throw error;
  }
}

/** Gives back a closed run's place in the sandbox queue of `taskQueue` (held or waited for). */
export async function releaseQueuePlace(client: Client, taskQueue: string, workflowId: string): Promise<void> {
  await client.workflow.getHandle(sandboxAdmissionIdFor(taskQueue)).signal(sandboxReleaseSignal, workflowId);
}

/** What a host needs of the runs it serves to take back what a closed one holds. */
export interface RunEnds {
  /** Why the run has closed, or null while it runs (closedReason). */
  reason(workflowId: string): Promise<string | null>;
  /** Gives back its place in the sandbox queue. */
  releasePlace(workflowId: string): Promise<void>;
}

export function runEndsOn(client: Client, taskQueue: string): RunEnds {
  return {
    reason: (workflowId) => closedReason(client, workflowId),
    releasePlace: (workflowId) => releaseQueuePlace(client, taskQueue, workflowId),
  };
}
