// The activities of the sandbox queue (workflows/sandboxAdmission.ts): a run asks the queue of its
// task queue for a sandbox (starting the queue's workflow if it is not running), looks up its
// place while it waits, and the queue asks which of the runs holding sandboxes have ended.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { closedReason } from '../src/temporal/closedRuns.js';
import { placeOf, type AdmissionLimits, type QueuePlace, type SandboxRequest } from '../src/agent/admission.js';
import {
  sandboxAdmissionIdFor,
  sandboxAdmissionType,
  sandboxQueueQuery,
  sandboxRequestSignal,
} from '../src/temporal/definitions.js';

/** `limits`: this worker's configured limits; every request carries them, so the queue follows the workers' latest. */
export function createSandboxQueueActivities(temporal: Client, limits: AdmissionLimits) {
  const request = (taskQueue: string, sandboxRequest: SandboxRequest) =>
    temporal.workflow.signalWithStart(sandboxAdmissionType, {
      workflowId: sandboxAdmissionIdFor(taskQueue),
      taskQueue,
      args: [],
      signal: sandboxRequestSignal,
      signalArgs: [sandboxRequest, limits],
      staticSummary: `The queue of runs waiting for a sandbox host (task queue ${taskQueue})`,
    });
  return {
    async requestSandbox(input: { taskQueue: string; request: SandboxRequest }): Promise<void> {
      await request(input.taskQueue, input.request);
    },
    /** The run's place in the queue; a queue that lost it (ended, restarted) is asked again. */
    async sandboxQueuePlace(input: { taskQueue: string; request: SandboxRequest }): Promise<QueuePlace> {
      const handle = temporal.workflow.getHandle(sandboxAdmissionIdFor(input.taskQueue));
      const state = await handle.query(sandboxQueueQuery).catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return null;
        throw error;
      });
      const place = state ? placeOf(state, input.request.workflowId) : 'unknown';
      if (place === 'unknown') await request(input.taskQueue, input.request);
      return place;
    },
    /** Which of these runs have ended (their sandboxes are free again). */
    async endedRuns(input: { workflowIds: string[] }): Promise<string[]> {
      const ended: string[] = [];
      for (const workflowId of input.workflowIds) if (await closedReason(temporal, workflowId)) ended.push(workflowId);
      return ended;
    },
  };
}

export type SandboxQueueActivities = ReturnType<typeof createSandboxQueueActivities>;
