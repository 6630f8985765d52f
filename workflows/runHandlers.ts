// What every run answers, a single run and the parent of parallel attempts alike: the status,
// transcript and saved-state queries, and the stop and hint signals (a stop without a reason
// gets one; a blank hint is ignored). Each run says what its answers are; the rules are here once.
import { proxySinks, setHandler } from '@temporalio/workflow';
import type { RunStatusView } from '../src/agent/runState.js';
import {
  hintSignal,
  savedStateQuery,
  statusQuery,
  stopSignal,
  transcriptQuery,
  type RunSinks,
  type SavedState,
  type TranscriptView,
} from '../src/temporal/definitions.js';

export interface RunHandlers {
  status(): RunStatusView;
  transcript(): TranscriptView;
  savedState(): SavedState;
  /** The user asked the run to stop, for this reason. */
  stop(reason: string): void;
  /** The user's hint, trimmed. */
  hint(text: string): void;
}

const { runs } = proxySinks<RunSinks>();

/** What a run returns its report through: it tells its worker's process its last answers (see RunSinks). */
export type RunClosing = <T>(report: T) => T;

export function registerRunHandlers(handlers: RunHandlers): RunClosing {
  setHandler(statusQuery, () => handlers.status());
  setHandler(transcriptQuery, () => handlers.transcript());
  setHandler(savedStateQuery, () => handlers.savedState());
  setHandler(stopSignal, (reason?: string) => {
    handlers.stop(typeof reason === 'string' && reason.trim() ? reason.trim() : 'stop requested by the user');
  });
  setHandler(hintSignal, (text: string) => {
    if (typeof text === 'string' && text.trim()) handlers.hint(text.trim());
  });
  return (report) => {
    runs.closing(handlers.status(), handlers.transcript());
    return report;
  };
}
