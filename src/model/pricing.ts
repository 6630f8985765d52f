// Estimated cost of model calls, from Anthropic's published prices (USD per million tokens,
// 5-minute cache writes). A model that is not listed has an unknown cost, never zero. Bedrock
// and Vertex name the same models their own way (`global.anthropic.claude-sonnet-4-6`,
// `claude-sonnet-4-5@20250929`) and charge the same, except on regional endpoints (see
// regionalPremium).

import type { TokenUsage } from '../agent/budgets.js';

interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

const opus45: Price = { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 };
const sonnet4: Price = { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 };
const fable5: Price = { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 1 };
const fable51: Price = { input: 10, output: 50, cacheWrite: 12.5, cacheRead: 0.25 };

const prices: Record<string, Price> = {
  'claude-fable-5-1': fable51,
  'claude-mythos-5-1': fable51,
  'claude-fable-5': fable5,
  'claude-mythos-5': fable5,
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  'claude-opus-5': opus45,
  'claude-opus-4-8': opus45,
  'claude-opus-4-7': opus45,
  'claude-opus-4-6': opus45,
  'claude-opus-4-5': opus45,
  'claude-opus-4-5-20251101': opus45,
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.1 },
  'claude-sonnet-5': { input: 2, output: 10, cacheWrite: 2.5, cacheRead: 0.2 },
  'claude-sonnet-4-6': sonnet4,
  'claude-sonnet-4-5': sonnet4,
  'claude-sonnet-4-5-20250929': sonnet4,
  'claude-haiku-4-5': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 },
  'claude-haiku-4-5-20251001': { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 },
};

/** Where a call was answered, for its price: the provider, and for Vertex its region. */
export interface PricingPlace {
  provider: 'anthropic' | 'bedrock' | 'vertex';
  region?: string;
}

/**
 * Bedrock's regional and geographic endpoints (a model id without the `global.` prefix) and
 * Vertex's regions (any but `global`) cost 10% more than the global endpoints for the models
 * from Claude Sonnet 4.5 on, which are all the models listed here.
 */
const regionalPremium = 1.1;

/** Anthropic's id of a model named the provider's way: prefixes, version suffixes and `@date` go. */
export function anthropicModelId(model: string): string {
  return model
    .replace(/^(global|us|us-gov|eu|apac|jp|au|ca)\./, '')
    .replace(/^anthropic\./, '')
    .replace(/-v\d+(:\d+)?$/, '')
    .replace(/@(\d{8})$/, '-$1')
    .replace(/@latest$/, '');
}

function isRegional(model: string, place: PricingPlace | undefined): boolean {
  if (place?.provider === 'bedrock') return !model.startsWith('global.');
  if (place?.provider === 'vertex') return place.region !== 'global';
  return false;
}

/** Cost in USD, or null when the model's price is not known. */
export function estimateCostUsd(model: string, usage: TokenUsage, place?: PricingPlace): number | null {
  return listedCost(model, usage, isRegional(model, place));
}

function listedCost(model: string, usage: TokenUsage, regional: boolean): number | null {
  const price = prices[anthropicModelId(model)];
  return price ? costAt(price, usage) * (regional ? regionalPremium : 1) : null;
}

function costAt(price: Price, usage: TokenUsage): number {
  const cost =
    usage.inputTokens * price.input +
    usage.outputTokens * price.output +
    usage.cacheWriteTokens * price.cacheWrite +
    usage.cacheReadTokens * price.cacheRead;
  return cost / 1_000_000;
}

export function hasListedPrice(model: string): boolean {
  return anthropicModelId(model) in prices;
}

/** The highest listed price of each kind of token: what a cost budget counts an unlisted model at. */
export const conservativePrice: Price = {
  input: Math.max(...Object.values(prices).map((price) => price.input)),
  output: Math.max(...Object.values(prices).map((price) => price.output)),
  cacheWrite: Math.max(...Object.values(prices).map((price) => price.cacheWrite)),
  cacheRead: Math.max(...Object.values(prices).map((price) => price.cacheRead)),
};

export function conservativePriceNote(model: string): string {
  const p = conservativePrice;
  return (
    `${model} has no listed price, so the cost budget counts it at the highest listed price ` +
    `($${p.input} input, $${p.output} output, $${p.cacheWrite} cache write, $${p.cacheRead} cache read per million tokens)`
  );
}

export interface CallCost {
  /** At the model's listed price; null when it has none. */
  costUsd: number | null;
  /** What a cost budget counts: the listed price, else the conservative one. */
  budgetCostUsd: number;
  /** Set when the model has no listed price: which price the budget counts it at. */
  priceNote: string | null;
}

/**
 * The cost of one call. The model that answered is priced first (the requested id may be an
 * alias), then the requested one; with neither listed, the cost is unknown, but a cost budget
 * still counts the call, at the conservative price, and says so.
 */
export function costOfCall(
  requestedModel: string,
  answeringModel: string | undefined,
  usage: TokenUsage,
  place?: PricingPlace,
): CallCost {
  // The requested id says which endpoint answered (Bedrock's `global.` prefix); the answer's may not.
  const regional = isRegional(requestedModel, place);
  const listed =
    (answeringModel ? listedCost(answeringModel, usage, regional) : null) ??
    listedCost(requestedModel, usage, regional);
  if (listed !== null) return { costUsd: listed, budgetCostUsd: listed, priceNote: null };
  return {
    costUsd: null,
    budgetCostUsd: costAt(conservativePrice, usage),
    priceNote: conservativePriceNote(answeringModel || requestedModel),
  };
}
