// Follows a run live by polling its `status` and `transcript` queries until the workflow closes,
// and shows it (src/cli/showRun.ts). Works for a run started elsewhere too (`watch` reattaches by
// reading the transcript from the start).
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugReport } from '../agent/report.js';
import { statusQuery, transcriptQuery } from '../temporal/definitions.js';
import { expectClosingView } from '../temporal/closingViews.js';
import { writingOf } from '../temporal/writingNow.js';
import { queryClosedRun, type Session } from './session.js';
import { showRun, type RunLook, type RunSource, type ShowOptions } from './showRun.js';

export interface LookOptions {
  pollMs?: number;
  /**
   * Asks a closed run's queries, or answers null when no worker would answer them (see
   * queryClosedRun): its report then comes at once. Without it they are asked as a live run's.
   */
  queryClosed?: <T>(taskQueue: string, query: () => Promise<T>) => Promise<T | null>;
  /** The closed run's last answers as its worker kept them (null: ask them), by the closed run's id. */
  closedView?: (runId: string) => RunLook['answer'];
}

export type FollowOptions = ShowOptions & LookOptions;

export function followRun(handle: WorkflowHandle, options: FollowOptions): Promise<DebugReport> {
  return showRun(runLooks(handle, options), options);
}

/** The run as its queries answer, polled every `pollMs` (500 ms) until it closes. */
function runLooks(handle: WorkflowHandle, options: LookOptions): RunSource {
  const result = handle.result() as Promise<DebugReport>;
  // Waited for alongside each pause between polls: the run's end is seen at once, not at the next poll.
  const ended = result.then(
    () => undefined,
    () => undefined,
  );
  async function* looks(): AsyncGenerator<RunLook> {
    for (;;) {
      const description = await handle.describe();
      const closed = description.status.name !== 'RUNNING';
      const ask = closed
        ? () => askInTurn(handle)
        : () => Promise.all([handle.query(statusQuery), handle.query(transcriptQuery)]);
      let answer = (closed && options.closedView?.(description.runId)) || null;
      try {
        answer ??= closed && options.queryClosed ? await options.queryClosed(description.taskQueue, ask) : await ask();
      } catch {
        // A closed run is queried by replaying it on a worker: with no worker on its task queue the
        // queries fail, and its result (the report) still answers.
      }
      yield { closed, answer, writing: answer ? writingOf(handle, description) : null };
      if (closed) return;
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500))]);
    }
  }
  return { workflowId: handle.workflowId, looks: looks(), report: () => result };
}

/**
 * A closed run's queries, one after the other: each is answered by replaying the run, and the
 * Temporal core drops a query that waits behind another when it evicts the replayed run (the
 * worker logs "leftover buffered tasks"), so two at once can leave one unanswered until its timeout.
 */
async function askInTurn(handle: WorkflowHandle): Promise<NonNullable<RunLook['answer']>> {
  const status = await handle.query(statusQuery);
  return [status, await handle.query(transcriptQuery)];
}

/**
 * The looks a session takes at a run it started: once closed, its last answers come from the view
 * this process's worker kept when the run closed here (no replay), else from its queries. Call
 * `done` when no longer following.
 */
export function runLooksOfSession(session: Session, workflowId: string): RunSource & { done(): void } {
  const closing = expectClosingView(workflowId);
  const looks = runLooks(session.client.workflow.getHandle(workflowId), {
    queryClosed: (taskQueue, query) => queryClosedRun(session, taskQueue, query),
    closedView: closing.take,
  });
  return { ...looks, done: closing.forget };
}
