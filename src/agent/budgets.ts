// Budgets and the stop conditions they drive. Checked before each model call, from the usage
// reported so far plus an estimate of the next request, so a run stops before it overspends.
import type { Budgets } from './input.js';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export type StopCondition =
  | 'finish_verified'
  | 'no_failing_tests'
  | 'no_tool_calls'
  | 'max_iterations'
  | 'max_tokens'
  | 'max_cost'
  | 'max_duration'
  | 'stop_signal'
  | 'guardrail'
  | 'refusal'
  | 'context_exhausted'
  | 'model_error'
  /** The run could not go on (its sandbox or its worker kept failing); it still reports. */
  | 'internal_error'
  | 'not_approved'
  | 'environment_error';

export interface Stop {
  condition: StopCondition;
  detail: string;
}

export interface UsageSoFar {
  iterations: number;
  tokens: TokenUsage;
  costUsd: number | null;
  elapsedMs: number;
  /** Estimated input tokens of the next request (last request's input plus what is new). */
  nextRequestTokens: number;
}

export const emptyUsage = (): TokenUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

export function addUsage(total: TokenUsage, more: TokenUsage): TokenUsage {
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    cacheReadTokens: total.cacheReadTokens + more.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + more.cacheWriteTokens,
  };
}

export function totalTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** Input tokens of a request as the API counts them (uncached, read and written). */
export function requestInputTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** Rough token count of text the model has not seen yet: about four characters a token. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

export function budgetStop(budgets: Budgets, usage: UsageSoFar): Stop | null {
  return exhaustedBudgets(budgets, usage)[0] ?? null;
}

/** Every budget that is spent (a run stops on the first; a resume must raise them all). */
export function exhaustedBudgets(budgets: Budgets, usage: UsageSoFar): Stop[] {
  const stops: Stop[] = [];
  if (usage.iterations >= budgets.maxIterations) {
    stops.push({ condition: 'max_iterations', detail: `reached the limit of ${budgets.maxIterations} iterations` });
  }
  if (budgets.maxTokens !== undefined) {
    const projected = totalTokens(usage.tokens) + usage.nextRequestTokens;
    if (projected > budgets.maxTokens) {
      stops.push({
        condition: 'max_tokens',
        detail: `the next request would bring the run to about ${projected} tokens, over its budget of ${budgets.maxTokens}`,
      });
    }
  }
  if (budgets.maxCostUsd !== undefined && usage.costUsd !== null && usage.costUsd >= budgets.maxCostUsd) {
    stops.push({
      condition: 'max_cost',
      detail: `spent $${usage.costUsd.toFixed(4)} of its $${budgets.maxCostUsd} budget`,
    });
  }
  if (budgets.maxMinutes !== undefined && usage.elapsedMs >= budgets.maxMinutes * 60_000) {
    stops.push({ condition: 'max_duration', detail: `ran for more than ${budgets.maxMinutes} minutes` });
  }
  return stops;
}

export interface RunCost {
  /** Null when the model's price is unknown and no cost budget asked for a conservative count. */
  costUsd: number | null;
  /** Set when the cost was counted at a conservative price: which one, and why. */
  costNote: string | null;
}

/**
 * The run's cost after one more model call. A call at an unlisted price leaves the cost unknown,
 * unless the run has a cost budget: then it counts at the conservative price, and the note says
 * so, so that a cost budget is never silently off. (Calls recorded before prices were reported
 * this way carry no budget cost and keep the old rule.)
 */
export function addCallCost(
  run: RunCost,
  call: { costUsd: number | null; budgetCostUsd?: number; priceNote?: string | null },
  hasCostBudget: boolean,
): RunCost {
  if (call.costUsd !== null)
    return { costUsd: run.costUsd === null ? null : run.costUsd + call.costUsd, costNote: run.costNote };
  if (hasCostBudget && call.budgetCostUsd !== undefined) {
    return { costUsd: (run.costUsd ?? 0) + call.budgetCostUsd, costNote: call.priceNote ?? run.costNote };
  }
  return { costUsd: null, costNote: run.costNote };
}

/** One model's share of a run: its calls (as ranges of iterations), tokens and cost; with a fallback model, which calls it made. */
export interface ModelUsage {
  model: string;
  fallback: boolean;
  calls: number;
  iterations: Array<[number, number]>;
  tokens: TokenUsage;
  /** null when the model has no listed price. */
  costUsd: number | null;
}
