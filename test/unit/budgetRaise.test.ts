// Raising budgets (the raiseBudget update and `resume`): whatever is spent is raised, from the
// larger of its limit and its use; unset budgets stay unset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRaise, completeRaise, describeBudgetChange, raiseProblem } from '../../src/agent/budgetRaise.js';
import { emptyUsage, type UsageSoFar } from '../../src/agent/budgets.js';
import type { Budgets } from '../../src/agent/input.js';

const usage = (over: Partial<UsageSoFar> = {}): UsageSoFar => ({
  iterations: 5,
  tokens: { ...emptyUsage(), inputTokens: 9_000 },
  costUsd: 0.5,
  elapsedMs: 60_000,
  nextRequestTokens: 1_500,
  ...over,
});

test('a raise covers every spent budget: 10 iterations, or the first amount of tokens, dollars or minutes', () => {
  const budgets: Budgets = { maxIterations: 5, maxTokens: 10_000, maxCostUsd: 0.5, maxMinutes: 1 };
  const original: Budgets = { maxIterations: 5, maxTokens: 8_000, maxCostUsd: 0.4, maxMinutes: 0.5 };
  assert.deepEqual(completeRaise({}, budgets, usage(), original), {
    moreIterations: 10,
    moreTokens: 8_000,
    moreCostUsd: 0.4,
    moreMinutes: 0.5,
  });
  // What the raise names is kept; only what it leaves out gets a default.
  assert.deepEqual(completeRaise({ moreTokens: 50 }, budgets, usage({ iterations: 1 }), original), {
    moreTokens: 50,
    moreCostUsd: 0.4,
    moreMinutes: 0.5,
  });
  // Nothing spent: nothing added.
  assert.deepEqual(completeRaise({}, { maxIterations: 30 }, usage(), { maxIterations: 30 }), {});
});

test('a raised budget grows from the larger of its limit and its use (tokens with the next request); unset budgets stay unset', () => {
  const { budgets, applied, ignored } = applyRaise({ maxIterations: 5, maxTokens: 10_000, maxCostUsd: 0.4 }, usage(), {
    moreIterations: 3,
    moreTokens: 1_000,
    moreCostUsd: 0.25,
    moreMinutes: 2,
  });
  assert.deepEqual(budgets, { maxIterations: 8, maxTokens: 11_500, maxCostUsd: 0.75 });
  assert.deepEqual(applied, { moreIterations: 3, moreTokens: 1_000, moreCostUsd: 0.25 });
  assert.deepEqual(ignored, ['moreMinutes']);
  // A limit above the use grows from the limit.
  assert.equal(applyRaise({ maxIterations: 30, maxMinutes: 10 }, usage(), { moreMinutes: 5 }).budgets.maxMinutes, 15);
  // A clock past the limit (a paused run waits) grows from the clock.
  assert.equal(
    applyRaise({ maxIterations: 30, maxMinutes: 0.5 }, usage({ elapsedMs: 120_000 }), { moreMinutes: 1 }).budgets
      .maxMinutes,
    3,
  );
});

test('a raise of a spent budget by its default lifts the stop', () => {
  const budgets: Budgets = { maxIterations: 30, maxTokens: 10_000 };
  const spent = usage({ nextRequestTokens: 2_000 });
  const { budgets: raised } = applyRaise(budgets, spent, completeRaise({}, budgets, spent, budgets));
  assert.equal(raised.maxTokens, 9_000 + 2_000 + 10_000);
});

test('raiseBudget input: {} only for a paused run; known budgets; positive numbers', () => {
  assert.equal(raiseProblem({}, true), null);
  assert.match(raiseProblem({}, false) ?? '', /an empty raise is only for a paused run/);
  assert.match(raiseProblem({ moreApples: 1 }, true) ?? '', /Unknown budget\(s\) "moreApples"/);
  assert.match(raiseProblem({ moreIterations: 0 }, true) ?? '', /positive numbers/);
  assert.match(raiseProblem('ten', true) ?? '', /must be an object/);
  assert.equal(raiseProblem({ moreIterations: 2, moreCostUsd: 0.5 }, false), null);
});

test('budget changes in words', () => {
  assert.equal(
    describeBudgetChange(
      { maxIterations: 3, maxTokens: 3000 },
      { maxIterations: 13, maxTokens: 6519, maxMinutes: 1.5 },
    ),
    'iterations 3 → 13, tokens 3000 → 6519, minutes – → 1.5',
  );
  assert.equal(describeBudgetChange({ maxIterations: 3 }, { maxIterations: 3 }), 'budgets unchanged');
});
