// Some gateways and proxies answer a streaming Messages request with the whole message
// (`application/json`, no events): the SDK's stream then ends "without sending any chunks" and
// the call fails on every retry. The model client's fetch sees that answer first: a whole
// message is turned into the events a streamed reply would have sent (so the call gets its
// reply), and the client is told, so that its later calls ask that endpoint for a whole reply.
import type Anthropic from '@anthropic-ai/sdk';

/** The header that marks an answer this fetch rebuilt from a whole message (read back by the call). */
export const wholeReplyHeader = 'x-durable-debugger-whole-reply';

/**
 * A fetch that passes every answer through, except a successful answer to a streaming request
 * that is not an event stream but a whole message: that one becomes its event stream, marked
 * with `wholeReplyHeader`, and `onWholeReply` is called.
 */
export function fetchAcceptingWholeReplies(onWholeReply: () => void, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.ok || !askedForStream(init?.body)) return response;
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('text/event-stream') || contentType.includes('vnd.amazon.eventstream')) return response;
    const text = await response.text();
    const message = wholeMessage(text);
    const headers = new Headers(response.headers);
    if (!message) return new Response(text, { status: response.status, statusText: response.statusText, headers });
    onWholeReply();
    headers.set('content-type', 'text/event-stream');
    headers.delete('content-length');
    headers.set(wholeReplyHeader, '1');
    return new Response(eventStreamOf(message), { status: response.status, statusText: response.statusText, headers });
  };
}

/** The SDK sends a streaming request's body as JSON that ends with its `stream: true` (only the end is read: a body holds the whole conversation). */
function askedForStream(body: unknown): boolean {
  return typeof body === 'string' && /"stream":\s*true\s*}\s*$/.test(body.slice(-64));
}

function wholeMessage(text: string): Anthropic.Message | null {
  try {
    const parsed = JSON.parse(text) as Partial<Anthropic.Message> | null;
    return parsed && parsed.type === 'message' && Array.isArray(parsed.content) ? (parsed as Anthropic.Message) : null;
  } catch {
    return null;
  }
}

/** The server-sent events of a whole message: each block whole in its start event. */
export function eventStreamOf(message: Anthropic.Message): string {
  const events: Array<[string, Record<string, unknown>]> = [
    ['message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null } }],
  ];
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      // The SDK builds a tool call's input from its JSON deltas only.
      events.push(['content_block_start', { index, content_block: { ...block, input: {} } }]);
      events.push([
        'content_block_delta',
        { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) } },
      ]);
    } else {
      events.push(['content_block_start', { index, content_block: block }]);
    }
    events.push(['content_block_stop', { index }]);
  });
  events.push([
    'message_delta',
    {
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence ?? null },
      usage: message.usage,
    },
  ]);
  events.push(['message_stop', {}]);
  return events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`).join('');
}
