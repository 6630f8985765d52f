// The conversation as the Messages API sees it, and the rules for growing it.
// Pure and deterministic: the workflow keeps a Conversation in its state.

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** Extended thinking blocks are passed back to the API unchanged. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export type AssistantBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock;
export type UserBlock = ToolResultBlock | TextBlock;

export interface AssistantMessage {
  role: 'assistant';
  content: AssistantBlock[];
}

export interface UserMessage {
  role: 'user';
  content: UserBlock[];
}

export type Message = AssistantMessage | UserMessage;

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

export type StopReason =
  'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export function textOf(content: AssistantBlock[]): string {
  return content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
    .trim();
}

export function toolCallsOf(content: AssistantBlock[]): ToolCall[] {
  return content
    .filter((block): block is ToolUseBlock => block.type === 'tool_use')
    .map(({ id, name, input }) => ({ id, name, input }));
}

export function userText(text: string): UserMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}

/**
 * Appends one exchange as a unit: the assistant message and the user message that answers it.
 * Every tool_use gets exactly one tool_result, in the order of the calls, and the results
 * come before any text (the API's rule); `notes` (hints, nudges) follow as text. With no
 * assistant message (nothing of the reply was kept), the notes alone join the last user message.
 */
export function appendExchange(
  conversation: Message[],
  assistant: AssistantMessage | null,
  results: ToolResultBlock[],
  notes: string[] = [],
): void {
  if (!assistant) {
    for (const note of notes) appendUserText(conversation, note);
    return;
  }
  const calls = toolCallsOf(assistant.content);
  const byId = new Map(results.map((result) => [result.tool_use_id, result]));
  const orderedResults = calls.map(
    (call) =>
      byId.get(call.id) ?? {
        type: 'tool_result' as const,
        tool_use_id: call.id,
        content: 'This tool call was not executed.',
        is_error: true,
      },
  );
  const text = notes.map((note): TextBlock => ({ type: 'text', text: note }));
  conversation.push(assistant);
  if (orderedResults.length + text.length > 0) {
    conversation.push({ role: 'user', content: [...orderedResults, ...text] });
  }
}

/**
 * Adds text for the model to the end of the conversation. If the last message is already a
 * user message, the text joins it, so roles keep alternating.
 */
export function appendUserText(conversation: Message[], text: string): void {
  const last = conversation[conversation.length - 1];
  if (last?.role === 'user') {
    last.content.push({ type: 'text', text });
  } else {
    conversation.push(userText(text));
  }
}

/**
 * Makes a stored conversation valid to send to the Messages API, whatever wrote it (an
 * interrupted run, a saved state or continue-as-new input from older code). In place, and a
 * no-op on a valid conversation, so it can run before every request:
 * - whitespace-only text blocks and messages left empty are dropped;
 * - messages of the same role in a row are joined (tool results first);
 * - each tool_use gets exactly one tool_result in the next message, in call order, before any
 *   text (a missing one is an is_error result saying `reason`); results that answer no call go;
 * - the final assistant message (a paused turn) does not end with whitespace.
 * Returns the number of changes made. It replaces messages' block lists and blocks, never changes
 * a block in place (the model request repairs a copy of the lists only: src/model/anthropic.ts).
 */
export function repairConversation(conversation: Message[], reason: string): number {
  let changes = 0;
  for (let pass = 0; pass < 4; pass++) {
    const passChanges = dropEmpty(conversation) + joinSameRole(conversation) + pairToolResults(conversation, reason);
    changes += passChanges;
    if (passChanges === 0) break;
  }
  return changes + trimFinalAssistant(conversation);
}

export function isBlankText(block: { type: string; text?: unknown }): boolean {
  return block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '');
}

function dropEmpty(conversation: Message[]): number {
  let changes = 0;
  for (let index = conversation.length - 1; index >= 0; index--) {
    const message = conversation[index] as Message;
    const kept = (message.content as Array<AssistantBlock | UserBlock>).filter((block) => !isBlankText(block));
    if (kept.length !== message.content.length) {
      message.content = kept as typeof message.content;
      changes++;
    }
    if (message.content.length === 0) {
      conversation.splice(index, 1);
      changes++;
    }
  }
  return changes;
}

function joinSameRole(conversation: Message[]): number {
  let changes = 0;
  for (let index = conversation.length - 1; index > 0; index--) {
    const previous = conversation[index - 1] as Message;
    const message = conversation[index] as Message;
    if (previous.role !== message.role) continue;
    if (previous.role === 'user') {
      const blocks = [...previous.content, ...message.content] as UserBlock[];
      previous.content = [
        ...blocks.filter((block) => block.type === 'tool_result'),
        ...blocks.filter((block) => block.type !== 'tool_result'),
      ];
    } else {
      previous.content = [...previous.content, ...(message.content as AssistantBlock[])];
    }
    conversation.splice(index, 1);
    changes++;
  }
  return changes;
}

function pairToolResults(conversation: Message[], reason: string): number {
  let changes = 0;
  const seenCalls = new Set<string>();
  for (let index = 0; index < conversation.length; index++) {
    const message = conversation[index] as Message;
    if (message.role === 'assistant') {
      // A call id used twice cannot be answered twice: the later call goes.
      const content = message.content.filter((block) => block.type !== 'tool_use' || !seenCalls.has(block.id));
      if (content.length !== message.content.length) {
        message.content = content;
        changes++;
      }
      for (const call of toolCallsOf(message.content)) seenCalls.add(call.id);
      if (index === conversation.length - 1 && toolCallsOf(message.content).length > 0) {
        conversation.push({ role: 'user', content: [] });
      }
      continue;
    }
    const previous = conversation[index - 1];
    const calls = previous?.role === 'assistant' ? toolCallsOf(previous.content) : [];
    const results = new Map<string, ToolResultBlock>();
    for (const block of message.content) {
      if (block.type === 'tool_result' && !results.has(block.tool_use_id)) results.set(block.tool_use_id, block);
    }
    const repaired: UserBlock[] = [
      ...calls.map(
        (call): ToolResultBlock =>
          results.get(call.id) ?? {
            type: 'tool_result',
            tool_use_id: call.id,
            content: `This tool call was interrupted (${reason}) and did not return a result. Call it again if you still need it.`,
            is_error: true,
          },
      ),
      ...message.content.filter((block) => block.type !== 'tool_result'),
    ];
    if (
      repaired.length !== message.content.length ||
      repaired.some((block, position) => block !== message.content[position])
    ) {
      message.content = repaired;
      changes++;
    }
  }
  return changes;
}

/** The API refuses a final assistant message (a turn to continue) that ends with whitespace. */
function trimFinalAssistant(conversation: Message[]): number {
  const last = conversation[conversation.length - 1];
  if (last?.role !== 'assistant') return 0;
  const block = last.content[last.content.length - 1];
  if (block?.type !== 'text' || block.text === block.text.trimEnd()) return 0;
  last.content[last.content.length - 1] = { type: 'text', text: block.text.trimEnd() };
  return 1;
}

/** Size in bytes of the conversation as text: a cheap stand-in for its token count. */
export function conversationBytes(messages: Message[]): number {
  return JSON.stringify(messages).length;
}
