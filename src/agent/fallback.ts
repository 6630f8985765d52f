// The fallback model: a run may name a model to call when its own keeps answering overloaded
// (529) or rate limited (429). The model activity switches once the primary has failed so for
// the set time (activities/model.ts); from then on the run's calls go to the fallback for a
// while, then try the primary again. Every call is counted by the model that answered it, so
// the report and the status say which calls the fallback made and what each model cost.
import { addUsage, emptyUsage, type TokenUsage } from './budgets.js';
import type { DebugInput } from './input.js';
import type { RunState } from './runState.js';

/** How long the primary may keep failing with overload or rate limits before a call goes to the fallback. */
export const defaultFallbackAfterSeconds = 60;
/** After the fallback answered, how long the run's calls stay with it before the primary is tried again. */
export const fallbackStaysMs = 10 * 60_000;

/** What a model call is told about the fallback: which model, and after how long to switch. */
export interface FallbackRequest {
  model: string;
  afterMs: number;
}

/** Set on a reply the fallback gave: the model that kept failing, and how. */
export interface FallbackUse {
  from: string;
  reason: string;
}

/**
 * The model of the next call and the fallback it may switch to. A run without a fallback model
 * asks for its model as it always did; one that the fallback answered recently goes straight to it.
 */
export function nextModel(
  state: Pick<RunState, 'fallbackSince'>,
  input: Pick<DebugInput, 'model' | 'fallbackModel' | 'fallbackAfterSeconds'>,
  now: number,
): { model: string | undefined; fallback?: FallbackRequest } {
  if (!input.fallbackModel) return { model: input.model };
  if (onFallback(state, now)) return { model: input.fallbackModel };
  return {
    model: input.model,
    fallback: {
      model: input.fallbackModel,
      afterMs: (input.fallbackAfterSeconds ?? defaultFallbackAfterSeconds) * 1000,
    },
  };
}

export function onFallback(state: Pick<RunState, 'fallbackSince'>, now: number): boolean {
  return typeof state.fallbackSince === 'number' && now - state.fallbackSince < fallbackStaysMs;
}

/** Counts a call by the model that answered it; a call the fallback took keeps the run on it. */
export function noteModelOfCall(
  state: Pick<RunState, 'fallbackSince' | 'modelUsage' | 'iteration'>,
  input: Pick<DebugInput, 'fallbackModel'>,
  reply: { model: string; usage: TokenUsage; costUsd: number | null; fallbackFrom?: FallbackUse },
  now: number,
): void {
  if (reply.fallbackFrom) state.fallbackSince = now;
  const usage = (state.modelUsage ??= []);
  let entry = usage.find((candidate) => candidate.model === reply.model);
  if (!entry) {
    entry = {
      model: reply.model,
      fallback: reply.model === input.fallbackModel,
      calls: 0,
      iterations: [],
      tokens: emptyUsage(),
      costUsd: 0,
    };
    usage.push(entry);
  }
  entry.calls += 1;
  entry.tokens = addUsage(entry.tokens, reply.usage);
  entry.costUsd = entry.costUsd === null || reply.costUsd === null ? null : entry.costUsd + reply.costUsd;
  const last = entry.iterations[entry.iterations.length - 1];
  if (last && state.iteration <= last[1] + 1) last[1] = Math.max(last[1], state.iteration);
  else entry.iterations.push([state.iteration, state.iteration]);
}

/** "iterations 3–7, 9" */
export function describeIterations(ranges: Array<[number, number]>): string {
  const parts = ranges.map(([from, to]) => (from === to ? `${from}` : `${from}–${to}`));
  return `${ranges.length === 1 && ranges[0]?.[0] === ranges[0]?.[1] ? 'iteration' : 'iterations'} ${parts.join(', ')}`;
}

/** What the Web UI's current details add for a call the fallback answered. */
export function fallbackNote(reply: { model: string; fallbackFrom?: FallbackUse }): string {
  return reply.fallbackFrom ? ` · answered by the fallback ${reply.model} (${reply.fallbackFrom.reason})` : '';
}
