// Cost of model calls: listed prices, aliases, and the conservative price a cost budget falls back on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addCallCost } from '../../src/agent/budgets.js';
import { anthropicModelId, conservativePrice, costOfCall, hasListedPrice } from '../../src/model/pricing.js';

const usage = { inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 0, cacheWriteTokens: 0 };

test('a call is priced by the model that answered first (the requested id may be an alias), then by the requested one', () => {
  assert.equal(costOfCall('claude-sonnet-latest', 'claude-sonnet-4-6', usage).costUsd, 3 + 1.5);
  assert.equal(costOfCall('claude-sonnet-4-6', 'claude-sonnet-4-6-20990101', usage).costUsd, 3 + 1.5);
  assert.deepEqual(costOfCall('claude-sonnet-4-6', undefined, usage), {
    costUsd: 4.5,
    budgetCostUsd: 4.5,
    priceNote: null,
  });
});

test('a model with no listed price has an unknown cost, and a budget cost at the highest listed price, with a note', () => {
  const cost = costOfCall('claude-unreleased-9', 'claude-unreleased-9', usage);
  assert.equal(cost.costUsd, null);
  assert.equal(cost.budgetCostUsd, conservativePrice.input + conservativePrice.output / 10);
  assert.ok(conservativePrice.input >= 10 && conservativePrice.output >= 50);
  assert.match(
    cost.priceNote ?? '',
    /^claude-unreleased-9 has no listed price, so the cost budget counts it at the highest listed price/,
  );
});

test('a run with a cost budget counts unpriced calls at the conservative price; without one, its cost stays unknown', () => {
  const unpriced = { costUsd: null, budgetCostUsd: 2, priceNote: 'x has no listed price' };
  assert.deepEqual(addCallCost({ costUsd: 1, costNote: null }, unpriced, true), {
    costUsd: 3,
    costNote: 'x has no listed price',
  });
  assert.deepEqual(addCallCost({ costUsd: 0, costNote: null }, unpriced, false), { costUsd: null, costNote: null });
  assert.deepEqual(
    addCallCost({ costUsd: 1, costNote: null }, { costUsd: 0.5, budgetCostUsd: 0.5, priceNote: null }, true),
    { costUsd: 1.5, costNote: null },
  );
  // A call recorded before budget costs existed (an old history) keeps the old rule.
  assert.deepEqual(addCallCost({ costUsd: 1, costNote: null }, { costUsd: null }, true), {
    costUsd: null,
    costNote: null,
  });
});

test('Bedrock’s and Vertex’s names of a model have its price; their regional endpoints cost 10% more than the global ones', () => {
  const sonnet = 3 + 1.5;
  const bedrock = { provider: 'bedrock' as const, region: 'eu-west-3' };
  assert.equal(costOfCall('global.anthropic.claude-sonnet-4-6', undefined, usage, bedrock).costUsd, sonnet);
  assert.equal(
    costOfCall('eu.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5-20250929', usage, bedrock).costUsd,
    sonnet * 1.1,
  );
  assert.equal(costOfCall('anthropic.claude-opus-4-6-v1', undefined, usage, bedrock).costUsd, (5 + 2.5) * 1.1);
  const vertexGlobal = { provider: 'vertex' as const, region: 'global' };
  const vertexRegional = { provider: 'vertex' as const, region: 'us-east5' };
  assert.equal(costOfCall('claude-sonnet-4-5@20250929', undefined, usage, vertexGlobal).costUsd, sonnet);
  assert.equal(costOfCall('claude-sonnet-4-5@20250929', undefined, usage, vertexRegional).costUsd, sonnet * 1.1);
  // The Anthropic API itself (or a gateway) has one price.
  assert.equal(costOfCall('claude-sonnet-4-6', undefined, usage, { provider: 'anthropic' }).costUsd, sonnet);
  assert.equal(hasListedPrice('us.anthropic.claude-haiku-4-5-20251001-v1:0'), true);
  assert.equal(anthropicModelId('claude-opus-4-5@20251101'), 'claude-opus-4-5-20251101');
});
