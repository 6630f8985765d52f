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

/** What the loop needs from one model response. */
export interface ModelTurn {
  content: AssistantBlock[];
  stopReason: StopReason;
}

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

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
 * come before any text (the API's rule); `notes` (hints, nudges) follow as text.
 */
export function appendExchange(
  conversation: Message[],
  assistant: AssistantMessage,
  results: ToolResultBlock[],
  notes: string[] = [],
): void {
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
 * Makes a conversation valid to send again after an interruption: an assistant message
 * whose tool calls have no results gets is_error results saying what happened.
 */
export function repairConversation(conversation: Message[], reason: string): number {
  const last = conversation[conversation.length - 1];
  if (last?.role !== 'assistant') return 0;
  const calls = toolCallsOf(last.content);
  if (calls.length === 0) return 0;
  conversation.push({
    role: 'user',
    content: calls.map((call) => ({
      type: 'tool_result',
      tool_use_id: call.id,
      content: `This tool call was interrupted (${reason}) and did not return a result. Call it again if you still need it.`,
      is_error: true,
    })),
  });
  return calls.length;
}

/** Size in bytes of the conversation as text: a cheap stand-in for its token count. */
export function conversationBytes(messages: Message[]): number {
  return JSON.stringify(messages).length;
}
