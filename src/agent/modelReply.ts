// The model's reply to one call: one type from the API client (src/model/anthropic.ts) through
// the callModel activity to the workflow and the plain loop of the bench.
import type { TokenUsage } from './budgets.js';
import type { AssistantBlock, StopReason } from './conversation.js';
import type { FallbackUse } from './fallback.js';

export interface ModelReply {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: TokenUsage;
  /** At the model's listed price; null when it has none. */
  costUsd: number | null;
  /** What a cost budget counts: the listed price, else a stated conservative one (priceNote). */
  budgetCostUsd: number;
  priceNote: string | null;
  /** The model the run asked for (the API may answer with a dated version of it: see answeredBy); the fallback's when it answered. */
  model: string;
  /** Set when the run's fallback model answered because its own kept failing (src/agent/fallback.ts). */
  fallbackFrom?: FallbackUse;
  /** Who answered, in words: "Claude (<the model id the API reported>)", or the scripted responses' source. */
  answeredBy: string;
  requestId: string | null;
  /** Tool calls whose input was too large to keep (see dropOversizedInputs); the workflow answers them with an error. */
  oversizedToolInputs: Array<{ id: string; bytes: number }>;
  /** Set when the reply was asked for streamed and the endpoint answered with the whole message (src/model/wholeReplies.ts). */
  notStreamed?: true;
}
