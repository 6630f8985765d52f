// What the loop does with one model reply. Claude's replies can be odd but legal: no content
// at all, whitespace-only text before a tool call, several text-only replies, a tool call cut
// off at max_tokens, a refusal, a paused turn, unknown tools, bad inputs, finish next to other
// calls or twice, a thought of hundreds of kilobytes. Each gets a rule here, and nothing that
// the API would refuse when sent back ever enters the conversation. Pure and deterministic.
import type { Stop } from './budgets.js';
import {
  appendExchange,
  appendUserText,
  isBlankText,
  textOf,
  toolCallsOf,
  type AssistantBlock,
  type AssistantMessage,
  type Message,
  type StopReason,
  type ToolCall,
  type ToolResultBlock,
} from './conversation.js';
import * as prompts from './prompts.js';
import { describeToolCall, oversizedInputError, parseToolCall, type ParsedToolCall } from './tools.js';

/** Replies without a tool call allowed in a row (each answered with a nudge); the next one ends the run. */
export const maxTextOnlyRepliesInARow = 3;

/** A text block longer than this keeps its head and tail: the history and later requests stay small. */
export const maxThoughtCharacters = 20_000;

/**
 * The reply as it may be stored and sent back: empty and whitespace-only text blocks dropped
 * (the API refuses them), very long text shortened, a repeated tool_use id dropped. Thinking
 * blocks are kept unchanged (the API checks their signature).
 */
export function sanitizeReply(content: AssistantBlock[]): AssistantBlock[] {
  const ids = new Set<string>();
  const kept: AssistantBlock[] = [];
  for (const block of content) {
    if (isBlankText(block)) continue;
    if (block.type === 'text' && block.text.length > maxThoughtCharacters) {
      kept.push({ type: 'text', text: shortenThought(block.text) });
    } else if (block.type === 'tool_use') {
      if (ids.has(block.id)) continue;
      ids.add(block.id);
      kept.push(block);
    } else {
      kept.push(block);
    }
  }
  return kept;
}

/** Head and tail of a long text, with a marker; the result is under maxThoughtCharacters, so shortening twice changes nothing. */
export function shortenThought(text: string): string {
  const keep = Math.floor((maxThoughtCharacters - 200) / 2);
  const removed = text.length - 2 * keep;
  return `${text.slice(0, keep)}\n[… ${removed} characters of this reply removed to keep the conversation small …]\n${text.slice(-keep)}`;
}

export interface ReplyInput {
  content: AssistantBlock[];
  stopReason: StopReason | string;
  /** A paused turn (pause_turn) that this reply continues. */
  paused?: AssistantMessage;
  /** Replies without tool calls in a row before this one. */
  textOnlyRepliesInARow: number;
}

export type ReplyPlan = {
  /** What to store as the model's turn; null when nothing is left worth sending back. */
  assistant: AssistantMessage | null;
  /** The reply's text, for the status view (bounded). */
  thought: string;
  textOnlyRepliesInARow: number;
} & (
  | { next: 'act'; calls: ToolCall[]; notes: string[] }
  | { next: 'nudge'; notes: string[] }
  | { next: 'pause' }
  | { next: 'compact' }
  | { next: 'stop'; stop: Stop }
);

/** Decides what one reply means for the loop. */
export function planReply(input: ReplyInput): ReplyPlan {
  const content = sanitizeReply([...(input.paused?.content ?? []), ...input.content]);
  const thought = textOf(content);
  const message = (blocks: AssistantBlock[]): AssistantMessage | null =>
    // A reply of thinking alone says nothing to send back: the API drops old thinking anyway.
    blocks.some((block) => block.type === 'text' || block.type === 'tool_use')
      ? { role: 'assistant', content: blocks }
      : null;
  const count = input.textOnlyRepliesInARow;

  switch (input.stopReason) {
    case 'refusal':
      // A refused turn is not sent back: a conversation that carries it keeps being refused.
      return {
        next: 'stop',
        assistant: null,
        thought,
        textOnlyRepliesInARow: count,
        stop: {
          condition: 'refusal',
          detail: `the model declined to continue (refusal)${thought ? `: ${clip(thought, 300)}` : ''}`,
        },
      };
    case 'model_context_window_exceeded':
      return { next: 'compact', assistant: null, thought, textOnlyRepliesInARow: count };
    case 'pause_turn':
      // A paused turn is sent back as the last message so the model continues it; one that
      // already asks for tools is acted on like any other reply.
      if (toolCallsOf(content).length === 0)
        return { next: 'pause', assistant: message(content), thought, textOnlyRepliesInARow: count };
      break;
    case 'max_tokens': {
      // The last block was being written when the limit hit: a tool call there is incomplete.
      const last = content[content.length - 1];
      const complete = last?.type === 'tool_use' ? content.slice(0, -1) : content;
      return withCalls(complete, [prompts.askForShorterReply]);
    }
    default:
      break;
  }
  return withCalls(content, []);

  function withCalls(blocks: AssistantBlock[], notes: string[]): ReplyPlan {
    const assistant = message(blocks);
    const calls = toolCallsOf(blocks);
    if (calls.length > 0) return { next: 'act', assistant, thought, textOnlyRepliesInARow: 0, calls, notes };
    const inARow = count + 1;
    if (inARow > maxTextOnlyRepliesInARow) {
      return {
        next: 'stop',
        assistant,
        thought,
        textOnlyRepliesInARow: inARow,
        stop: {
          condition: 'no_tool_calls',
          detail: `the model replied ${inARow} times in a row without calling a tool`,
        },
      };
    }
    return {
      next: 'nudge',
      assistant,
      thought,
      textOnlyRepliesInARow: inARow,
      notes: notes.length ? notes : [prompts.nudgeAfterTextOnly],
    };
  }
}

/**
 * Stores a turn: the assistant message with its results and notes as one exchange, or, when
 * nothing of the reply is kept, only the notes (they join the last user message).
 */
export function appendReply(
  conversation: Message[],
  assistant: AssistantMessage | null,
  results: ToolResultBlock[],
  notes: string[] = [],
): void {
  if (assistant) {
    appendExchange(conversation, assistant, results, notes);
    return;
  }
  for (const note of notes) appendUserText(conversation, note);
}

export interface SortedToolCalls {
  /** Valid calls other than finish, in the order given. */
  runnable: Array<Extract<ParsedToolCall, { ok: true }>>;
  /** The first valid finish call: verified after the others ran. */
  finish: Extract<ParsedToolCall, { ok: true }> | null;
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

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
