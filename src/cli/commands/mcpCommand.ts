// `mcp`: durable-debugger as an MCP server for other agents (src/cli/mcpServer.ts), over stdio, or
// streamable HTTP with --port. A worker runs in this process for as long as the server does.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Command } from 'commander';
import { positiveInteger, providerOption, withSession } from '../commandSupport.js';
import { mcpRequestRefusal } from '../mcpHttpGuard.js';
import { log, workerForThisCommand, type Session } from '../session.js';

export function mcpCommand(program: Command): void {
  providerOption(program.command('mcp'))
    .description(
      'serve durable-debugger to other agents (Claude Code, Claude Desktop, IDE agents) over MCP: stdio, or streamable HTTP with --port',
    )
    .option('--port <n>', 'serve streamable HTTP on http://127.0.0.1:<n>/mcp instead of stdio', positiveInteger)
    .action(async (options: { port?: number }) =>
      withSession(async (session) => {
        // stdout is the protocol's channel: everything else this process says goes to stderr.
        const worker = await workerForThisCommand(session);
        try {
          if (options.port) await serveHttp(session, program.version() ?? '0', options.port);
          else await serveStdio(session, program.version() ?? '0');
        } finally {
          await worker.shutdown();
        }
      }),
    );
}

/** One client on stdin/stdout, until it closes stdin or the process is told to stop. */
async function serveStdio(session: Session, version: string): Promise<void> {
  // Loaded when served: every other command answers without the MCP modules.
  const [{ StdioServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../mcpServer.js'),
  ]);
  const server = createMcpServer(session, version);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
    process.stdin.once('end', () => done());
    process.once('SIGINT', () => done());
    process.once('SIGTERM', () => done());
  });
  await server.connect(transport);
  log('durable-debugger MCP server on stdio: runs started here are durable and go on if the client disconnects.');
  await closed;
  await server.close();
}

/**
 * Streamable HTTP, stateless: each request gets a server of its own over the one session. It
 * listens on the loopback address only and refuses other Host headers (DNS rebinding), a browser
 * Origin not its own, and without the bearer token when one is set (mcpHttpGuard.ts): whoever
 * reaches it may start runs on this machine's folders.
 */
async function serveHttp(session: Session, version: string, port: number): Promise<void> {
  const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('../mcpServer.js'),
  ]);
  const allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  const http = createServer((request: IncomingMessage, response: ServerResponse) => {
    const refusal = mcpRequestRefusal(request.headers, port, session.config.mcpToken);
    if (refusal) {
      response.writeHead(refusal.status, { ...refusal.headers, 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: refusal.message }, id: null }));
      return;
    }
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('The MCP endpoint is /mcp.');
      return;
    }
    // Stateless: no server-initiated stream to hold open (GET), no session to end (DELETE).
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }),
      );
      return;
    }
    const server = createMcpServer(session, version);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableDnsRebindingProtection: true,
      allowedHosts,
    });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch((error: unknown) => {
        log(`MCP request failed: ${(error as Error).message}`);
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((listening, failed) => {
    http.once('error', failed);
    http.listen(port, '127.0.0.1', () => listening());
  });
  log(`durable-debugger MCP server on http://127.0.0.1:${port}/mcp (streamable HTTP). Ctrl-C to stop.`);
  await new Promise<void>((done) => {
    process.once('SIGINT', () => done());
    process.once('SIGTERM', () => done());
  });
  const closed = new Promise<void>((done) => http.close(() => done()));
  http.closeAllConnections();
  await closed;
}
