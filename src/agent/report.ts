// The run's result: what a person reads at the end, and what `result --json` prints.
import type { StopCondition, TokenUsage } from './budgets.js';
import type { PreparedEnvironment } from './environment.js';
import type { ModelUsage } from './budgets.js';
import type { TestSummary } from './testResults.js';

// Status, one vocabulary from workflow to CLI: a run's RunStatus is how it ended (the report's
// `status`); while it works, the DebugStatus search attribute says `running` (or
// `awaiting_approval`), and the `status` query answers its RunStatusView (src/agent/runState.ts):
// phase, iteration as the workflow counts it, usage.

/** How a run ended: the report's status, and the DebugStatus search attribute once it closed. */
export type RunStatus =
  | 'fixed'
  | 'not_fixed'
  | 'not_approved'
  | 'no_failing_tests'
  | 'budget_exhausted'
  | 'stopped'
  | 'error'
  | 'environment_error';

/** What the DebugStatus search attribute says while the run works. */
export const runningStatus = 'running';
export const awaitingApprovalStatus = 'awaiting_approval';

/** Every value of the DebugStatus search attribute: live, then final. */
export type DebugStatusValue = typeof runningStatus | typeof awaitingApprovalStatus | RunStatus;

export interface ToolCallRecord {
  iteration: number;
  name: string;
  description: string;
  isError: boolean;
}

export interface DebugReport {
  workflowId: string;
  repository: string;
  status: RunStatus;
  stopCondition: StopCondition;
  stopDetail: string;
  /** The model id requested, and a plain statement of who answered (Claude or scripted responses). */
  model: string | null;
  answeredBy: string | null;
  /** Each model's calls (by iteration), tokens and cost: with a fallback model, which calls it made. */
  modelUsage?: ModelUsage[];
  rootCause: string | null;
  fixSummary: string | null;
  /**
   * A git patch of the workspace against the original repository (unified diffs for UTF-8
   * text, git binary patches for other files; see docs/runs.md); `git apply` accepts it.
   * When the patch is too large for the report, this is its beginning, and `fullPatch` says
   * where the whole patch is (`durable-debugger result <id> --patch` prints it).
   */
  patch: string;
  fullPatch: StoredPatch | null;
  /**
   * Paths the run changed that the patch leaves out: files no file tool edited that only test
   * runs changed, or that a command left as binary files (input patchAllChanges keeps them).
   */
  leftOutOfPatch?: string[];
  testsBefore: TestSummary | null;
  testsAfter: TestSummary | null;
  testCommand: string | null;
  iterations: number;
  tokens: TokenUsage;
  /** Estimated cost in USD; null when the model's price is unknown. */
  costUsd: number | null;
  /** Set when the cost was counted at a conservative price because the model has no listed price. */
  costNote: string | null;
  /** Set when the model endpoint answered streaming requests with whole replies: said once, here. */
  streamNote?: string;
  durationMs: number;
  /** The run's tool calls; on a very long run only the newest (see earlierToolCalls). */
  toolCalls: ToolCallRecord[];
  /** Tool calls left out of `toolCalls`, the oldest, to keep the report under the payload limit. */
  earlierToolCalls: number;
  /** How many workflow runs (continue-as-new) the debugging took. */
  workflowRuns: number;
  /** How many times old observations were compacted to fit the model's context window. */
  compactions: number;
  resumedFrom: string | null;
  /** What went wrong while ending the run (the final test run, the patch), in words; empty when nothing did. */
  problems: string[];
  /** Runs with several attempts: every attempt, and which one was kept (its fix is this report's). */
  attempts?: AttemptSummary[];
  chosenAttempt?: number | null;
  /** The environment the sandbox ran (dependencies installed, or reused); null for the plain sandbox image. */
  environment?: PreparedEnvironment | null;
}

/** One attempt as the parent's report lists it. */
export interface AttemptSummary {
  attempt: number;
  workflowId: string;
  /** A run status, or `cancelled` (first-wins stopped it) or `failed` (the child run failed). */
  status: RunStatus | 'cancelled' | 'failed';
  detail: string;
  rootCause: string | null;
  /** Lines added plus lines removed by its patch. */
  diffLines: number;
  iterations: number;
  tokens: TokenUsage;
  costUsd: number | null;
  patch: string;
}

/** A patch kept in the content store because it is too large for the report. */
export interface StoredPatch {
  /** Its content-store blob id (the SHA-256 of its bytes). */
  blob: string;
  bytes: number;
  /** Where that blob is: its file in a folder store, or the database that holds it (never its password). */
  file: string;
  /** Lines added plus lines removed by the whole patch (the report's preview has only some of them). */
  changedLines?: number;
}

/** The computePatch activity's answer: the patch, or its preview and where the whole patch is kept. */
export interface PatchForReport {
  patch: string;
  fullPatch: StoredPatch | null;
  /** Changed paths the patch leaves out (see DebugReport.leftOutOfPatch); absent when none. */
  leftOut?: string[];
}

export function statusFor(condition: StopCondition): RunStatus {
  switch (condition) {
    case 'finish_verified':
      return 'fixed';
    case 'no_failing_tests':
      return 'no_failing_tests';
    case 'max_iterations':
    case 'max_tokens':
    case 'max_cost':
    case 'max_duration':
      return 'budget_exhausted';
    case 'stop_signal':
      return 'stopped';
    case 'model_error':
    case 'internal_error':
      return 'error';
    case 'not_approved':
      return 'not_approved';
    case 'environment_error':
      return 'environment_error';
    default:
      return 'not_fixed';
  }
}
