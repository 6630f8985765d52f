// How the workflow reads the failures of its activities: which ones it handles, and in what words;
// and how a bad input fails a run: at the top, as the user's input, naming what was wrong.
import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation, patched } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { environmentFailure } from '../src/agent/environment.js';
import { InvalidInputError, parseDebugInput, type DebugInput } from '../src/agent/input.js';
import type { Stop } from '../src/agent/budgets.js';
import { describeCommandThatCannotStart, describeNoTests } from '../src/agent/baselineProblems.js';
import type { TestSummary } from '../src/agent/testResults.js';

/** The run's input, validated; a bad one fails the run at once (non-retryable InvalidInput, naming the field). */
export function validateInput(raw: unknown): DebugInput {
  try {
    return parseDebugInput(raw);
  } catch (error) {
    if (error instanceof InvalidInputError) throw ApplicationFailure.nonRetryable(error.message, 'InvalidInput');
    throw error;
  }
}

/** A bad repository or resumeFrom found by an activity is the user's input: the run fails with it at the top, not inside an activity failure. */
export function inputFailure(error: unknown): ApplicationFailure | null {
  if (!isFailureOfType(error, 'InvalidInput')) return null;
  return ApplicationFailure.nonRetryable((error as ActivityFailure).cause?.message ?? 'Invalid input', 'InvalidInput');
}

export function isFailureOfType(error: unknown, type: string): boolean {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === type;
}

/** The innermost message of a failure (an activity failure's cause says what went wrong). */
export function failureMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/** The kind of timeout an activity failed with, or null for any other failure. */
function activityTimeout(error: unknown): TimeoutType | null {
  return error instanceof ActivityFailure && error.cause instanceof TimeoutFailure ? error.cause.timeoutType : null;
}

export function isScheduleToStartTimeout(error: unknown): boolean {
  return activityTimeout(error) === TimeoutType.SCHEDULE_TO_START;
}

/** No worker took the activity, or its worker stopped heartbeating: the sandbox's host is gone. */
export function isHostUnreachable(error: unknown): boolean {
  return isScheduleToStartTimeout(error) || activityTimeout(error) === TimeoutType.HEARTBEAT;
}

/** The message of a model failure that retrying cannot fix (bad key, bad request, retries used up). */
export function modelFailure(error: unknown): string | null {
  if (!(error instanceof ActivityFailure) || isCancellation(error)) return null;
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof TimeoutFailure) return `the model call timed out (${cause.timeoutType})`;
  return null;
}

/** The message of an environment that could not be made; anything else is not handled here. */
export function environmentFailureMessage(error: unknown): string {
  if (isFailureOfType(error, environmentFailure))
    return (error as ActivityFailure).cause?.message ?? 'the environment could not be made';
  throw error;
}

/** Runs recorded before a baseline that cannot start ended the run went on to the model: they replay as they ran. */
const baselineCannotStartPatch = 'baseline-that-cannot-start-ends-the-run';

/**
 * A baseline whose test command cannot start (exit 126/127), or that found no tests, is the
 * environment's to fix, not the model's: the run ends.
 */
export function baselineCannotStart(baseline: TestSummary): Stop | null {
  const detail = describeCommandThatCannotStart(baseline);
  if (detail && patched(baselineCannotStartPatch)) return { condition: 'environment_error', detail };
  const none = describeNoTests(baseline);
  if (none && patched(baselineWithoutTestsPatch)) return { condition: 'environment_error', detail: none };
  return null;
}

/** Runs recorded before a baseline without tests ended the run went on to the model: they replay as they ran. */
const baselineWithoutTestsPatch = 'baseline-without-tests-ends-the-run';
