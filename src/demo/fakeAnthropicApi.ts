// A local stand-in for the Anthropic Messages API, spoken over real HTTP so that the real SDK
// talks to it. It validates requests by the API's rules (a broken one gets the 400 the real
// API gives), plays scripted responses, injects faults, records every request, and measures
// how much of each request the prompt cache could have served.
//
// Used by the tests, the benchmarks, and the offline demo (clearly labelled as scripted).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chooseScriptedResponse, type Script, type ScriptedResponse } from './script.js';

export type FaultKind = 'rate_limit' | 'overloaded' | 'server_error' | 'bad_request' | 'unauthorized' | 'disconnect' | 'slow';

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
  /** The key the client sent (x-api-key), to check where it goes and where it does not. */
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
    const url = request.url ?? '';
    if (request.method !== 'POST' || !(url.startsWith('/v1/messages'))) {
      return sendError(response, 404, 'not_found_error', `Not found: ${request.method} ${url}`, requestId);
    }
    if (!request.headers['x-api-key'] && !request.headers.authorization) {
      return sendError(response, 401, 'authentication_error', 'x-api-key header is required', requestId);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return sendError(response, 400, 'invalid_request_error', 'The request body is not valid JSON.', requestId);
    }
    if (url.startsWith('/v1/messages/count_tokens')) {
      const problem = validateRequest(body, { countTokens: true });
      if (problem) return sendError(response, 400, 'invalid_request_error', problem, requestId);
      return sendJson(response, 200, { input_tokens: tokensOf(JSON.stringify(body)) }, requestId);
    }

    const number = this.requests.length + 1;
    const apiKey = (request.headers['x-api-key'] as string | undefined) ?? request.headers.authorization?.replace(/^Bearer /, '') ?? null;
    const record: RecordedRequest = { number, receivedAt: Date.now(), body, status: 200, fault: null, cacheableShare: 0, usage: null, error: null, requestId, apiKey };
    this.requests.push(record);

    const fault = this.options.faultPlan?.(number) ?? this.randomFault();
    if (fault) {
      record.fault = fault;
      return this.injectFault(fault, record, request, response);
    }
    const problem = validateRequest(body, { countTokens: false });
    if (problem) {
      record.status = 400;
      record.error = problem;
      return sendError(response, 400, 'invalid_request_error', problem, requestId);
    }
    const messages = body.messages as ApiMessage[];
    const script = this.scriptFor(messages);
    if (!script) {
      record.status = 400;
      record.error = 'no script for this repository';
      const message = 'The scripted model has no scripted responses for this repository: it answers runs of the fixtures under fixtures/ only. Set ANTHROPIC_API_KEY to use Claude.';
      return sendError(response, 400, 'invalid_request_error', message, requestId);
    }
    const scripted = chooseScriptedResponse(script, messages);
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
      model: body.model,
      content: scripted.content,
      stop_reason: scripted.stopReason,
      stop_sequence: null,
      usage,
    };
    if (body.stream === true) return sendStream(response, message, requestId);
    return sendJson(response, 200, message, requestId);
  }

  private randomFault(): FaultKind | null {
    const faults = this.options.faults;
    if (!faults || faults.kinds.length === 0) return null;
    const random = faults.random ?? Math.random;
    if (random() >= faults.rate) return null;
    return faults.kinds[Math.floor(random() * faults.kinds.length)] ?? null;
  }

  private async injectFault(fault: FaultKind, record: RecordedRequest, request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (fault === 'disconnect' || fault === 'slow') {
      record.status = 0;
      if (fault === 'slow') await sleep(this.options.slowMs ?? 30_000);
      request.socket.destroy();
      return;
    }
    const [status, type, message] = httpFaults[fault];
    record.status = status;
    if (fault === 'rate_limit') response.setHeader('retry-after', String(this.options.retryAfterSeconds ?? 1));
    sendError(response, status, type, message, record.requestId);
  }

  private scriptFor(messages: ApiMessage[]): Script | null {
    const scripts = this.options.scripts;
    if ('responses' in scripts && Array.isArray((scripts as Script).responses)) return scripts as Script;
    const first = messages[0];
    const text = typeof first?.content === 'string' ? first.content : (first?.content ?? []).map((block) => block.text ?? '').join('\n');
    const name = text.match(/^Repository: (.+)$/m)?.[1]?.trim();
    return name ? ((scripts as Record<string, Script>)[name] ?? null) : null;
  }

  /**
   * Prompt-cache accounting by byte-identical prefixes: a prefix up to a cache breakpoint is
   * written to the cache; a later request whose beginning matches a written prefix reads it.
   */
  private accountCache(body: Record<string, unknown>): { readTokens: number; writeTokens: number; uncachedTokens: number; cacheableShare: number } {
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
    return { readTokens, writeTokens, uncachedTokens: Math.max(1, tokensOf(total) - readTokens - writeTokens), cacheableShare };
  }
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
  else for (const block of (system as ApiBlock[] | undefined) ?? []) segments.push({ text: strip(block), breakpoint: Boolean(block.cache_control) });
  for (const message of (body.messages as ApiMessage[] | undefined) ?? []) {
    blocksOf(message).forEach((block, index) =>
      segments.push({ text: (index === 0 ? `<${message.role}>` : '') + strip(block), breakpoint: Boolean(block.cache_control) }),
    );
  }
  return segments;
}

