// A `run` that the user's background worker starts and follows for the command (issue 36: `run`
// within a second of its run, as Gradle's and Bazel's thin clients leave the work to their
// server). The command sends its checked input on its lease of the worker and shows what the
// worker sends back: it loads no Temporal client, opens no connection and asks no query itself.
// The worker's side is src/cli/backgroundRunService.ts.
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { DebugInputJson } from '../agent/input.js';
import type { DebugReport } from '../agent/report.js';
import { showRun, type RunLook, type ShowOptions } from './showRun.js';

/** What a command asks on its lease, as one JSON line: start this run and follow it. */
export interface RunRequest {
  request: 'run';
  input: DebugInputJson;
  workflowId?: string;
}

/** What the worker answers, a JSON line each: the run's id, each look at it, then its report, or why not. */
export type RunFrame =
  { started: string } | { look: RunLook } | { report: DebugReport; webUi: string | null } | { error: string };

export async function runInBackground(
  lease: Socket,
  request: Omit<RunRequest, 'request'>,
  options: ShowOptions & { started(workflowId: string): void },
): Promise<{ report: DebugReport; webUi: string | null }> {
  const lines = createInterface({ input: lease, crlfDelay: Infinity })[Symbol.asyncIterator]();
  lease.write(`${JSON.stringify({ request: 'run', ...request } satisfies RunRequest)}\n`);
  const next = async (): Promise<RunFrame> => {
    const line = await lines.next();
    if (line.done)
      throw new Error(
        'the background worker stopped answering; the run, if it started, goes on (`durable-debugger list`, `watch <id>`)',
      );
    const frame = JSON.parse(line.value) as RunFrame;
    if ('error' in frame) throw new Error(frame.error);
    return frame;
  };
  const first = await next();
  if (!('started' in first)) throw new Error('the background worker answered out of turn');
  options.started(first.started);
  const end: { frame?: { report: DebugReport; webUi: string | null } } = {};
  async function* looks(): AsyncGenerator<RunLook> {
    for (;;) {
      const frame = await next();
      if ('look' in frame) yield frame.look;
      else if ('report' in frame) return void (end.frame = frame);
    }
  }
  const report = await showRun(
    {
      workflowId: first.started,
      looks: looks(),
      report: async () => {
        if (!end.frame) throw new Error('the background worker sent no report');
        return end.frame.report;
      },
    },
    options,
  );
  return { report, webUi: end.frame?.webUi ?? null };
}
