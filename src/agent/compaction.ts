// When the conversation no longer fits the model's context window, the oldest observations'
// bodies are replaced, all at once, by a short marker. Tool_use/tool_result pairs stay
// intact (the API's rule), and doing it in one block breaks the prompt cache only once.
import type { Message } from './conversation.js';

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
