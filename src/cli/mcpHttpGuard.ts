// Who may use `mcp --port`: whoever reaches it may start runs on this machine's folders, so
// beyond the loopback address and the Host check (DNS rebinding), a browser page is refused by
// its Origin (the MCP spec: servers must check it; a page of another site on 127.0.0.1 sends its
// own), and with DURABLE_DEBUGGER_MCP_TOKEN every request must carry it as a bearer token (other
// local users and processes reach the loopback address too).
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface McpRefusal {
  status: 401 | 403;
  message: string;
  headers?: Record<string, string>;
}

/** Why a request to the HTTP MCP server on `port` is refused, or null when it may go on. */
export function mcpRequestRefusal(
  headers: IncomingHttpHeaders,
  port: number,
  token: string | undefined,
): McpRefusal | null {
  const origin = headers.origin;
  // Clients that are not browsers send no Origin; a browser's must be this server's own.
  if (origin !== undefined && !ownOrigins(port).includes(origin.toLowerCase()))
    return { status: 403, message: `Origin ${JSON.stringify(origin)} is not this server's: refused.` };
  if (token !== undefined && !bearerMatches(headers.authorization, token))
    return {
      status: 401,
      message: 'This MCP server needs its bearer token (Authorization: Bearer <DURABLE_DEBUGGER_MCP_TOKEN>).',
      headers: { 'www-authenticate': 'Bearer realm="durable-debugger"' },
    };
  return null;
}

function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

function bearerMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!given) return false;
  const [a, b] = [Buffer.from(given), Buffer.from(token)];
  return a.length === b.length && timingSafeEqual(a, b);
}
