// Where a workflow iteration's time goes, from the event times the Temporal server wrote into
// the run's history: tasks waiting to be picked up by a worker (schedule-to-start), workflow
// code, and the activities themselves (start-to-close).
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

const EventType = proto.temporal.api.enums.v1.EventType;
export type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** One workflow or activity task of a history, with its server times. */
export interface TaskTiming {
  /** 'workflow task', or the activity's type name. */
  kind: string;
  scheduledAt: number;
  startedAt: number;
  closedAt: number;
}

/** Every task of a history that started and closed, in the order they were scheduled. */
export function taskTimings(events: HistoryEvent[]): TaskTiming[] {
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const tasks: TaskTiming[] = [];
  const add = (kind: string, startedId: unknown, closed: HistoryEvent) => {
    const started = byId.get(Number(startedId));
    const scheduledId =
      started?.workflowTaskStartedEventAttributes?.scheduledEventId ??
      started?.activityTaskStartedEventAttributes?.scheduledEventId;
    const scheduled = byId.get(Number(scheduledId));
    if (!started || !scheduled) return;
    tasks.push({ kind, scheduledAt: timeOf(scheduled), startedAt: timeOf(started), closedAt: timeOf(closed) });
  };
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      add('workflow task', event.workflowTaskCompletedEventAttributes?.startedEventId, event);
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const attributes = event.activityTaskCompletedEventAttributes;
      const scheduled = byId.get(Number(attributes?.scheduledEventId));
      add(
        scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'activity',
        attributes?.startedEventId,
        event,
      );
    }
  }
  return tasks.sort((a, b) => a.scheduledAt - b.scheduledAt);
}

export interface IterationTimeline {
  /** First model call scheduled → last model call scheduled, per iteration. */
  iterationMs: number;
  /** Scheduled → started, for activity and workflow tasks: waiting for a worker to pick the task up. */
  dispatchMs: number;
  /** Workflow tasks, scheduled → started. */
  workflowTaskWaitMs: number;
  /** Workflow task started → completed: the workflow code, and the SDK and server around it. */
  workflowTaskMs: number;
  /** callModel scheduled → started. */
  callModelWaitMs: number;
  /** callModel started → completed: the transcript (query or cache), the model request and the SDK. */
  callModelMs: number;
  /** runTool scheduled → started. */
  runToolWaitMs: number;
  /** runTool started → completed. */
  runToolMs: number;
  /** Whatever lies between these (e.g. a completed task until the next is scheduled). */
  otherMs: number;
}

/** Milliseconds per iteration, over the iterations between the run's first and last model call. */
export async function iterationTimeline(handle: WorkflowHandle): Promise<IterationTimeline> {
  const events = (await handle.fetchHistory()).events ?? [];
  const tasks = taskTimings(events);
  const modelCalls = tasks.filter((task) => task.kind === 'callModel').map((task) => task.scheduledAt);
  const windowStart = modelCalls[0] ?? 0;
  const windowEnd = modelCalls[modelCalls.length - 1] ?? 0;
  const iterations = modelCalls.length - 1;
  const totals = {
    workflowTaskWaitMs: 0,
    workflowTaskMs: 0,
    callModelWaitMs: 0,
    callModelMs: 0,
    runToolWaitMs: 0,
    runToolMs: 0,
  };
  const keys: Record<string, [keyof typeof totals, keyof typeof totals]> = {
    'workflow task': ['workflowTaskWaitMs', 'workflowTaskMs'],
    callModel: ['callModelWaitMs', 'callModelMs'],
    runTool: ['runToolWaitMs', 'runToolMs'],
  };
  const spanIn = (from: number, to: number) =>
    from >= windowStart && from < windowEnd ? Math.min(to, windowEnd) - from : 0;
  for (const task of tasks) {
    const key = keys[task.kind];
    if (!key) continue;
    totals[key[0]] += spanIn(task.scheduledAt, task.startedAt);
    totals[key[1]] += spanIn(task.startedAt, task.closedAt);
  }
  const perIteration = (ms: number) => ms / iterations;
  const accounted = Object.values(totals).reduce((sum, ms) => sum + ms, 0);
  return {
    iterationMs: perIteration(windowEnd - windowStart),
    dispatchMs: perIteration(totals.workflowTaskWaitMs + totals.callModelWaitMs + totals.runToolWaitMs),
    workflowTaskWaitMs: perIteration(totals.workflowTaskWaitMs),
    workflowTaskMs: perIteration(totals.workflowTaskMs),
    callModelWaitMs: perIteration(totals.callModelWaitMs),
    callModelMs: perIteration(totals.callModelMs),
    runToolWaitMs: perIteration(totals.runToolWaitMs),
    runToolMs: perIteration(totals.runToolMs),
    otherMs: perIteration(windowEnd - windowStart - accounted),
  };
}

export function timeOf(event: HistoryEvent): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}
