// The background worker's side of a `run` it starts and follows for a command
// (src/cli/backgroundRun.ts): with its own session, opened once for its life, it starts the run as
// the command's session would (src/cli/startRun.ts), then sends each look at the run and its
// report down the command's lease. A command that goes (Ctrl-C) leaves the run going, as before.
import type { Socket } from 'node:net';
import type { RunFrame, RunRequest } from './backgroundRun.js';
import { expectClosingView } from '../temporal/closingViews.js';
import { runLooks } from './follow.js';
import { queryClosedRun, type Session } from './session.js';
import { inputOfSession, startRunOfSession } from './startRun.js';

export async function serveRun(session: Session, request: RunRequest, lease: Socket): Promise<void> {
  /** False once the command has gone. */
  const send = (frame: RunFrame): boolean => {
    if (lease.destroyed || !lease.writable) return false;
    lease.write(`${JSON.stringify(frame)}\n`);
    return true;
  };
  try {
    const input = await inputOfSession(session, request.input);
    const workflowId = await startRunOfSession(session, input, request.workflowId);
    send({ started: workflowId });
    // Closed on this worker (as it usually is), the run's last answers need no replay.
    const closing = expectClosingView(workflowId);
    try {
      const run = runLooks(session.client.workflow.getHandle(workflowId), {
        queryClosed: (taskQueue, query) => queryClosedRun(session, taskQueue, query),
        closedView: closing.take,
      });
      for await (const look of run.looks) {
        // Each look is the whole run so far: one the command has not read yet (a paused terminal) is replaced, not queued.
        if (lease.writableNeedDrain && !look.closed) continue;
        if (!send({ look })) return;
      }
      const { webUiLink } = await import('../client.js');
      send({ report: await run.report(), webUi: webUiLink(session.server.uiUrl, session.config, workflowId) });
    } finally {
      closing.forget();
    }
  } catch (error) {
    send({ error: error instanceof Error ? error.message : String(error) });
  }
}
