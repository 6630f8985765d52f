// A streamed reply made whole from the SDK's raw event stream (`messages.create` with
// `stream: true`), as the SDK's own stream helper (`messages.stream`) would make it, without what
// that helper adds per call and per event: a second build of the headers and of the tracing span,
// an event emitter, a copy of the block at every delta and the promises around them (1–1.5 ms of
// CPU per call here; bench/streamedReplies.ts `requests`).
import { AnthropicError, APIUserAbortError } from '@anthropic-ai/sdk';
import type Anthropic from '@anthropic-ai/sdk';
import { partialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser.js';

/** Told, at each piece of text or thinking, the block written so far (a later block starts afresh). */
export type OnWriting = (soFar: string, thinking: boolean) => void;

/**
 * The message of a streamed reply, once its `message_stop` has come. Fails as the SDK's stream
 * helper does: APIUserAbortError when `signal` ended it, AnthropicError when the stream ended
 * before its message did, and the stream's own APIError for an error event in it.
 */
export async function messageOfEvents(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  onWriting?: OnWriting,
  signal?: AbortSignal,
): Promise<Anthropic.Message> {
  let message: Anthropic.Message | undefined;
  let stopped = false;
  // A tool call's input comes as pieces of JSON, read once the stream has ended.
  const toolInputs = new Map<number, string>();
  for await (const event of events) {
    if (event.type === 'message_start') {
      if (message)
        throw new AnthropicError('Unexpected event order, got message_start before receiving "message_stop"');
      message = { ...event.message, content: [...event.message.content] };
      continue;
    }
    if (!message) continue; // as the SDK: nothing counts before the message starts
    switch (event.type) {
      case 'content_block_start':
        message.content.push({ ...event.content_block } as Anthropic.ContentBlock);
        break;
      case 'content_block_delta':
        addDelta(message.content[event.index], event.delta, event.index, toolInputs, onWriting);
        break;
      case 'message_delta':
        addMessageDelta(message, event);
        break;
      case 'message_stop':
        stopped = true;
        break;
      default:
        break;
    }
  }
  // The SDK's event stream ends quietly when the request is aborted.
  if (signal?.aborted) throw new APIUserAbortError();
  if (!message) throw new AnthropicError('request ended without sending any chunks');
  if (!stopped) throw new AnthropicError('stream ended without producing a Message with role=assistant');
  for (const [index, json] of toolInputs) {
    const block = message.content[index];
    if (block && (block.type === 'tool_use' || block.type === 'server_tool_use')) block.input = toolInput(json);
  }
  return message;
}

function addDelta(
  block: Anthropic.ContentBlock | undefined,
  delta: Anthropic.RawContentBlockDeltaEvent['delta'],
  index: number,
  toolInputs: Map<number, string>,
  onWriting: OnWriting | undefined,
): void {
  if (!block) return;
  switch (delta.type) {
    case 'text_delta':
      if (block.type !== 'text') return;
      block.text = (block.text || '') + delta.text;
      onWriting?.(block.text, false);
      return;
    case 'thinking_delta':
      if (block.type !== 'thinking') return;
      block.thinking += delta.thinking;
      onWriting?.(block.thinking, true);
      return;
    case 'signature_delta':
      if (block.type === 'thinking') block.signature = delta.signature;
      return;
    case 'input_json_delta':
      if (block.type === 'tool_use' || block.type === 'server_tool_use')
        toolInputs.set(index, (toolInputs.get(index) ?? '') + delta.partial_json);
      return;
    case 'citations_delta':
      if (block.type === 'text') block.citations = [...(block.citations ?? []), delta.citation];
      return;
    default:
      return;
  }
}

/** The stop reason and usage: counters the event gives replace the message's (they are totals). */
function addMessageDelta(message: Anthropic.Message, event: Anthropic.RawMessageDeltaEvent): void {
  message.stop_reason = event.delta.stop_reason;
  message.stop_sequence = event.delta.stop_sequence;
  const usage = event.usage;
  message.usage = {
    ...message.usage,
    output_tokens: usage.output_tokens,
    ...(usage.input_tokens != null ? { input_tokens: usage.input_tokens } : {}),
    ...(usage.cache_creation_input_tokens != null
      ? { cache_creation_input_tokens: usage.cache_creation_input_tokens }
      : {}),
    ...(usage.cache_read_input_tokens != null ? { cache_read_input_tokens: usage.cache_read_input_tokens } : {}),
    ...(usage.server_tool_use != null ? { server_tool_use: usage.server_tool_use } : {}),
  };
}

/** A tool call's input: its JSON, or what of it came whole (a reply cut off by its output budget), as the SDK reads it. */
function toolInput(json: string): unknown {
  if (!json) return {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return partialParse(json);
  }
}
