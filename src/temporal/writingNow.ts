// What the model is writing in a run now: the heartbeat of the run's model call in flight (see
// src/agent/replySoFar.ts), read from the description of the run that `watch` and the MCP
// server's get_status already ask for.
import type { WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { writingIn, type WritingSoFar } from '../agent/replySoFar.js';

/** What the model is writing, from the heartbeats of the run's model call in flight (null: none, or not yet). */
export function writingOf(handle: WorkflowHandle, description: WorkflowExecutionDescription): WritingSoFar | null {
  const call = description.raw?.pendingActivities?.find((each) => each.activityType?.name === 'callModel');
  const details = call?.heartbeatDetails?.payloads?.[0];
  if (!details) return null;
  // A retried call keeps its last attempt's heartbeat until it sends its own: that reply was not kept.
  const msOf = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  if (msOf(call?.lastHeartbeatTime) < msOf(call?.lastStartedTime)) return null;
  try {
    return writingIn(handle.client.options.loadedDataConverter.payloadConverter.fromPayload(details));
  } catch {
    return null; // details this version does not read
  }
}
