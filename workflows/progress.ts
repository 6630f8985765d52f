// What the run shows while it works: its phase and a line in the Temporal UI (current details),
// and its status, iterations and cost as search attributes, so runs can be listed and filtered.
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { runningStatus, type DebugStatusValue, type RunStatus } from '../src/agent/report.js';
import { progressLine } from '../src/agent/run.js';
import type { Phase, RunState } from '../src/agent/runState.js';
import { searchAttributes } from '../src/temporal/definitions.js';

/** Iterations and cost reach the search attributes at most this often (and at the end). */
const progressPublishIntervalMs = 5_000;

/** The DebugStatus search attribute: `running` (or `awaiting_approval`) while the run works, then its RunStatus. */
export function statusAttribute(value: DebugStatusValue) {
  return { key: searchAttributes.status, value };
}

export class RunProgress {
  private markedRunning = false;
  /** Workflow time of the last upsert of iterations and cost. */
  private publishedAt = -Infinity;

  constructor(private readonly state: RunState) {}

  setPhase(phase: Phase): void {
    this.state.phase = phase;
    // The status attribute says `running` while the run works, and its final status once it ends.
    if (phase !== 'done' && !this.markedRunning) {
      upsertSearchAttributes([statusAttribute(runningStatus)]);
      this.markedRunning = true;
    }
    setCurrentDetails(progressLine(this.state, phase));
  }

  /**
   * The run's iterations and cost as search attributes, at most every few seconds of workflow
   * time (each upsert is a visibility write on the server: 3–13 ms per iteration on the dev
   * server, bench/workflowExtras.ts) and always at the end (publishEnd).
   */
  publish(): void {
    const now = Date.now();
    if (now - this.publishedAt < progressPublishIntervalMs) return;
    this.publishedAt = now;
    upsertSearchAttributes(this.attributes());
  }

  /** The run's final status, with its last iterations and cost. */
  publishEnd(status: RunStatus): void {
    upsertSearchAttributes([statusAttribute(status), ...this.attributes()]);
  }

  private attributes() {
    const state = this.state;
    return [
      { key: searchAttributes.iterations, value: state.iteration },
      ...(state.costUsd === null ? [] : [{ key: searchAttributes.costUsd, value: state.costUsd }]),
    ];
  }
}
