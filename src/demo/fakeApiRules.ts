// The rules the real Anthropic Messages API enforces on a request, for the fake API
// (fakeAnthropicApi.ts): a request the real API would reject gets the same 400 from the fake.

export interface ApiBlock {
  type: string;
  text?: string;
  id?: string;
  tool_use_id?: string;
  cache_control?: unknown;
  [key: string]: unknown;
}

export interface ApiMessage {
  role: string;
  content: string | ApiBlock[];
}

export function blocksOf(message: ApiMessage): ApiBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
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
