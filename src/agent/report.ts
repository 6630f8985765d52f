// The run's result: what a person reads at the end, and what `result --json` prints.
import type { StopCondition, TokenUsage } from './budgets.js';
import type { TestSummary } from './testResults.js';

export type RunStatus = 'fixed' | 'not_fixed' | 'no_failing_tests' | 'budget_exhausted' | 'stopped' | 'error';

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
  rootCause: string | null;
  fixSummary: string | null;
  /** A unified diff of the workspace against the original repository; `git apply` accepts it. */
  patch: string;
  testsBefore: TestSummary | null;
  testsAfter: TestSummary | null;
  testCommand: string | null;
  iterations: number;
  tokens: TokenUsage;
  /** Estimated cost in USD; null when the model's price is unknown. */
  costUsd: number | null;
  /** Set when the cost was counted at a conservative price because the model has no listed price. */
  costNote: string | null;
  durationMs: number;
  toolCalls: ToolCallRecord[];
  /** How many workflow runs (continue-as-new) the debugging took. */
  workflowRuns: number;
  /** How many times old observations were compacted to fit the model's context window. */
  compactions: number;
  resumedFrom: string | null;
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
      return 'error';
    default:
      return 'not_fixed';
  }
}
