// The background worker's side of a `run` it starts and follows for a command
// (src/cli/backgroundRun.ts): with its own session, opened at its first and kept, it starts the run as
// the command's session would (src/cli/startRun.ts), then sends each look at the run and its
// report down the command's lease. A command that goes (Ctrl-C) leaves the run going, as before.
import type { Socket } from 'node:net';
import type { RunFrame, RunRequest } from './backgroundRun.js';
import { runLooksOfSession } from './follow.js';
import type { Session } from './session.js';
import { inputOfSession, startRunOfSession } from './startRun.js';

export async function serveRun(session: () => Promise<Session>, request: RunRequest, lease: Socket): Promise<void> {
  /** False once the command has gone. */
  const send = (frame: RunFrame): boolean => {
    if (lease.destroyed || !lease.writable) return false;
    lease.write(`${JSON.stringify(frame)}\n`);
    return true;
  };
  try {
    const opened = await session();
    const input = await inputOfSession(opened, request.input);
    const workflowId = await startRunOfSession(opened, input, request.workflowId);
    send({ started: workflowId });
    const run = runLooksOfSession(opened, workflowId);
    try {
      for await (const look of run.looks) {
        // Each look is the whole run so far: one the command has not read yet (a paused terminal) is replaced, not queued.
        if (lease.writableNeedDrain && !look.closed) continue;
        if (!send({ look })) return;
      }
      const { webUiLink } = await import('../client.js');
      send({ report: await run.report(), webUi: webUiLink(opened.server.uiUrl, opened.config, workflowId) });
    } finally {
      run.done();
    }
  } catch (error) {
    send({ error: error instanceof Error ? error.message : String(error) });
  }
}
