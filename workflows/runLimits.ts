// Where the loop waits or hands over before its next model call: a run out of budget may pause
// for a raise, and a long run continues as a new workflow run with its state.
import { allHandlersFinished, condition, continueAsNew, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { Stop } from '../src/agent/budgets.js';
import type { DebugInput } from '../src/agent/input.js';
import { continueAsNewHistoryBytes } from '../src/agent/payloads.js';
import { stopBeforeNextCall } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import type { RunProgress } from './progress.js';

/**
 * A run out of budget either ends, or (with pauseOnBudgetMinutes) waits for the user to raise
 * its budget with the raiseBudget update, then goes on where it stopped.
 */
export async function stopOrWaitForMoreBudget(state: RunState, input: DebugInput, progress: RunProgress): Promise<Stop | null> {
  const stop = stopBeforeNextCall(state, Date.now());
  const minutes = input.pauseOnBudgetMinutes;
  if (!stop || stop.condition === 'stop_signal' || !minutes) return stop;
  progress.setPhase('paused');
  setCurrentDetails(`paused: ${stop.detail}; raise the budget (raiseBudget update) within ${minutes} minutes to continue`);
  const raised = await condition(() => stopBeforeNextCall(state, Date.now()) === null || state.stopRequested !== null, `${minutes} minutes`);
  return raised ? stopBeforeNextCall(state, Date.now()) : stop;
}

/** Continues as a new workflow run when the server suggests it, the history is large, or every `continueAsNewEvery` iterations. */
export async function continueAsNewIfDue(state: RunState, input: DebugInput, iterationAtRunStart: number): Promise<void> {
  const every = input.continueAsNewEvery;
  const info = workflowInfo();
  const due =
    info.continueAsNewSuggested || info.historySize > continueAsNewHistoryBytes || (every !== undefined && state.iteration - iterationAtRunStart >= every);
  if (!due) return;
  // Updates in progress (a budget raise) finish first; signals are carried in the state.
  await condition(allHandlersFinished);
  await continueAsNew(input, { state });
}
