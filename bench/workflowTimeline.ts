// Where a workflow iteration's time goes, from the event times the Temporal server wrote into
// the run's history: tasks waiting to be picked up by a worker, workflow code, and the
// activities themselves.
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface IterationTimeline {
  /** Scheduled → started, for activity and workflow tasks: waiting for a worker to pick the task up. */
  dispatchMs: number;
  /** Workflow task started → completed: the workflow code, and the SDK and server around it. */
  workflowTaskMs: number;
  /** callModel started → completed: the transcript query, the model request and the SDK. */
  callModelMs: number;
  /** runTool started → completed. */
  runToolMs: number;
  /** Whatever lies between these (e.g. a completed task until the next is scheduled). */
  otherMs: number;
}

/** Milliseconds per iteration, over the iterations between the run's first and last model call. */
export async function iterationTimeline(handle: WorkflowHandle): Promise<IterationTimeline> {
  const events = (await handle.fetchHistory()).events ?? [];
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const activityOf = (scheduledEventId: unknown) =>
    byId.get(Number(scheduledEventId))?.activityTaskScheduledEventAttributes?.activityType?.name ?? '';
  const modelCalls = events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').map(timeOf);
  const windowStart = modelCalls[0] ?? 0;
  const windowEnd = modelCalls[modelCalls.length - 1] ?? 0;
  const iterations = modelCalls.length - 1;
  const totals = { dispatchMs: 0, workflowTaskMs: 0, callModelMs: 0, runToolMs: 0 };
  const add = (key: keyof typeof totals, from: HistoryEvent | undefined, to: HistoryEvent) => {
    const start = from ? timeOf(from) : NaN;
    if (start >= windowStart && start < windowEnd) totals[key] += Math.min(timeOf(to), windowEnd) - start;
  };
  for (const event of events) {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        add('dispatchMs', byId.get(Number(event.workflowTaskStartedEventAttributes?.scheduledEventId)), event);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        add('workflowTaskMs', byId.get(Number(event.workflowTaskCompletedEventAttributes?.startedEventId)), event);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        add('dispatchMs', byId.get(Number(event.activityTaskStartedEventAttributes?.scheduledEventId)), event);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const attributes = event.activityTaskCompletedEventAttributes;
        const name = activityOf(attributes?.scheduledEventId);
        if (name === 'callModel' || name === 'runTool') add(`${name}Ms`, byId.get(Number(attributes?.startedEventId)), event);
        break;
      }
      default:
        break;
    }
  }
  const perIteration = (ms: number) => ms / iterations;
  const accounted = totals.dispatchMs + totals.workflowTaskMs + totals.callModelMs + totals.runToolMs;
  return {
    dispatchMs: perIteration(totals.dispatchMs),
    workflowTaskMs: perIteration(totals.workflowTaskMs),
    callModelMs: perIteration(totals.callModelMs),
    runToolMs: perIteration(totals.runToolMs),
    otherMs: perIteration(windowEnd - windowStart - accounted),
  };
}

function timeOf(event: HistoryEvent): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}
