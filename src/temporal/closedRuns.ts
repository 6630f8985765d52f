// Whether a run's workflow has closed: what the reaper and the sandbox queue ask before they take
// back what a run held (a terminated run never gives anything back itself).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

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
