// Where the loop waits or hands over before its next model call: a run out of budget may pause
// for a raise, and a long run continues as a new workflow run with its state.
import { allHandlersFinished, condition, continueAsNew, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { Stop } from '../src/agent/budgets.js';
import type { DebugInput } from '../src/agent/input.js';
import { continueAsNewHistoryBytes } from '../src/agent/payloads.js';
import { stopBeforeNextCall } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import type { RunProgress } from './progress.js';

// Both are awaited only when they will wait: every await in workflow code makes promises whose
// stacks the SDK records, the largest part of a workflow task's time (bench/workflowPromises.ts).

/** True when this stop pauses the run for a raise (pauseOnBudgetMinutes) instead of ending it. */
export function pausesForRaise(stop: Stop | null, input: DebugInput): stop is Stop {
  return stop !== null && stop.condition !== 'stop_signal' && Boolean(input.pauseOnBudgetMinutes);
}

/**
 * A run out of budget with pauseOnBudgetMinutes waits for the user to raise its budget with the
 * raiseBudget update, then goes on where it stopped; otherwise it ends with `stop`.
 */
export async function waitForMoreBudget(
  state: RunState,
  input: DebugInput,
  progress: RunProgress,
  stop: Stop,
): Promise<Stop | null> {
  const minutes = input.pauseOnBudgetMinutes as number;
  progress.setPhase('paused');
  setCurrentDetails(
    `paused: ${stop.detail}; raise the budget (raiseBudget update) within ${minutes} minutes to continue`,
  );
  const raised = await condition(
    () => stopBeforeNextCall(state, Date.now()) === null || state.stopRequested !== null,
    `${minutes} minutes`,
  );
  return raised ? stopBeforeNextCall(state, Date.now()) : stop;
}

/** Continue as a new workflow run when the server suggests it, the history is large, or every `continueAsNewEvery` iterations. */
export function continueAsNewDue(state: RunState, input: DebugInput, iterationAtRunStart: number): boolean {
  const every = input.continueAsNewEvery;
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historySize > continueAsNewHistoryBytes ||
    (every !== undefined && state.iteration - iterationAtRunStart >= every)
  );
}

/** Hands the state to a new workflow run (throws ContinueAsNew). */
export async function continueAsNewWithState(state: RunState, input: DebugInput): Promise<never> {
  // Updates in progress (a budget raise) finish first; signals are carried in the state.
  await condition(allHandlersFinished);
  return continueAsNew(input, { state });
}
