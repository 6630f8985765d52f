// A turn of the loop once the model asked for tools: its calls sorted (bad ones answered at
// once, the finish call kept apart) and grouped (act), each tool's outcome kept, and the
// assistant message appended with ALL its results as one unit (observe). The finish call is
// judged by the suite run after it, never by the model's claim. Pure and deterministic.
import type { Stop } from './budgets.js';
import { appendExchange, type AssistantMessage, type ToolCall, type ToolResultBlock } from './conversation.js';
import * as prompts from './prompts.js';
import type { RunState } from './runState.js';
import type { ToolOutcome } from './sandboxProtocol.js';
import { verifyFix, type TestSummary } from './testResults.js';
import { describeToolCall, oversizedInputError, parseToolCall, type ParsedToolCall } from './tools.js';

/** Test-file edits refused in one run before it ends (the model keeps trying to change the tests). */
export const maxGuardrailRefusals = 3;

export type RunnableCall = Extract<ParsedToolCall, { ok: true }>;

/** A reply that asks for tools: what runs, and the results gathered until the turn is appended as one unit. */
export interface Turn {
  assistant: AssistantMessage;
  notes: string[];
  /** The reply's tool calls in its order: the results are appended in this order. */
  calls: ToolCall[];
  /** Run one group after the other: consecutive reads form one parallel group, each mutation is its own. */
  groups: RunnableCall[][];
  /** The first valid finish call: verified after the others ran. */
  finish: RunnableCall | null;
  results: Map<string, ToolResultBlock>;
}

/** Sorts a reply's calls: bad ones are answered at once, the finish call's claims are kept for the report. */
export function startTurn(
  state: RunState,
  assistant: AssistantMessage,
  calls: ToolCall[],
  notes: string[],
  options: { allowCommands: boolean; oversizedInputs?: Array<{ id: string; bytes: number }> },
): Turn {
  const sorted = sortToolCalls(calls, options);
  const turn: Turn = {
    assistant,
    notes,
    calls,
    groups: groupCalls(sorted.runnable),
    finish: sorted.finish,
    results: new Map(),
  };
  for (const { call, description, error } of sorted.refused)
    recordResult(state, turn, call, description, { content: error, isError: true });
  if (sorted.finish) {
    state.rootCause = String(sorted.finish.input.root_cause);
    state.fixSummary = typeof sorted.finish.input.summary === 'string' ? sorted.finish.input.summary : null;
  }
  return turn;
}

export interface SortedToolCalls {
  /** Valid calls other than finish, in the order given. */
  runnable: RunnableCall[];
  /** The first valid finish call: verified after the others ran. */
  finish: RunnableCall | null;
  /** Calls answered with an error without running: unknown tools, bad or oversized inputs, extra finish calls. */
  refused: Array<{ call: ToolCall; description: string; error: string }>;
}

export function sortToolCalls(
  calls: ToolCall[],
  options: { allowCommands: boolean; oversizedInputs?: Array<{ id: string; bytes: number }> },
): SortedToolCalls {
  const oversized = new Map((options.oversizedInputs ?? []).map((entry) => [entry.id, entry.bytes]));
  const sorted: SortedToolCalls = { runnable: [], finish: null, refused: [] };
  for (const call of calls) {
    const bytes = oversized.get(call.id);
    if (bytes !== undefined) {
      sorted.refused.push({
        call,
        description: `${call.name} (input too large)`,
        error: oversizedInputError(call.name, bytes),
      });
      continue;
    }
    const parsed = parseToolCall(call, options);
    const description = describeToolCall(call.name, call.input);
    if (!parsed.ok) sorted.refused.push({ call, description, error: parsed.error });
    else if (parsed.effect !== 'finish') sorted.runnable.push(parsed);
    else if (sorted.finish) {
      sorted.refused.push({
        call,
        description,
        error: 'finish was called more than once in one reply: only the first finish call is verified.',
      });
    } else sorted.finish = parsed;
  }
  return sorted;
}

