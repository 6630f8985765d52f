// When the conversation no longer fits the model's context window, the oldest observations'
// bodies are replaced, all at once, by a short marker. Tool_use/tool_result pairs stay
// intact (the API's rule), and doing it in one block breaks the prompt cache only once.
import { budgetUsage } from './budgetRaise.js';
import { estimateTokens, type Stop } from './budgets.js';
import { conversationBytes, type Message } from './conversation.js';
import type { DebugInput } from './input.js';
import { conversationByteBudget, dropOldestRecords, exceedsBytes, jsonBytes } from './payloads.js';
import type { RunState } from './runState.js';

/**
 * Compacts old observations before a request would overflow the model's context window, or
 * the conversation Temporal's payload limit; a stop when it cannot be brought under that limit.
 */
export function compactIfContextIsFull(state: RunState, input: DebugInput): Stop | null {
  const limit = input.contextWindowTokens * 0.9 - input.maxOutputTokens;
  state.earlierToolCalls = (state.earlierToolCalls ?? 0) + dropOldestRecords(state.toolCalls);
  // One serialization serves both checks (this runs before every model call); a second one only after compacting.
  const text = JSON.stringify(state.conversation);
  if (budgetUsage(state, 0, text.length).nextRequestTokens <= limit && !exceedsBytes(text, conversationByteBudget))
    return null;
  compact(state);
  if (!exceedsBytes(JSON.stringify(state.conversation), conversationByteBudget)) return null;
  return {
    condition: 'context_exhausted',
    detail: `the conversation cannot be brought under its size limit of ${conversationByteBudget} bytes`,
  };
}

/** Shortens the oldest observations once, as a block (more when the conversation is over its size limit); false when there was nothing left to shorten. */
export function compact(state: RunState): boolean {
  const shortened =
    compactConversation(state.conversation) + fitConversationToBudget(state.conversation, conversationByteBudget);
  if (shortened === 0) return false;
  state.compactions += 1;
  // Readers of the transcript (the model activity) can tell the earlier messages changed.
  state.conversationVersion += 1;
  state.lastRequestCharacters = conversationBytes(state.conversation);
  state.lastRequestTokens = Math.min(state.lastRequestTokens, estimateTokens(state.lastRequestCharacters));
  return true;
}

/** Keeps the newest `keepRecent` messages whole; returns how many observations were shortened. */
export function compactConversation(conversation: Message[], keepRecent = 6): number {
  let compacted = 0;
  const end = Math.max(1, conversation.length - keepRecent);
  for (let index = 1; index < end; index++) {
    const message = conversation[index];
    if (message?.role !== 'user') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result' || block.content.startsWith('[compacted]')) continue;
      const lines = block.content.split('\n');
      const firstLine = (lines[0] ?? '').slice(0, 200);
      block.content = `[compacted] ${firstLine}\n[${block.content.length} characters removed to fit the context window; run the tool again if you need them]`;
      compacted++;
    }
  }
  return compacted;
}

const compactedInput = '[compacted]';

/**
 * Brings the conversation under `maxBytes` (as a JSON payload), mildest measure first, stopping
 * as soon as it fits; returns how many blocks were shortened or removed.
 *   1. the oldest observations, as compactConversation does;
 *   2. thinking blocks of every assistant message but the last (the API needs only the last
 *      one's, and a signed block cannot be shortened, only left out);
 *   3. long observations and texts, oldest first, the newest included, and the large inputs
 *      of earlier tool calls.
 * Tool_use/tool_result pairs and the task (the first message) always stay.
 */
export function fitConversationToBudget(conversation: Message[], maxBytes: number): number {
  if (jsonBytes(conversation) <= maxBytes) return 0;
  let changed = compactConversation(conversation);
  if (jsonBytes(conversation) <= maxBytes) return changed;

  let lastAssistant = conversation.length - 1;
  while (lastAssistant >= 0 && conversation[lastAssistant]?.role !== 'assistant') lastAssistant--;
  conversation.forEach((message, index) => {
    if (message.role !== 'assistant' || index === lastAssistant) return;
    const kept = message.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
    if (kept.length === message.content.length) return;
    changed += message.content.length - kept.length;
    message.content =
      kept.length > 0 ? kept : [{ type: 'text', text: '[thinking removed to fit the conversation’s size limit]' }];
  });

  let total = jsonBytes(conversation);
  for (let index = 1; index < conversation.length && total > maxBytes; index++) {
    const message = conversation[index] as Message;
    for (const block of message.content) {
      if (total <= maxBytes) break;
      const before = jsonBytes(block);
      if (!shortenBlock(block, index === lastAssistant)) continue;
      total -= before - jsonBytes(block);
      changed++;
    }
  }
  return changed;
}

/** Keeps the head of a long observation or text, and empties a large input of an earlier tool call. */
function shortenBlock(block: Message['content'][number], inLastAssistantMessage: boolean): boolean {
  const keep = 500;
  const marker = (removed: number) =>
    `\n[${removed} characters removed to fit the conversation’s size limit; run the tool again if you need them]`;
  if (block.type === 'tool_result' || block.type === 'text') {
    const text = block.type === 'text' ? block.text : block.content;
    if (text.length <= keep * 2) return false;
    const shortened = `${text.slice(0, keep)}${marker(text.length - keep)}`;
    if (block.type === 'text') block.text = shortened;
    else block.content = shortened;
    return true;
  }
  if (block.type === 'tool_use' && !inLastAssistantMessage && jsonBytes(block.input) > keep * 2) {
    block.input = {
      [compactedInput]: `${jsonBytes(block.input)} bytes of input removed to fit the conversation’s size limit`,
    };
    return true;
  }
  return false;
}
