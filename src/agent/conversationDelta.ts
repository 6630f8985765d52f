// The model activity's input carries only the part of the conversation that changed since the
// previous model call of the same workflow run: each message enters history once (history stays
// linear in the conversation), and the activity rebuilds the whole conversation from what it
// kept of the previous call (src/model/conversationCache.ts), asking the workflow (the
// `transcript` query, a round trip through the server) only when it kept nothing.
// Messages can change after they were sent (a hint joins the last user message, a paused turn is
// completed, compaction shortens old observations), so the delta starts at the first message whose
// content differs from what was sent, compared through each message's JSON.
import type { Message } from './conversation.js';

/** The conversation of one model call: what changed since the call `basedOn` (0: the whole conversation). */
export interface ConversationDelta {
  /** This call's number in the workflow run (1, 2, …). */
  sequence: number;
  /** The call whose conversation the delta applies to; 0 when `from` is 0 and `messages` is everything. */
  basedOn: number;
  /** Messages before this index are those of call `basedOn`, unchanged. */
  from: number;
  /** The messages from `from` to the end of this call's conversation. */
  messages: Message[];
}

/** What the workflow remembers of the conversation its previous model call carried. */
export interface SentConversation {
  sequence: number;
  marks: string[];
}

/**
 * What is compared of a message: its JSON. Native serialisation and string comparison cost far
 * less than hashing in JavaScript (a 200 KB conversation: under 1 ms against about 5 ms); the
 * price is a second copy of the conversation, as text, in the workflow's memory (not in its state).
 */
export function messageMark(message: Message): string {
  return JSON.stringify(message);
}

/** The delta of the next model call, and what to remember of it for the call after. */
export function conversationDelta(
  previous: SentConversation | null,
  conversation: Message[],
): { delta: ConversationDelta; sent: SentConversation } {
  const marks = conversation.map(messageMark);
  const sequence = (previous?.sequence ?? 0) + 1;
  let from = 0;
  if (previous) {
    const limit = Math.min(previous.marks.length, marks.length);
    while (from < limit && previous.marks[from] === marks[from]) from += 1;
  }
  return {
    delta: {
      sequence,
      basedOn: from > 0 && previous ? previous.sequence : 0,
      from,
      messages: conversation.slice(from),
    },
    sent: { sequence, marks },
  };
}

/** The size of the conversation a call carried, as `conversationBytes` counts it (JSON.stringify's length), from its marks. */
export function sentCharacters(sent: SentConversation): number {
  return sent.marks.reduce((sum, mark) => sum + mark.length, 0) + Math.max(0, sent.marks.length - 1) + 2;
}