/** Identifies a conversation by its first message (without cache markers, which move). */
function conversationKey(body: Record<string, unknown>): string {
  const first = (body.messages as ApiMessage[] | undefined)?.[0];
  const text = first ? blocksOf(first).map((block) => block.text ?? '').join('\n') : '';
  return createHash('sha256').update(text).digest('hex');
}

/** The rules the real API enforces on a request, with its own wording where we know it. */
export function validateRequest(body: Record<string, unknown>, options: { countTokens: boolean }): string | null {
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!options.countTokens && (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)) {
    return 'max_tokens: Field required';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  const tools = (body.tools as Array<Record<string, unknown>> | undefined) ?? [];
  const names = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    const name = tool.name;
    if (typeof name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(name)) return `tools.${index}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    if (names.has(name)) return `tools: Tool names must be unique.`;
    names.add(name);
    const problem = jsonSchemaProblem(tool.input_schema);
    if (problem) return `tools.${index}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). ${problem}`;
  }
  let breakpoints = 0;
  const countBreakpoints = (blocks: unknown) => {
    for (const block of (Array.isArray(blocks) ? blocks : []) as ApiBlock[]) if (block?.cache_control) breakpoints++;
  };
  countBreakpoints(tools);
  countBreakpoints(body.system);
  for (const message of messages as ApiMessage[]) countBreakpoints(typeof message.content === 'string' ? [] : message.content);
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;

  for (const [index, message] of (messages as ApiMessage[]).entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (index === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
    const previous = (messages as ApiMessage[])[index - 1];
    if (previous && previous.role === message.role) return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`;
    const blocks = blocksOf(message);
    const isLast = index === messages.length - 1;
    if (blocks.length === 0 && !(isLast && message.role === 'assistant')) {
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    }
    for (const [blockIndex, block] of blocks.entries()) {
      if (block.type === 'text' && typeof block.text === 'string' && block.text.trim() === '' && !(isLast && message.role === 'assistant')) {
        return `messages.${index}.content.${blockIndex}.text: text content blocks must contain non-whitespace text`;
      }
    }
    const toolUses = blocks.filter((block) => block.type === 'tool_use');
    const next = (messages as ApiMessage[])[index + 1];
    if (message.role === 'assistant' && toolUses.length > 0 && next) {
      const nextBlocks = blocksOf(next);
      const leadingResults: ApiBlock[] = [];
      for (const block of nextBlocks) {
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
        previous && previous.role === 'assistant' ? blocksOf(previous).filter((block) => block.type === 'tool_use').map((block) => block.id) : [],
      );
      const seen = new Set<string>();
      let sawOther = false;
      for (const [blockIndex, block] of blocks.entries()) {
        if (block.type !== 'tool_result') {
          sawOther = true;
          continue;
        }
        if (sawOther) return `messages.${index}.content.${blockIndex}: \`tool_result\` blocks must come before any other content in a user message`;
        const id = String(block.tool_use_id);
        if (!previousUses.has(id)) {
          return `messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
        if (seen.has(id)) return `messages.${index}.content.${blockIndex}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`;
        seen.add(id);
      }
    }
  }
  return null;
}

function jsonSchemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return 'input_schema must be an object';
  const record = schema as Record<string, unknown>;
  if (record.type !== 'object') return "input_schema.type must be 'object'";
  if (record.properties !== undefined && (typeof record.properties !== 'object' || Array.isArray(record.properties))) return 'properties must be an object';
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

/** Server-sent events in the order the real API sends them. */
function sendStream(response: ServerResponse, message: Record<string, unknown> & { content: ScriptedResponse['content']; usage: Usage }, requestId: string): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
  const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } });
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else if (block.type === 'tool_use') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    } else if (block.type === 'thinking') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } });
  send('message_stop', { type: 'message_stop' });
  response.end();
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
