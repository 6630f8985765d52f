// A local stand-in for the Anthropic Messages API, spoken over real HTTP so that the real SDK
// talks to it. It validates requests by the API's rules (a broken one gets the 400 the real
// API gives), plays scripted responses, injects faults, records every request, and measures
// how much of each request the prompt cache could have served.
//
// Used by the tests, the benchmarks, and the offline demo (clearly labelled as scripted).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicModelId } from '../model/pricing.js';
import {
  platformCall,
  platformError,
  sendBedrockEvents,
  type FakePlatform,
  type PlatformAnswer,
} from './fakePlatforms.js';
import { chooseScriptedResponse, type Script, type ScriptedResponse } from './script.js';

export type FaultKind =
  'rate_limit' | 'overloaded' | 'server_error' | 'bad_request' | 'unauthorized' | 'disconnect' | 'slow';

/** The error answers of the real API that faults imitate: status, error type, message. */
const httpFaults: Record<Exclude<FaultKind, 'disconnect' | 'slow'>, [number, string, string]> = {
  rate_limit: [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  overloaded: [529, 'overloaded_error', 'Overloaded'],
  server_error: [500, 'api_error', 'Internal server error'],
  bad_request: [400, 'invalid_request_error', 'messages: the request was rejected (injected fault).'],
  unauthorized: [401, 'authentication_error', 'invalid x-api-key'],
};

export interface FakeApiOptions {
  /** Scripts by repository name (the "Repository: <name>" line of the task), or one script for all. */
  scripts: Record<string, Script> | Script;
  /** Random faults: each request fails with probability `rate`, with one of `kinds`. */
  faults?: { rate: number; kinds: FaultKind[]; random?: () => number };
  /** Deterministic faults by request number (1-based), checked before random ones. */
  faultPlan?: (requestNumber: number) => FaultKind | null;
  /** Seconds announced in retry-after for rate limits (default 1). */
  retryAfterSeconds?: number;
  /** How long a 'slow' fault stalls before answering (default 30 s). */
  slowMs?: number;
  /** Delay before every answer, to imitate a model that thinks. */
  latencyMs?: number;
  /** Models that answer 529 (overloaded) to every request, for the fallback model. */
  overloadedModels?: string[];
  /** Models that answer 429 (rate limited) to every request, for the fallback model. */
  rateLimitedModels?: string[];
  /** Speak as Amazon Bedrock or Google Vertex AI (paths, body, credentials) instead of the Anthropic API. */
  platform?: FakePlatform;
}

export interface RecordedRequest {
  number: number;
  /** When the request arrived (ms since epoch). */
  receivedAt: number;
  body: Record<string, unknown>;
  status: number;
  fault: FaultKind | null;
  /** Share of the request (by bytes) that is a byte-identical prefix of the previous request of the same conversation, up to that request's last cache breakpoint. */
  cacheableShare: number;
  usage: Usage | null;
  error: string | null;
  requestId: string;
  /** Whether the answer was streamed (SSE, or Bedrock's event stream). */
  stream: boolean;
  /** The key the client sent (x-api-key; Bedrock's access key id, Vertex's token), to check where it goes and where it does not. */
  apiKey: string | null;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export class FakeAnthropicApi {
  readonly requests: RecordedRequest[] = [];
  private server: Server | null = null;
  private readonly cachedPrefixes = new Set<string>();
  private readonly lastBreakpointPrefix = new Map<string, string>();
  /** Thinking blocks handed out, so that one sent back changed is refused as the real API does. */
  private readonly issuedThinking = new Set<string>();

  constructor(private readonly options: FakeApiOptions) {}

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('The fake API is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendError(response, 500, 'api_error', String(error), newRequestId());
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Turns random faults on (or off, with undefined) while the server runs. */
  setFaults(faults: FakeApiOptions['faults']): void {
    this.options.faults = faults;
  }

  /** Requests that the fake rejected for breaking the API's rules (never faults). */
  get rejected(): RecordedRequest[] {
    return this.requests.filter((request) => request.status === 400 && request.fault === null);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const raw = await readBody(request);
    const received = this.options.platform
      ? this.platformRequest(raw, request, response, requestId)
      : this.apiRequest(raw, request, response, requestId);
    if (!received) return;
    const { body, stream, apiKey } = received;

    const number = this.requests.length + 1;
    const record: RecordedRequest = {
      number,
      receivedAt: Date.now(),
      body,
      status: 200,
      fault: null,
      cacheableShare: 0,
      usage: null,
      error: null,
      requestId,
      apiKey,
      stream,
    };
    this.requests.push(record);

    const fault =
      (this.options.overloadedModels?.includes(String(body.model)) ? 'overloaded' : null) ??
      (this.options.rateLimitedModels?.includes(String(body.model)) ? 'rate_limit' : null) ??
      this.options.faultPlan?.(number) ??
      this.randomFault();
    if (fault) {
      record.fault = fault;
      return this.injectFault(fault, record, request, response);
    }
    const problem = validateRequest(body, { countTokens: false, issuedThinking: this.issuedThinking });
    if (problem) {
      record.status = 400;
      record.error = problem;
      return this.sendError(response, 400, 'invalid_request_error', problem, requestId);
    }
    const messages = body.messages as ApiMessage[];
    const script = this.scriptFor(messages);
    if (!script) {
      record.status = 400;
      record.error = 'no script for this repository';
      const message =
        'The scripted model has no scripted responses for this repository: it answers runs of the fixtures under fixtures/ only. Set ANTHROPIC_API_KEY to use Claude.';
      return this.sendError(response, 400, 'invalid_request_error', message, requestId);
    }
    const scripted = chooseScriptedResponse(script, messages);
    if ((body.thinking as { type?: string } | undefined)?.type === 'enabled')
      scripted.content = withThinking(scripted.content, record.number);
    for (const block of scripted.content) {
      if (block.type === 'thinking' || block.type === 'redacted_thinking') this.issuedThinking.add(thinkingKey(block));
    }
    const cache = this.accountCache(body);
    record.cacheableShare = cache.cacheableShare;
    const outputText = JSON.stringify(scripted.content);
    const usage: Usage = {
      input_tokens: cache.uncachedTokens,
      output_tokens: scripted.outputTokens ?? Math.max(1, tokensOf(outputText)),
      cache_creation_input_tokens: cache.writeTokens,
      cache_read_input_tokens: cache.readTokens,
    };
    record.usage = usage;
    if (this.options.latencyMs) await sleep(this.options.latencyMs);
    const message = {
      id: `msg_${randomBytes(12).toString('hex')}`,
      type: 'message',
      role: 'assistant',
      model: this.options.platform ? anthropicModelId(String(body.model)) : body.model,
      content: scripted.content,
      stop_reason: scripted.stopReason,
      stop_sequence: null,
      usage,
    };
    if (stream && this.options.platform?.kind === 'bedrock')
      return sendBedrockEvents(response, streamEvents(message), requestId);
    if (stream) return sendStream(response, message, requestId);
    return sendJson(response, 200, message, requestId);
  }

  /** The Anthropic API's own checks of a request: its path, its key, its JSON; count_tokens is answered here. */
  private apiRequest(
    raw: string,
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
  ): { body: Record<string, unknown>; stream: boolean; apiKey: string | null } | null {
    const url = request.url ?? '';
    if (request.method !== 'POST' || !url.startsWith('/v1/messages')) {
      sendError(response, 404, 'not_found_error', `Not found: ${request.method} ${url}`, requestId);
      return null;
    }
    if (!request.headers['x-api-key'] && !request.headers.authorization) {
      sendError(response, 401, 'authentication_error', 'x-api-key header is required', requestId);
      return null;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      sendError(response, 400, 'invalid_request_error', 'The request body is not valid JSON.', requestId);
      return null;
    }
    if (url.startsWith('/v1/messages/count_tokens')) {
      const problem = validateRequest(body, { countTokens: true });
      if (problem) sendError(response, 400, 'invalid_request_error', problem, requestId);
      else sendJson(response, 200, { input_tokens: tokensOf(JSON.stringify(body)) }, requestId);
      return null;
    }
    const apiKey =
      (request.headers['x-api-key'] as string | undefined) ??
      request.headers.authorization?.replace(/^Bearer /, '') ??
      null;
    return { body, stream: body.stream === true, apiKey };
  }

  /** Bedrock's or Vertex's checks (fakePlatforms.ts); what they serve themselves (STS, metadata, errors) is answered here. */
  private platformRequest(
    raw: string,
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
  ): { body: Record<string, unknown>; stream: boolean; apiKey: string | null } | null {
    const result = platformCall(this.options.platform as FakePlatform, request, raw);
    if ('answer' in result) {
      sendAnswer(response, result.answer, requestId);
      return null;
    }
    return { body: result.call.body, stream: result.call.stream, apiKey: result.call.credential };
  }

  /** An error as the API (or the platform it plays) words it. */
  private sendError(response: ServerResponse, status: number, type: string, message: string, requestId: string): void {
    const platform = this.options.platform;
    if (platform) sendAnswer(response, platformError(platform, status, type, message), requestId);
    else sendError(response, status, type, message, requestId);
  }

  private randomFault(): FaultKind | null {
    const faults = this.options.faults;
    if (!faults || faults.kinds.length === 0) return null;
    const random = faults.random ?? Math.random;
    if (random() >= faults.rate) return null;
    return faults.kinds[Math.floor(random() * faults.kinds.length)] ?? null;
  }

  private async injectFault(
    fault: FaultKind,
    record: RecordedRequest,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    if (fault === 'disconnect' || fault === 'slow') {
      record.status = 0;
      if (fault === 'slow') await sleep(this.options.slowMs ?? 30_000);
      request.socket.destroy();
      return;
    }
    const [status, type, message] = httpFaults[fault];
    record.status = status;
    if (fault === 'rate_limit') response.setHeader('retry-after', String(this.options.retryAfterSeconds ?? 1));
    this.sendError(response, status, type, message, record.requestId);
  }

  private scriptFor(messages: ApiMessage[]): Script | null {
    const scripts = this.options.scripts;
    if ('responses' in scripts && Array.isArray((scripts as Script).responses)) return scripts as Script;
    const first = messages[0];
    const text =
      typeof first?.content === 'string'
        ? first.content
        : (first?.content ?? []).map((block) => block.text ?? '').join('\n');
    const name = text.match(/^Repository: (.+)$/m)?.[1]?.trim();
    return name ? ((scripts as Record<string, Script>)[name] ?? null) : null;
  }

  /**
   * Prompt-cache accounting by byte-identical prefixes: a prefix up to a cache breakpoint is
   * written to the cache; a later request whose beginning matches a written prefix reads it.
   */
  private accountCache(body: Record<string, unknown>): {
    readTokens: number;
    writeTokens: number;
    uncachedTokens: number;
    cacheableShare: number;
  } {
    const segments = cacheSegments(body);
    const total = segments.reduce((sum, segment) => sum + segment.text.length, 0);
    const hashes: string[] = [];
    const hash = createHash('sha256');
    let bytes = 0;
    const offsets: number[] = [];
    for (const segment of segments) {
      hash.update(segment.text);
      bytes += segment.text.length;
      hashes.push(hash.copy().digest('hex'));
      offsets.push(bytes);
    }
    let readBytes = 0;
    for (let index = segments.length - 1; index >= 0; index--) {
      if (this.cachedPrefixes.has(hashes[index] as string)) {
        readBytes = offsets[index] as number;
        break;
      }
    }
    const breakpoints = segments.flatMap((segment, index) => (segment.breakpoint ? [index] : []));
    const lastBreakpoint = breakpoints.length ? (breakpoints[breakpoints.length - 1] as number) : -1;
    const writeBytes = lastBreakpoint >= 0 ? Math.max(0, (offsets[lastBreakpoint] as number) - readBytes) : 0;
    for (const index of breakpoints) this.cachedPrefixes.add(hashes[index] as string);

    // The share of this request that repeats the previous request of the same conversation up to its last breakpoint.
    const conversation = conversationKey(body);
    const previous = this.lastBreakpointPrefix.get(conversation);
    const serialized = segments.map((segment) => segment.text).join('');
    const cacheableShare = previous && serialized.startsWith(previous) && total > 0 ? previous.length / total : 0;
    if (lastBreakpoint >= 0) {
      this.lastBreakpointPrefix.set(conversation, serialized.slice(0, offsets[lastBreakpoint]));
    }
    const readTokens = tokensOf(readBytes);
    const writeTokens = tokensOf(writeBytes);
    return {
      readTokens,
      writeTokens,
      uncachedTokens: Math.max(1, tokensOf(total) - readTokens - writeTokens),
      cacheableShare,
    };
  }
}

/** With thinking on, a reply that has content starts with a thinking block, as Claude's do. */
function withThinking(content: ScriptedResponse['content'], requestNumber: number): ScriptedResponse['content'] {
  const first = content[0];
  if (!first || first.type === 'thinking' || first.type === 'redacted_thinking') return content;
  const thinking = `Scripted reasoning before reply ${requestNumber}.`;
  const signature = createHash('sha256')
    .update(`fake-signature:${thinking}:${randomBytes(8).toString('hex')}`)
    .digest('base64');
  return [{ type: 'thinking', thinking, signature }, ...content];
}

interface ApiBlock {
  type: string;
  text?: string;
  id?: string;
  tool_use_id?: string;
  cache_control?: unknown;
  [key: string]: unknown;
}

interface ApiMessage {
  role: string;
  content: string | ApiBlock[];
}

function blocksOf(message: ApiMessage): ApiBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The request as the cache sees it: tools, then system, then messages, block by block. */
function cacheSegments(body: Record<string, unknown>): Array<{ text: string; breakpoint: boolean }> {
  const strip = (value: Record<string, unknown>) => {
    const { cache_control: _ignored, ...rest } = value;
    return JSON.stringify(rest);
  };
  const segments: Array<{ text: string; breakpoint: boolean }> = [];
  for (const tool of (body.tools as Array<Record<string, unknown>> | undefined) ?? []) {
    segments.push({ text: strip(tool), breakpoint: Boolean(tool.cache_control) });
  }
  const system = body.system;
  if (typeof system === 'string') segments.push({ text: system, breakpoint: false });
  else
    for (const block of (system as ApiBlock[] | undefined) ?? [])
      segments.push({ text: strip(block), breakpoint: Boolean(block.cache_control) });
  for (const message of (body.messages as ApiMessage[] | undefined) ?? []) {
    blocksOf(message).forEach((block, index) =>
      segments.push({
        text: (index === 0 ? `<${message.role}>` : '') + strip(block),
        breakpoint: Boolean(block.cache_control),
      }),
    );
  }
  return segments;
}

/** Identifies a conversation by its first message (without cache markers, which move). */
function conversationKey(body: Record<string, unknown>): string {
  const first = (body.messages as ApiMessage[] | undefined)?.[0];
  const text = first
    ? blocksOf(first)
        .map((block) => block.text ?? '')
        .join('\n')
    : '';
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The rules the real API enforces on a request, with its own wording where we know it: the
 * request's shape, roles, non-empty content, tool_use/tool_result pairing and order, prompt-cache
 * breakpoints, and extended thinking. `issuedThinking` (thinking blocks this fake handed out)
 * turns on the check that thinking blocks come back unchanged.
 */
export function validateRequest(
  body: Record<string, unknown>,
  options: { countTokens: boolean; issuedThinking?: Set<string> },
): string | null {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (
    !options.countTokens &&
    (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
  ) {
    return 'max_tokens: Field required';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  const tools = (body.tools as Array<Record<string, unknown>> | undefined) ?? [];
  const names = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    const name = tool.name;
    if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(name))
      return `tools.${index}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    if (names.has(name)) return `tools: Tool names must be unique.`;
    names.add(name);
    const problem = jsonSchemaProblem(tool.input_schema);
    if (problem)
      return `tools.${index}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). ${problem}`;
  }
  return (
    thinkingSettingsProblem(body) ??
    cacheControlProblem(body) ??
    messagesProblem(
      messages as ApiMessage[],
      Boolean((body.thinking as { type?: string } | undefined)?.type === 'enabled'),
      options.issuedThinking,
    )
  );
}

const userBlockTypes = ['text', 'image', 'document', 'search_result', 'tool_result'];
const assistantBlockTypes = [
  'text',
  'tool_use',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
];

/** Extended thinking's parameters (https://docs.claude.com/en/docs/build-with-claude/extended-thinking). */
function thinkingSettingsProblem(body: Record<string, unknown>): string | null {
  const thinking = body.thinking as { type?: string; budget_tokens?: unknown } | undefined;
  if (thinking === undefined || thinking.type === 'disabled') return null;
  if (thinking.type !== 'enabled') return "thinking.type: Input should be 'enabled' or 'disabled'";
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Field required';
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof body.max_tokens === 'number' && body.max_tokens <= budget) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  }
  if (body.top_k !== undefined)
    return '`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  const choice = (body.tool_choice as { type?: string } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  return null;
}

/**
 * Prompt-cache breakpoints (https://docs.claude.com/en/docs/build-with-claude/prompt-caching): at most
 * four, of type ephemeral with a ttl of 5m or 1h, longer ttls before shorter ones, never on an
 * empty text block or a thinking block.
 */
function cacheControlProblem(body: Record<string, unknown>): string | null {
  const marked: Array<{ path: string; block: ApiBlock }> = [];
  const collect = (blocks: unknown, path: string) => {
    if (!Array.isArray(blocks)) return;
    (blocks as ApiBlock[]).forEach((block, index) => {
      if (block && typeof block === 'object' && block.cache_control !== undefined && block.cache_control !== null)
        marked.push({ path: `${path}.${index}`, block });
    });
  };
  collect(body.tools, 'tools');
  collect(body.system, 'system');
  ((body.messages as ApiMessage[] | undefined) ?? []).forEach((message, index) =>
    collect(message?.content, `messages.${index}.content`),
  );
  if (marked.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marked.length}.`;
  let sawShortTtl = false;
  for (const { path, block } of marked) {
    const control = block.cache_control as { type?: unknown; ttl?: unknown };
    if (control?.type !== 'ephemeral') return `${path}.cache_control.type: Input should be 'ephemeral'`;
    if (control.ttl !== undefined && control.ttl !== '5m' && control.ttl !== '1h')
      return `${path}.cache_control.ttl: Input should be '5m' or '1h'`;
    if (control.ttl === '1h' && sawShortTtl)
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block.";
    if (control.ttl !== '1h') sawShortTtl = true;
    if (block.type === 'text' && typeof block.text === 'string' && block.text === '')
      return `${path}.text: cache_control cannot be set for empty text blocks`;
    if (block.type === 'thinking' || block.type === 'redacted_thinking')
      return `${path}.${block.type}.cache_control: Extra inputs are not permitted`;
  }
  return null;
}

/** Roles, content, tool pairing, thinking blocks. */
function messagesProblem(
  messages: ApiMessage[],
  thinkingEnabled: boolean,
  issuedThinking: Set<string> | undefined,
): string | null {
  const toolUseIds = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant')
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (index === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
    const previous = messages[index - 1];
    if (previous && previous.role === message.role)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content))
      return `messages.${index}.content: Input should be a valid list`;
    const blocks = blocksOf(message);
    const isLast = index === messages.length - 1;
    const isFinalAssistant = isLast && message.role === 'assistant';
    if (blocks.length === 0 && !isFinalAssistant) {
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const allowed = message.role === 'user' ? userBlockTypes : assistantBlockTypes;
    for (const [blockIndex, block] of blocks.entries()) {
      const at = `messages.${index}.content.${blockIndex}`;
      if (!block || typeof block !== 'object' || !allowed.includes(block.type)) {
        return `${at}: Input tag '${block?.type}' found using 'type' does not match any of the expected tags: ${allowed.map((type) => `'${type}'`).join(', ')}`;
      }
      if (block.type === 'text') {
        if (typeof block.text !== 'string') return `${at}.text: Field required`;
        if (block.text === '') return `${at}.text: text content blocks must be non-empty`;
        if (block.text.trim() === '') {
          return isFinalAssistant
            ? 'messages: final assistant content cannot end with trailing whitespace'
            : `${at}.text: text content blocks must contain non-whitespace text`;
        }
      }
      if (block.type === 'tool_use') {
        if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id))
          return `${at}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        if (toolUseIds.has(block.id)) return `${at}: \`tool_use\` ids must be unique`;
        toolUseIds.add(block.id);
        if (!block.input || typeof block.input !== 'object' || Array.isArray(block.input))
          return `${at}.input: Input should be a valid dictionary`;
      }
      if (block.type === 'thinking') {
        if (typeof block.thinking !== 'string' || typeof block.signature !== 'string')
          return `${at}.signature: Field required`;
        if (issuedThinking && !issuedThinking.has(thinkingKey(block)))
          return `${at}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (block.type === 'redacted_thinking' && issuedThinking && !issuedThinking.has(thinkingKey(block))) {
        return `${at}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
    }
    if (isFinalAssistant) {
      const last = blocks[blocks.length - 1];
      if (last?.type === 'text' && typeof last.text === 'string' && last.text !== last.text.trimEnd()) {
        return 'messages: final assistant content cannot end with trailing whitespace';
      }
    }
    const toolUses = blocks.filter((block) => block.type === 'tool_use');
    const next = messages[index + 1];
    if (message.role === 'assistant' && toolUses.length > 0 && next) {
      const leadingResults: ApiBlock[] = [];
      for (const block of blocksOf(next)) {
        if (block.type !== 'tool_result') break;
        leadingResults.push(block);
      }
      const answered = new Set(leadingResults.map((block) => block.tool_use_id));
      const missing = toolUses.filter((block) => !answered.has(block.id)).map((block) => block.id);
      if (missing.length > 0) {
        return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    if (message.role === 'user') {
      const previousUses = new Set(
        previous && previous.role === 'assistant'
          ? blocksOf(previous)
              .filter((block) => block.type === 'tool_use')
              .map((block) => block.id)
          : [],
      );
      const seen = new Set<string>();
      let sawOther = false;
      for (const [blockIndex, block] of blocks.entries()) {
        if (block.type !== 'tool_result') {
          sawOther = true;
          continue;
        }
        if (sawOther)
          return `messages.${index}.content.${blockIndex}: \`tool_result\` blocks must come before any other content in a user message`;
        const id = String(block.tool_use_id);
        if (!previousUses.has(id)) {
          return `messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
        if (seen.has(id))
          return `messages.${index}.content.${blockIndex}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`;
        seen.add(id);
      }
    }
  }
  return thinkingEnabled ? toolCycleThinkingProblem(messages) : null;
}

/**
 * With thinking on, the assistant turn whose tool calls the last message answers must start
 * with its thinking block (the API needs it to continue the same reasoning).
 */
function toolCycleThinkingProblem(messages: ApiMessage[]): string | null {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user' || !blocksOf(last).some((block) => block.type === 'tool_result')) return null;
  const index = messages.length - 2;
  const first = blocksOf(messages[index] as ApiMessage)[0];
  if (first?.type === 'thinking' || first?.type === 'redacted_thinking') return null;
  return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
}

/** Identifies a thinking block exactly as it was handed out. */
export function thinkingKey(block: { type: string; thinking?: unknown; signature?: unknown; data?: unknown }): string {
  return block.type === 'redacted_thinking'
    ? `redacted\u0000${String(block.data)}`
    : `${String(block.thinking)}\u0000${String(block.signature)}`;
}

function jsonSchemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return 'input_schema must be an object';
  const record = schema as Record<string, unknown>;
  if (record.type !== 'object') return "input_schema.type must be 'object'";
  if (record.properties !== undefined && (typeof record.properties !== 'object' || Array.isArray(record.properties)))
    return 'properties must be an object';
  if (record.required !== undefined && !Array.isArray(record.required)) return 'required must be an array';
  return null;
}

function tokensOf(value: string | number): number {
  const characters = typeof value === 'number' ? value : value.length;
  return Math.ceil(characters / 4);
}

function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

function sendJson(response: ServerResponse, status: number, body: unknown, requestId: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, type: string, message: string, requestId: string): void {
  sendJson(response, status, { type: 'error', error: { type, message }, request_id: requestId }, requestId);
}

type StreamedMessage = Record<string, unknown> & { content: ScriptedResponse['content']; usage: Usage };

/** Server-sent events in the order the real API sends them. */
function sendStream(response: ServerResponse, message: StreamedMessage, requestId: string): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': requestId,
  });
  for (const event of streamEvents(message)) response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  response.end();
}

/** The streaming events of a message, in the order the real API sends them. */
function streamEvents(message: StreamedMessage): Array<{ type: string } & Record<string, unknown>> {
  const events: Array<{ type: string } & Record<string, unknown>> = [];
  const send = (type: string, data: Record<string, unknown>) => events.push({ type, ...data });
  send('message_start', {
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else if (block.type === 'tool_use') {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    } else if (block.type === 'thinking') {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'redacted_thinking') {
      send('content_block_start', { index, content_block: { type: 'redacted_thinking', data: block.data } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  send('message_stop', {});
  return events;
}

function sendAnswer(response: ServerResponse, answer: PlatformAnswer, requestId: string): void {
  response.writeHead(answer.status, { ...answer.headers, 'x-amzn-requestid': requestId });
  response.end(answer.body);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
