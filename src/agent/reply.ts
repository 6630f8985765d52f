// One path for a model reply: cleaned once where it arrives (cleanReply, in the API client),
// then decided once (decideReply) into the one outcome the loop reads: stop, think again, or
// act on a turn of tool calls. Claude's replies can be odd but legal: no content at all,
// whitespace-only text before a tool call, several text-only replies, a tool call cut off at
// max_tokens, a refusal, a paused turn, unknown tools, bad inputs, finish next to other calls
// or twice, a thought of hundreds of kilobytes. Each gets a rule here, and nothing that the API
// would refuse when sent back ever enters the conversation. Pure and deterministic.
import type { Stop } from './budgets.js';
import { compact } from './compaction.js';
import {
  appendExchange,
  isBlankText,
  textOf,
  toolCallsOf,
  type AssistantBlock,
  type AssistantMessage,
} from './conversation.js';
import type { ModelReply } from './modelReply.js';
import * as prompts from './prompts.js';
import type { RunState } from './runState.js';
import { dropOversizedInputs } from './tools.js';
import { noteReply, startTurn, type Turn } from './turn.js';

/** Replies without a tool call allowed in a row (each answered with a nudge); the next one stops the run. */
export const maxTextOnlyRepliesInARow = 3;

/** A text block longer than this keeps its head and tail: the history and later requests stay small. */
export const maxThoughtCharacters = 20_000;

// ── Clean ──────────────────────────────────────────────────────────────────────────────────

/**
 * The reply as it may be stored and sent back: empty and whitespace-only text blocks dropped
 * (the API refuses them), very long text shortened, a repeated tool_use id dropped, and a tool
 * input over its size limit emptied and named in `oversizedToolInputs` (it is answered with an
 * error). Thinking blocks are kept unchanged (the API checks their signature).
 */
export function cleanReply(content: AssistantBlock[]): {
  content: AssistantBlock[];
  oversizedToolInputs: Array<{ id: string; bytes: number }>;
} {
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
  const { blocks, oversized } = dropOversizedInputs(kept);
  return { content: blocks, oversizedToolInputs: oversized };
}

/** Head and tail of a long text, with a marker; the result is under maxThoughtCharacters, so shortening twice changes nothing. */
export function shortenThought(text: string): string {
  const keep = Math.floor((maxThoughtCharacters - 200) / 2);
  const removed = text.length - 2 * keep;
  return `${text.slice(0, keep)}\n[… ${removed} characters of this reply removed to keep the conversation small …]\n${text.slice(-keep)}`;
}

// ── Decide ─────────────────────────────────────────────────────────────────────────────────

/** What the loop does after the model's turn: stop the run, ask the model again (think), or run tools (act). */
export type Step = { next: 'stop'; stop: Stop } | { next: 'think' } | { next: 'act'; turn: Turn };

/**
 * What one reply means: a stop, another model call (a paused turn, a nudge after a reply
 * without tools, a compaction), or tool calls to run. Whatever needs no tool result is
 * appended here; a paused turn that this reply continues is merged into it.
 */
export function decideReply(
  state: RunState,
  reply: Pick<ModelReply, 'content' | 'stopReason' | 'oversizedToolInputs'>,
  options: { allowCommands: boolean },
): Step {
  // A paused turn is the conversation's last message: this reply continues it.
  const last = state.conversation[state.conversation.length - 1];
  const paused = last?.role === 'assistant' ? (state.conversation.pop() as AssistantMessage) : undefined;
  if (paused) state.replyIterations?.pop();
  const content = [...(paused?.content ?? []), ...reply.content];
  const thought = textOf(content);
  state.lastThought = thought || state.lastThought;
  const textOnlyBefore = state.textOnlyRepliesInARow ?? 0;
  state.textOnlyRepliesInARow = textOnlyBefore;

  switch (reply.stopReason) {
    case 'refusal':
      // A refused turn is not sent back: a conversation that carries it keeps being refused.
      return stopWith({
        condition: 'refusal',
        detail: `the model declined to continue (refusal)${thought ? `: ${clip(thought, 300)}` : ''}`,
      });
    case 'model_context_window_exceeded':
      if (compact(state)) return { next: 'think' };
      return stopWith({
        condition: 'context_exhausted',
        detail: 'the conversation no longer fits the model’s context window',
      });
    case 'pause_turn':
      // A paused turn is sent back as the last message so the model continues it; one that
      // already asks for tools is acted on like any other reply.
      if (toolCallsOf(content).length === 0) {
        const assistant = messageOf(content);
        if (assistant) state.conversation.push(assistant);
        noteReply(state, assistant);
        return { next: 'think' };
      }
      break;
    case 'max_tokens': {
      // The last block was being written when the limit hit: a tool call there is incomplete.
      const final = content[content.length - 1];
      return withCalls(final?.type === 'tool_use' ? content.slice(0, -1) : content, [prompts.askForShorterReply]);
    }
    default:
      break;
  }
  return withCalls(content, []);

  function withCalls(blocks: AssistantBlock[], notes: string[]): Step {
    const assistant = messageOf(blocks);
    const calls = toolCallsOf(blocks);
    if (assistant && calls.length > 0) {
      state.textOnlyRepliesInARow = 0;
      const turnOptions = { allowCommands: options.allowCommands, oversizedInputs: reply.oversizedToolInputs };
      return { next: 'act', turn: startTurn(state, assistant, calls, notes, turnOptions) };
    }
    const inARow = textOnlyBefore + 1;
    state.textOnlyRepliesInARow = inARow;
    if (inARow > maxTextOnlyRepliesInARow) {
      appendExchange(state.conversation, assistant, []);
      noteReply(state, assistant);
      return stopWith({
        condition: 'no_tool_calls',
        detail: `the model replied ${inARow} times in a row without calling a tool`,
      });
    }
    appendExchange(state.conversation, assistant, [], notes.length ? notes : [prompts.nudgeAfterTextOnly]);
    noteReply(state, assistant);
    return { next: 'think' };
  }
}

function stopWith(stop: Stop): Step {
  return { next: 'stop', stop };
}

/** What to store as the model's turn; null when nothing is left worth sending back. */
function messageOf(blocks: AssistantBlock[]): AssistantMessage | null {
  // A reply of thinking alone says nothing to send back: the API drops old thinking anyway.
  return blocks.some((block) => block.type === 'text' || block.type === 'tool_use')
    ? { role: 'assistant', content: blocks }
    : null;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
