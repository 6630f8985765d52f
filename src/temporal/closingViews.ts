// The last status and transcript of runs as they close on this worker (the RunSinks of
// src/temporal/definitions.ts), kept for a command following them in this process: the
// background worker's `run` (src/cli/backgroundRunService.ts) reads them instead of querying the
// closed run, which a worker answers only by replaying its whole history (0.2–0.4 s a run).
// Kept only for runs a follower here expects, and briefly.
import type { InjectedSinks } from '@temporalio/worker';
import type { RunStatusView } from '../agent/runState.js';
import type { RunSinks, TranscriptView } from './definitions.js';

export type ClosingView = [RunStatusView, TranscriptView];

/** How long a view waits for its follower, which reads it within a poll of the close. */
const keptMs = 60_000;

const expected = new Set<string>();
const kept = new Map<string, { view: ClosingView; at: number }>();

export const closingViewSinks: InjectedSinks<RunSinks> = {
  runs: {
    closing: {
      fn: (info, status, transcript) => {
        if (!expected.has(info.workflowId)) return;
        const now = Date.now();
        for (const [key, { at }] of kept) if (now - at > keptMs) kept.delete(key);
        kept.set(`${info.workflowId}/${info.runId}`, { view: [status, transcript], at: now });
      },
      callDuringReplay: false,
    },
  },
};

/**
 * A follower in this process expects the last view of the run `workflowId`: `take` gives it once
 * the run has closed (null when it closed on another worker, or failed), `forget` when it stops following.
 */
export function expectClosingView(workflowId: string): {
  take(runId: string): ClosingView | null;
  forget(): void;
} {
  expected.add(workflowId);
  const forget = () => {
    expected.delete(workflowId);
    for (const key of kept.keys()) if (key.startsWith(`${workflowId}/`)) kept.delete(key);
  };
  return {
    take: (runId) => {
      const view = kept.get(`${workflowId}/${runId}`)?.view ?? null;
      forget();
      return view;
    },
    forget,
  };
}
