// A local stand-in for the Anthropic Messages API, spoken over real HTTP so that the real SDK
// talks to it. It validates requests by the API's rules (fakeApiRules.ts: a broken one gets
// the 400 the real API gives), plays scripted responses, injects faults, records every
// request, and measures how much of each request the prompt cache could have served.
//
// Used by the tests, the benchmarks, and the offline demo (clearly labelled as scripted).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicModelId } from '../model/pricing.js';
import {
  platformCall,
  platformError,
  bedrockEventFrame,
  bedrockStreamHeaders,
  type FakePlatform,
  type PlatformAnswer,
} from './fakePlatforms.js';
import { blocksOf, thinkingKey, validateRequest, type ApiBlock, type ApiMessage } from './fakeApiRules.js';
import { chooseScriptedResponse, type Script, type ScriptedResponse } from './script.js';

export type FaultKind =
  | 'rate_limit'
  | 'overloaded'
  | 'server_error'
  | 'bad_request'
  | 'unauthorized'
  | 'disconnect'
  | 'slow'
  /** A streamed reply that begins, then ends in an `overloaded_error` event, as the real API may (others: 529). */
  | 'overloaded_mid_stream';

/** The error answers of the real API that faults imitate: status, error type, message. */
const httpFaults: Record<
  Exclude<FaultKind, 'disconnect' | 'slow' | 'overloaded_mid_stream'>,
  [number, string, string]
> = {
  rate_limit: [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  overloaded: [529, 'overloaded_error', 'Overloaded'],
  server_error: [500, 'api_error', 'Internal server error'],
  bad_request: [400, 'invalid_request_error', 'messages: the request was rejected (injected fault).'],
  unauthorized: [401, 'authentication_error', 'invalid x-api-key'],
};

export interface FakeApiOptions {
  /** Scripts by repository name (the "Repository: <name>" line of the task), or one script for all. */
  scripts: Record<string, Script> | Script;
  /**
   * Random faults: each request fails with probability `rate`, with one of `kinds`. With
   * `maxPerRequest`, a request body already failed that many times is answered, so a test's
   * outcome cannot turn on chance (at 30%, a call fails all eight of its attempts once in
   * 15,000 calls: once in some thirty runs of the fixtures).
   */
  faults?: { rate: number; kinds: FaultKind[]; random?: () => number; maxPerRequest?: number };
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
  /**
   * Answer streaming requests with the whole message (`application/json`, no events), as some
   * gateways and proxies in front of the API do.
   */
  wholeReplies?: boolean;
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
  /** Random faults injected so far, by the digest of the request body (a retry sends the same body). */
  private readonly faultsByBody = new Map<string, number>();

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
      stream: stream && !this.options.wholeReplies,
    };
    this.requests.push(record);

    const fault =
      (this.options.overloadedModels?.includes(String(body.model)) ? 'overloaded' : null) ??
      (this.options.rateLimitedModels?.includes(String(body.model)) ? 'rate_limit' : null) ??
      this.options.faultPlan?.(number) ??
      this.randomFault(raw);
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
    // A streamed reply takes its time as it is written; the others before they are sent.
    if (this.options.latencyMs && (!stream || this.options.wholeReplies)) await sleep(this.options.latencyMs);
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
    if (!stream || this.options.wholeReplies) return sendJson(response, 200, message, requestId);
    if (this.options.platform?.kind === 'bedrock') {
      response.writeHead(200, bedrockStreamHeaders(requestId));
      return writeStream(response, streamEvents(message), this.options.latencyMs ?? 0, bedrockEventFrame);
    }
    response.writeHead(200, eventStreamHeaders(requestId));
    return writeStream(response, streamEvents(message), this.options.latencyMs ?? 0, serverSentEvent);
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

  private randomFault(raw: string): FaultKind | null {
    const faults = this.options.faults;
    if (!faults || faults.kinds.length === 0) return null;
    const key = createHash('sha256').update(raw).digest('hex');
    const injected = this.faultsByBody.get(key) ?? 0;
    if (injected >= (faults.maxPerRequest ?? Number.POSITIVE_INFINITY)) return null;
    const random = faults.random ?? Math.random;
    if (random() >= faults.rate) return null;
    this.faultsByBody.set(key, injected + 1);
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
    if (fault === 'overloaded_mid_stream' && record.stream && this.options.platform?.kind !== 'bedrock') {
      response.writeHead(200, eventStreamHeaders(record.requestId));
      const started = {
        type: 'message_start',
        message: {
          id: `msg_${randomBytes(12).toString('hex')}`,
          type: 'message',
          role: 'assistant',
          model: record.body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      };
      const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
      response.end(serverSentEvent(started) + serverSentEvent(overloaded));
      return;
    }
    const [status, type, message] = httpFaults[fault === 'overloaded_mid_stream' ? 'overloaded' : fault];
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

type StreamEvent = { type: string } & Record<string, unknown>;

function eventStreamHeaders(requestId: string): Record<string, string> {
  return { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId };
}

/** One event of a streamed reply, as the Messages API sends it (server-sent events). */
function serverSentEvent(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Writes a streamed reply's events, spreading `latencyMs` over the pieces of text and thinking as
 * the real API does while the model writes (all of it before the first event when there are none).
 */
async function writeStream(
  response: ServerResponse,
  events: StreamEvent[],
  latencyMs: number,
  encode: (event: StreamEvent) => string | Buffer,
): Promise<void> {
  const written = (event: StreamEvent) =>
    event.type === 'content_block_delta' &&
    ['text_delta', 'thinking_delta'].includes((event.delta as { type: string }).type);
  const pieces = events.filter(written).length;
  if (pieces === 0 && latencyMs) await sleep(latencyMs);
  for (const event of events) {
    if (written(event) && latencyMs) await sleep(latencyMs / pieces);
    if (response.destroyed) return; // the client went away (a cancelled call)
    response.write(encode(event));
  }
  response.end();
}

/** Text cut where the model's tokens would fall, roughly: a few words at a time. */
function writtenPieces(text: string): string[] {
  return text.match(/(?:\S+\s*){1,4}|\s+/g) ?? [text];
}

/** The streaming events of a message, in the order the real API sends them. */
function streamEvents(message: StreamedMessage): StreamEvent[] {
  const events: StreamEvent[] = [];
  const send = (type: string, data: Record<string, unknown>) => events.push({ type, ...data });
  send('message_start', {
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of writtenPieces(block.text))
        send('content_block_delta', { index, delta: { type: 'text_delta', text } });
    } else if (block.type === 'tool_use') {
      send('content_block_start', { index, content_block: { ...block, input: {} } });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    } else if (block.type === 'thinking') {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of writtenPieces(block.thinking))
        send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
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