/** Consecutive reads form one parallel group; each mutation is its own group, in order. */
export function groupCalls(calls: RunnableCall[]): RunnableCall[][] {
  const groups: RunnableCall[][] = [];
  for (const call of calls) {
    const last = groups[groups.length - 1];
    if (call.effect === 'read' && last && last[0]?.effect === 'read') last.push(call);
    else groups.push([call]);
  }
  return groups;
}

/** A tool's outcome: the workspace log grows by its mutations, a guardrail refusal counts, and its result is kept. */
export function applyToolOutcome(state: RunState, turn: Turn, call: RunnableCall, outcome: ToolOutcome): void {
  const workspace = state.workspace;
  if (workspace) {
    if (outcome.mutations.length > 0) workspace.mutations.push(...outcome.mutations);
    workspace.digest = outcome.digest;
    if (outcome.refusedBy === 'test-file-guardrail') state.guardrailRefusals += 1;
  }
  recordResult(state, turn, call, describeToolCall(call.name, call.input), outcome);
}

function recordResult(
  state: RunState,
  turn: Turn,
  call: { id: string; name: string },
  description: string,
  outcome: { content: string; isError: boolean },
): void {
  state.toolCalls.push({ iteration: state.iteration, name: call.name, description, isError: outcome.isError });
  turn.results.set(call.id, {
    type: 'tool_result',
    tool_use_id: call.id,
    content: outcome.content,
    ...(outcome.isError ? { is_error: true } : {}),
  });
}

// ── The finish call ────────────────────────────────────────────────────────────────────────

/** The answer to a finish call: what its tool_result says, and whether the run stops there. */
export interface FixReview {
  accepted: boolean;
  message: string;
  stop: Stop | null;
}

export interface FixVerdict {
  fixed: boolean;
  /** What the model is told when the fix is not verified. */
  message: string;
}

export const verifiedStop: Stop = {
  condition: 'finish_verified',
  detail: 'finish was called and the fix was verified',
};

/**
 * The model's claim is never trusted: the fix is judged by the suite run after it, against the
 * baseline. `undone`: the paths the verification's fresh sandbox gave back their snapshot state.
 */
export function judgeFix(baseline: TestSummary, after: TestSummary, undone: string[] = []): FixVerdict {
  const verdict = verifyFix(baseline, after);
  return { fixed: verdict.fixed, message: prompts.verificationFailed(verdict.reason, after, undone) };
}

/** The answer from the verification alone (when no person is asked to approve). */
export function reviewVerdict(verdict: FixVerdict): FixReview {
  if (!verdict.fixed) return { accepted: false, message: verdict.message, stop: null };
  return { accepted: true, message: prompts.fixVerified, stop: verifiedStop };
}

// ── Observe ────────────────────────────────────────────────────────────────────────────────

/**
 * Appends the assistant message and ALL its results (the finish call's answer last) as one
 * unit; the stop that ends the run there, if any.
 */
export function observeTurn(state: RunState, turn: Turn, review: FixReview | null): Stop | null {
  const results = turn.calls
    .map((call) => turn.results.get(call.id))
    .filter((result): result is ToolResultBlock => Boolean(result));
  if (turn.finish && review) {
    state.toolCalls.push({
      iteration: state.iteration,
      name: 'finish',
      description: 'finish',
      isError: !review.accepted,
    });
    results.push({
      type: 'tool_result',
      tool_use_id: turn.finish.id,
      content: review.message,
      is_error: !review.accepted,
    });
    appendExchange(state.conversation, turn.assistant, results, turn.notes);
    noteReply(state, turn.assistant);
    return review.stop;
  }
  appendExchange(state.conversation, turn.assistant, results, turn.notes);
  noteReply(state, turn.assistant);
  if (state.guardrailRefusals >= maxGuardrailRefusals)
    return { condition: 'guardrail', detail: 'the model kept trying to change test files' };
  return null;
}

/** Keeps the iteration of an assistant message that joined the conversation. */
export function noteReply(state: RunState, assistant: AssistantMessage | null): void {
  if (assistant) state.replyIterations?.push(state.iteration);
}
