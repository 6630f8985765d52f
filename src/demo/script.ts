// Scripted model responses (a fixture's script.json). The response to a request depends only
// on the conversation it carries (how many assistant turns it has, what the last tool result
// said), never on how many requests came before, so retried and concurrent runs get the same
// answers as a clean one.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface ScriptStep {
  /** The model's reasoning, sent as a text block before the tool calls. */
  thought?: string;
  /** Repeats the thought until it is this many characters long (a very long reply). */
  pad_thought_to?: number;
  tool_calls?: ScriptedToolCall[];
  /** Raw content blocks, sent as they are (for malformed or unusual replies). */
  content?: Array<Record<string, unknown>>;
  /** Defaults to tool_use when there are tool calls, end_turn otherwise. */
  stop_reason?: string;
  output_tokens?: number;
  /** For alternatives: this step applies when the latest tool result (or anywhere in the request) contains the text. */
  when?: { last_tool_result_includes?: string; request_includes?: string };
}

export interface Script {
  description?: string;
  /** One entry per model turn; an array lists alternatives, the first whose `when` matches wins. */
  responses: Array<ScriptStep | ScriptStep[]>;
}

export interface ScriptedResponse {
  content: Array<
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: unknown }
    | { type: 'thinking'; thinking: string; signature: string }
    | { type: 'redacted_thinking'; data: string }
  >;
  stopReason: string;
  outputTokens?: number;
}

interface Message {
  role: string;
  content: string | Array<Record<string, unknown>>;
}

export async function loadScript(path: string): Promise<Script> {
  const script = JSON.parse(await readFile(path, 'utf8')) as Script;
  if (!Array.isArray(script.responses)) throw new Error(`${path}: "responses" must be a list`);
  return script;
}

export function chooseScriptedResponse(script: Script, messages: Message[]): ScriptedResponse {
  const turn = messages.filter((message) => message.role === 'assistant').length;
  const entry = script.responses[turn];
  if (!entry) {
    return { content: [{ type: 'text', text: 'The script has no more responses.' }], stopReason: 'end_turn' };
  }
  const lastResult = lastToolResultText(messages);
  const alternatives = Array.isArray(entry) ? entry : [entry];
  const everything = JSON.stringify(messages);
  const step =
    alternatives.find(({ when }) => {
      if (when?.last_tool_result_includes !== undefined && !lastResult.includes(when.last_tool_result_includes))
        return false;
      if (when?.request_includes !== undefined && !everything.includes(when.request_includes)) return false;
      return true;
    }) ?? (alternatives[alternatives.length - 1] as ScriptStep);
  const conversationId = createHash('sha256').update(firstText(messages)).digest('hex').slice(0, 10);
  if (step.content) {
    // A tool_use block written without an id gets one, unique in the conversation.
    const content = step.content.map((block, index) =>
      block.type === 'tool_use' && block.id === undefined
        ? { ...block, id: `toolu_${conversationId}_${turn}_${messages.length}_${index}` }
        : block,
    );
    return {
      content: content as ScriptedResponse['content'],
      stopReason: step.stop_reason ?? 'end_turn',
      outputTokens: step.output_tokens,
    };
  }
  const content: ScriptedResponse['content'] = [];
  if (step.thought) content.push({ type: 'text', text: padded(step.thought, step.pad_thought_to ?? 0) });
  (step.tool_calls ?? []).forEach((call, index) => {
    content.push({
      type: 'tool_use',
      id: `toolu_${conversationId}_${turn}_${messages.length}_${index}`,
      name: call.name,
      input: call.input,
    });
  });
  const stopReason = step.stop_reason ?? (step.tool_calls?.length ? 'tool_use' : 'end_turn');
  return { content, stopReason, outputTokens: step.output_tokens };
}

function padded(text: string, length: number): string {
  if (text.length >= length) return text;
  return `${text} `.repeat(Math.ceil(length / (text.length + 1))).slice(0, length);
}

function firstText(messages: Message[]): string {
  const first = messages[0];
  if (!first) return '';
  return typeof first.content === 'string'
    ? first.content
    : first.content.map((block) => String(block.text ?? '')).join('\n');
}

function lastToolResultText(messages: Message[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as Message;
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (results.length > 0) return results.map((block) => String(block.content ?? '')).join('\n');
  }
  return '';
}
