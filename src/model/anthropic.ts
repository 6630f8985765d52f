// Calls Claude through the real SDK. Retries are Temporal's job, so the SDK's are off.
// Prompt caching: one breakpoint after the tools and system prompt, and a rolling one on the
// newest user message plus the one before it (where the previous request put its own), so
// each request reads the whole previous conversation from the cache. Never more than four.
import Anthropic from '@anthropic-ai/sdk';
import { repairConversation, type AssistantBlock, type Message, type StopReason } from '../agent/conversation.js';
import type { ApiTool } from '../agent/tools.js';
import type { ModelReply } from '../agent/modelReply.js';
import { cleanReply } from '../agent/reply.js';
import { costOfCall, type PricingPlace } from './pricing.js';
import { providerNames } from './providerSettings.js';
import { messageOfEvents, type OnWriting } from './streamedMessage.js';
import { fetchAcceptingWholeReplies, wholeReplyHeader } from './wholeReplies.js';

export interface ModelClientSettings {
  apiKey?: string;
  baseURL?: string;
  timeoutMs: number;
}

/** What the model call needs of a client: the Messages API (each provider's SDK client has it). */
export interface ModelClient {
  messages: Pick<Anthropic['messages'], 'create'>;
}

/**
 * Clients whose endpoint answered a streaming request with a whole message: this process asks
 * them for whole replies from then on. A worker that restarts learns it again on its first call
 * (that call still gets its reply: see wholeReplies.ts).
 */
const answersWhole = new WeakSet<object>();

export function createModelClient(settings: ModelClientSettings): Anthropic {
  const client: Anthropic = new Anthropic({
    apiKey: settings.apiKey ?? 'not-set',
    baseURL: settings.baseURL,
    maxRetries: 0,
    timeout: settings.timeoutMs,
    fetch: fetchAcceptingWholeReplies(() => answersWhole.add(client)),
  });
  return client;
}

export interface ModelRequest {
  model: string;
  maxOutputTokens: number;
  system: string;
  tools: ApiTool[];
  messages: Message[];
  /** Extended thinking budget; thinking blocks are passed back unchanged. */
  thinkingBudgetTokens?: number;
  temperature?: number;
}

/** Above this output budget the SDK requires streaming (a non-streamed call could exceed 10 minutes). */
const streamingThreshold = 16_000;
const ephemeral = { type: 'ephemeral' as const };

export function buildRequestBody(request: ModelRequest): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: request.model,
    max_tokens: request.maxOutputTokens,
    system: [{ type: 'text', text: request.system, cache_control: ephemeral }],
    tools: request.tools as Anthropic.Tool[],
    messages: withRollingCacheBreakpoints(requestReadyMessages(request.messages)),
    ...(request.thinkingBudgetTokens
      ? { thinking: { type: 'enabled' as const, budget_tokens: request.thinkingBudgetTokens } }
      : request.temperature !== undefined
        ? { temperature: request.temperature }
        : {}),
  };
}

/**
 * A copy of the conversation repaired for sending: the workflow keeps its conversation valid,
 * but one stored by older code (or answered by a worker of another version) may not be.
 */
function requestReadyMessages(messages: Message[]): Message[] {
  // Repair replaces messages' block lists and blocks, never changes a block in place: copying the
  // lists is enough to leave the caller's conversation as it is (a deep copy cost O(conversation) per call).
  const copy = messages.map((message) => ({ ...message, content: [...message.content] }) as Message);
  repairConversation(copy, 'the stored conversation had no result for it');
  return copy;
}

/** A copy of the messages with cache breakpoints on the last two user messages' last blocks. */
function withRollingCacheBreakpoints(messages: Message[]): Anthropic.MessageParam[] {
  const userIndexes = messages.flatMap((message, index) => (message.role === 'user' ? [index] : [])).slice(-2);
  return messages.map((message, index) => {
    const content = message.content.map((block) => ({ ...block })) as Array<Record<string, unknown>>;
    if (userIndexes.includes(index) && content.length > 0) {
      content[content.length - 1] = { ...content[content.length - 1], cache_control: ephemeral };
    }
    return { role: message.role, content } as unknown as Anthropic.MessageParam;
  });
}

export async function requestModelTurn(
  client: ModelClient,
  request: ModelRequest,
  /**
   * `place`: which provider answers, and where (for the price). `onWriting`: told, as the reply
   * is written, the block being written so far and whether it is thinking (the reply is then
   * streamed, whatever its size).
   */
  options: {
    signal?: AbortSignal;
    place?: PricingPlace;
    onWriting?: OnWriting;
  } = {},
): Promise<ModelReply> {
  const body = buildRequestBody(request);
  let message: Anthropic.Message;
  let requestId: string | null;
  // Set when the reply was asked for streamed and came whole (the endpoint does not stream).
  let notStreamed: boolean;
  const wantsStream = request.maxOutputTokens > streamingThreshold || Boolean(options.onWriting);
  if (wantsStream && !answersWhole.has(client)) {
    const {
      data: events,
      response,
      request_id,
    } = await client.messages.create({ ...body, stream: true }, { signal: options.signal }).withResponse();
    message = await messageOfEvents(events, options.onWriting, options.signal);
    requestId = request_id ?? null;
    notStreamed = response.headers.get(wholeReplyHeader) !== null;
  } else {
    const { data, request_id } = await client.messages.create(body, { signal: options.signal }).withResponse();
    message = data;
    requestId = request_id ?? null;
    notStreamed = wantsStream;
  }
  const usage = {
    inputTokens: message.usage.input_tokens,
    outputTokens: message.usage.output_tokens,
    cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
  };
  // Every reply is cleaned here, once, where it arrives: the workflow's history (through the
  // callModel activity), the conversation and the plain loop all see the same clean reply.
  const { content, oversizedToolInputs } = cleanReply(message.content.flatMap(toAssistantBlock));
  return {
    content,
    stopReason: (message.stop_reason ?? 'end_turn') as StopReason,
    usage,
    ...costOfCall(request.model, message.model, usage, options.place),
    model: request.model,
    answeredBy:
      options.place && options.place.provider !== 'anthropic'
        ? `Claude (${message.model ?? request.model}) on ${providerNames[options.place.provider]}`
        : `Claude (${message.model})`,
    requestId,
    oversizedToolInputs,
    ...(notStreamed ? { notStreamed: true } : {}),
  };
}

function toAssistantBlock(block: Anthropic.ContentBlock): AssistantBlock[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    default:
      return []; // server tool blocks: this agent offers no server tools
  }
}
