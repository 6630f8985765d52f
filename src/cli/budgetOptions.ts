// The --more-* options of `resume` and `raise-budget`.
import type { Command } from 'commander';
import type { BudgetRaise } from '../agent/budgetRaise.js';
import type { Budgets } from '../agent/input.js';
import { positiveInteger, positiveNumber } from './commandSupport.js';
import { log } from './session.js';

export interface BudgetOptions {
  moreIterations?: number;
  moreTokens?: number;
  moreCost?: number;
  moreMinutes?: number;
  json?: boolean;
}

export function budgetOptions(command: Command): Command {
  return command
    .option('--more-iterations <n>', 'iterations to add', positiveInteger)
    .option('--more-tokens <n>', 'tokens to add to the token budget', positiveInteger)
    .option('--more-cost <usd>', 'USD to add to the cost budget', positiveNumber)
    .option('--more-minutes <n>', 'minutes to add to the time budget', positiveNumber)
    .option('--json', 'print JSON lines');
}

export function raiseAsked(options: BudgetOptions): BudgetRaise {
  return {
    ...(options.moreIterations ? { moreIterations: options.moreIterations } : {}),
    ...(options.moreTokens ? { moreTokens: options.moreTokens } : {}),
    ...(options.moreCost ? { moreCostUsd: options.moreCost } : {}),
    ...(options.moreMinutes ? { moreMinutes: options.moreMinutes } : {}),
  };
}

/** Budgets that were never set stay unset: say so when a raise names one. */
export function noteUnsetBudgets(asked: BudgetRaise, budgets: Budgets): void {
  const unset = [
    asked.moreTokens && budgets.maxTokens === undefined ? '--more-tokens (the run has no token budget)' : null,
    asked.moreCostUsd && budgets.maxCostUsd === undefined ? '--more-cost (the run has no cost budget)' : null,
    asked.moreMinutes && budgets.maxMinutes === undefined ? '--more-minutes (the run has no time budget)' : null,
  ].filter(Boolean);
  if (unset.length) log(`Ignored ${unset.join(', ')}: budgets that were not set stay unset.`);
}
