// Raising a run's budgets: the raiseBudget update of a paused run and `resume` of an ended one
// follow the same rules. A raise always covers every budget that is spent (otherwise the run
// would stop again at once): by what was asked, or else by a default amount. Each raised budget
// grows from the larger of its limit and what was used; budgets that were never set stay unset.
import { estimateTokens, exhaustedBudgets, totalTokens, type StopCondition, type UsageSoFar } from './budgets.js';
import { conversationBytes } from './conversation.js';
import type { Budgets } from './input.js';
import type { RunState } from './runState.js';

export interface BudgetRaise {
  moreIterations?: number;
  moreTokens?: number;
  moreCostUsd?: number;
  moreMinutes?: number;
}

type RaiseField = keyof BudgetRaise;

/** A spent iteration budget is raised by this many iterations unless the raise says otherwise. */
export const defaultMoreIterations = 10;

const fieldFor: Partial<Record<StopCondition, RaiseField>> = {
  max_iterations: 'moreIterations',
  max_tokens: 'moreTokens',
  max_cost: 'moreCostUsd',
  max_duration: 'moreMinutes',
};

/** The run's usage as the budgets count it, with the next request's estimated tokens. */
export function budgetUsage(
  state: RunState,
  elapsedMs: number,
  conversationCharacters = conversationBytes(state.conversation),
): UsageSoFar {
  const newCharacters = Math.max(0, conversationCharacters - state.lastRequestCharacters);
  return {
    iterations: state.iteration,
    tokens: state.tokens,
    costUsd: state.costUsd,
    elapsedMs,
    nextRequestTokens: state.lastRequestTokens + estimateTokens(newCharacters),
  };
}

/**
 * The raise asked for, completed with a default for every spent budget it does not name:
 * 10 iterations, or the amount of tokens, dollars or minutes the run was started with.
 */
export function completeRaise(asked: BudgetRaise, budgets: Budgets, usage: UsageSoFar, original: Budgets): BudgetRaise {
  const raise: BudgetRaise = { ...asked };
  for (const stop of exhaustedBudgets(budgets, usage)) {
    const field = fieldFor[stop.condition];
    if (!field || raise[field] !== undefined) continue;
    const amount =
      field === 'moreIterations'
        ? defaultMoreIterations
        : field === 'moreTokens'
          ? (original.maxTokens ?? budgets.maxTokens)
          : field === 'moreCostUsd'
            ? (original.maxCostUsd ?? budgets.maxCostUsd)
            : (original.maxMinutes ?? budgets.maxMinutes);
    if (amount !== undefined) raise[field] = amount;
  }
  return raise;
}

export interface RaisedBudgets {
  budgets: Budgets;
  /** What was raised, and by how much. */
  applied: BudgetRaise;
  /** Raises of budgets the run does not have (they stay unset). */
  ignored: RaiseField[];
}

/** Applies a raise: each named budget that is set grows from the larger of its limit and its use. */
export function applyRaise(budgets: Budgets, usage: UsageSoFar, raise: BudgetRaise): RaisedBudgets {
  const next: Budgets = { ...budgets };
  const applied: BudgetRaise = {};
  const ignored: RaiseField[] = [];
  if (raise.moreIterations) {
    next.maxIterations = Math.max(budgets.maxIterations, usage.iterations) + raise.moreIterations;
    applied.moreIterations = raise.moreIterations;
  }
  const grow = (field: RaiseField, limit: number | undefined, used: number, set: (value: number) => void) => {
    const more = raise[field];
    if (!more) return;
    if (limit === undefined) {
      ignored.push(field);
      return;
    }
    set(Math.max(limit, used) + more);
    applied[field] = more;
  };
  grow(
    'moreTokens',
    budgets.maxTokens,
    totalTokens(usage.tokens) + usage.nextRequestTokens,
    (value) => (next.maxTokens = Math.ceil(value)),
  );
  grow('moreCostUsd', budgets.maxCostUsd, usage.costUsd ?? 0, (value) => (next.maxCostUsd = value));
  grow('moreMinutes', budgets.maxMinutes, usage.elapsedMs / 60_000, (value) => (next.maxMinutes = value));
  return { budgets: next, applied, ignored };
}

/** Why a raiseBudget update is refused, or null. An empty raise is for a paused run only. */
export function raiseProblem(raise: unknown, paused: boolean): string | null {
  if (typeof raise !== 'object' || raise === null) return 'The raise must be an object such as {"moreIterations": 10}.';
  const values = Object.entries(raise as Record<string, unknown>);
  const unknown = values.filter(
    ([key]) => !['moreIterations', 'moreTokens', 'moreCostUsd', 'moreMinutes'].includes(key),
  );
  if (unknown.length)
    return `Unknown budget(s) ${unknown.map(([key]) => `"${key}"`).join(', ')}: use moreIterations, moreTokens, moreCostUsd or moreMinutes.`;
  if (
    values.some(
      ([, value]) => value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0),
    )
  ) {
    return 'Budget raises must be positive numbers.';
  }
  if (!paused && values.every(([, value]) => value === undefined)) {
    return 'Name at least one budget to raise (moreIterations, moreTokens, moreCostUsd, moreMinutes); an empty raise is only for a paused run, where it raises what paused it.';
  }
  return null;
}

export function describeRaise(raise: BudgetRaise): string {
  const parts: string[] = [];
  if (raise.moreIterations) parts.push(`${raise.moreIterations} more iterations`);
  if (raise.moreTokens) parts.push(`${raise.moreTokens} more tokens`);
  if (raise.moreCostUsd) parts.push(`$${raise.moreCostUsd} more`);
  if (raise.moreMinutes) parts.push(`${raise.moreMinutes} more minutes`);
  return parts.join(', ') || 'nothing';
}

/** The budgets in words, for the CLI: `iterations 3 → 13, tokens 12000 → 24000`. */
export function describeBudgetChange(before: Budgets, after: Budgets): string {
  const parts: string[] = [];
  const show = (name: string, from: number | undefined, to: number | undefined, format: (value: number) => string) => {
    if (to !== undefined && from !== to)
      parts.push(`${name} ${from === undefined ? '–' : format(from)} → ${format(to)}`);
  };
  show('iterations', before.maxIterations, after.maxIterations, String);
  show('tokens', before.maxTokens, after.maxTokens, String);
  show('cost', before.maxCostUsd, after.maxCostUsd, (value) => `$${Number(value.toFixed(4))}`);
  show('minutes', before.maxMinutes, after.maxMinutes, (value) => String(Number(value.toFixed(2))));
  return parts.join(', ') || 'budgets unchanged';
}
