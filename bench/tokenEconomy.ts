// 4. Token economy: a scripted 20-iteration run that fixes the bug (run the tests, read the
// code 16 times, edit, rerun, finish), through the workflow. From the fake API's records: the
// share of each request that repeats the previous request up to its last cache breakpoint
// (what the prompt cache can serve), and the run's cost with prompt caching against the same
// requests priced as if nothing were cached.
import type { TokenUsage } from '../src/agent/budgets.js';
import { estimateCostUsd } from '../src/model/pricing.js';
import type { RecordedRequest } from '../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../src/demo/fixtures.js';
import type { ScriptStep } from '../src/demo/script.js';
import { benchModel, type BenchEnvironment } from './benchStack.js';
import { figure, figureTable, number, percent, repeat, type Figure } from './stats.js';

export const tokenRunIterations = 20;
export const cacheableGoal = 0.9;

export interface TokenEconomyResult {
  model: string;
  requests: number;
  /** Cacheable share of every request of the first repetition (all repetitions are the same script). */
  sharesOfFirstRun: number[];
  /** Lowest cacheable share from the third request on, per run. */
  lowestShareFromThirdRequest: Figure;
  meanShareFromThirdRequest: Figure;
  tokens: { input: Figure; cacheWrite: Figure; cacheRead: Figure; output: Figure };
  costWithCachingUsd: Figure;
  costWithoutCachingUsd: Figure;
  /** Cost with caching / cost without. */
  costRatio: Figure;
  goalMet: boolean;
}

export async function measureTokenEconomy(env: BenchEnvironment, repetitions: number): Promise<TokenEconomyResult> {
  const steps = (await loadFixture('01_off_by_one')).script.responses as ScriptStep[];
  const readCode: ScriptStep = {
    thought: 'Looking at the loop again.',
    tool_calls: [{ name: 'read_file', input: { path: 'buggy_code.py' } }],
  };
  // run_tests, 16 reads, then the fixture's own edit, rerun and finish.
  const responses = [
    steps[0] as ScriptStep,
    ...Array.from({ length: tokenRunIterations - 4 }, () => readCode),
    ...steps.slice(3),
  ];

  const runs = await repeat(repetitions, async (repetition) => {
    // A repository of its own per run, so that no run reads another's conversation from the cache.
    const repo = await env.tinyRepository(`bench_tokens_${repetition + 1}`, { responses });
    const { report } = await env.runWorkflow({ repo, budgets: { maxIterations: tokenRunIterations + 5 } });
    const requests = env.takeRequests().filter((request) => request.status === 200);
    if (report.status !== 'fixed' || requests.length !== tokenRunIterations) {
      throw new Error(
        `expected a fixed run of ${tokenRunIterations} requests, got ${report.status} after ${requests.length}`,
      );
    }
    return requests;
  });

  const shares = runs.map((requests) => requests.map((request) => request.cacheableShare));
  const usages = runs.map((requests) => requests.map(usageOf));
  const total = (pick: (usage: TokenUsage) => number) =>
    figure(usages.map((run) => run.reduce((sum, usage) => sum + pick(usage), 0)));
  const costs = usages.map((run) => ({
    withCaching: run.reduce((sum, usage) => sum + price(usage), 0),
    withoutCaching: run.reduce((sum, usage) => sum + price(uncached(usage)), 0),
  }));
  const lowest = figure(shares.map((run) => Math.min(...run.slice(2))));
  return {
    model: benchModel,
    requests: tokenRunIterations,
    sharesOfFirstRun: shares[0] as number[],
    lowestShareFromThirdRequest: lowest,
    meanShareFromThirdRequest: figure(shares.map((run) => mean(run.slice(2)))),
    tokens: {
      input: total((usage) => usage.inputTokens),
      cacheWrite: total((usage) => usage.cacheWriteTokens),
      cacheRead: total((usage) => usage.cacheReadTokens),
      output: total((usage) => usage.outputTokens),
    },
    costWithCachingUsd: figure(costs.map((cost) => cost.withCaching)),
    costWithoutCachingUsd: figure(costs.map((cost) => cost.withoutCaching)),
    costRatio: figure(costs.map((cost) => cost.withCaching / cost.withoutCaching)),
    goalMet: lowest.min >= cacheableGoal,
  };
}

function usageOf(request: RecordedRequest): TokenUsage {
  const usage = request.usage;
  if (!usage) throw new Error(`request ${request.number} has no usage`);
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheReadTokens: usage.cache_read_input_tokens,
    cacheWriteTokens: usage.cache_creation_input_tokens,
  };
}

/** The same request as if nothing were cached: every input token at the full input price. */
function uncached(usage: TokenUsage): TokenUsage {
  return {
    inputTokens: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
}

function price(usage: TokenUsage): number {
  const cost = estimateCostUsd(benchModel, usage);
  if (cost === null) throw new Error(`no price for ${benchModel}`);
  return cost;
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function formatTokenEconomy(result: TokenEconomyResult): string[] {
  const usd = (value: number) => `$${value.toFixed(4)}`;
  const tokens = (value: number) => number(value, 0);
  const share = (value: number) => percent(value);
  return [
    `4. Token economy (scripted ${result.requests}-iteration run that fixes fixtures/01_off_by_one; priced as ${result.model}, src/model/pricing.ts)`,
    `  cost with prompt caching / without: ${number(result.costRatio.median, 3)} (median; "without" = the same requests priced as if nothing were cached)`,
    `  goal: at least ${percent(cacheableGoal, 0)} of input cacheable from the third request on: ${result.goalMet ? 'met' : 'NOT met'} ` +
      `(lowest ${percent(result.lowestShareFromThirdRequest.min)})`,
    `  cacheable share per request: ${result.sharesOfFirstRun.map((value) => percent(value, 0)).join(' ')}`,
    ...figureTable([
      { label: 'cost with caching / without', figure: result.costRatio, format: (value) => number(value, 3) },
      { label: 'lowest cacheable share, request 3 on', figure: result.lowestShareFromThirdRequest, format: share },
      { label: 'mean cacheable share, request 3 on', figure: result.meanShareFromThirdRequest, format: share },
      { label: 'cost with prompt caching', figure: result.costWithCachingUsd, format: usd },
      { label: 'cost without prompt caching', figure: result.costWithoutCachingUsd, format: usd },
      { label: 'input tokens, uncached', figure: result.tokens.input, format: tokens },
      { label: 'input tokens, cache writes', figure: result.tokens.cacheWrite, format: tokens },
      { label: 'input tokens, cache reads', figure: result.tokens.cacheRead, format: tokens },
      { label: 'output tokens', figure: result.tokens.output, format: tokens },
    ]),
    "  The cacheable share is the fake API's measure: the part of a request that repeats the previous request of the same",
    "  conversation byte for byte up to that request's last cache breakpoint. Token counts are the fake's (4 characters a token).",
    '  Every run sends the same tools and system prompt: once one run has written them to the cache, later runs read them (as the',
    "  real API does within the cache's 5-minute lifetime), so the first run of the bench may cost a little more than the rest.",
  ];
}
