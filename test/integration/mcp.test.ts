// `durable-debugger mcp` driven by the MCP SDK's own client over stdio, as Claude Code or Claude
// Desktop would: a fixture run started through MCP survives the MCP server's death (the run is
// durable; the next server's worker takes it over), and a run started with approval is approved
// through MCP. The model is the fake API behind ANTHROPIC_BASE_URL.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture, scriptsByName } from '../../src/demo/fixtures.js';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { containersOf, startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, startCli } from '../support/cli.js';

let server: TestServer;
let fake: FakeAnthropicApi;
const connections: Array<{ client: Client; transport: StdioClientTransport }> = [];

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({ scripts: scriptsByName([await loadFixture('01_off_by_one')]), latencyMs: 500 });
  await fake.start();
});
after(async () => {
  killCliProcesses();
  for (const { client } of connections) await client.close().catch(() => undefined);
  await fake?.stop();
  await server?.stop();
});

/** A new `durable-debugger mcp` process and an MCP client connected to it over stdio. */
async function connect(): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...checkoutCli, 'mcp'],
    cwd: projectRoot,
    env: {
      ...(process.env as Record<string, string>),
      TEMPORAL_ADDRESS: server.address,
      DURABLE_DEBUGGER_HOME: server.home,
      NO_COLOR: '1',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'durable-debugger-test', version: '1.0.0' });
  await client.connect(transport);
  connections.push({ client, transport });
  return { client, transport };
}

type Structured = Record<string, unknown>;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const text = (result.content as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
  assert.ok(!result.isError, `${name} failed: ${text}`);
  return (result.structuredContent ?? {}) as Structured;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function reportOf(client: Client, workflowId: string): Promise<Structured> {
  for (;;) {
    const result = await call(client, 'wait_for_report', { workflowId, timeoutSeconds: 50 });
    if (result.report) return result.report as Structured;
  }
}

test('a run started through MCP goes on when the MCP server is killed mid-run; the next server gives its report and patch', async () => {
  const first = await connect();
  let client = first.client;
  const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
  assert.deepEqual(tools, [
    'approve',
    'get_patch',
    'get_report',
    'get_status',
    'list_runs',
    'reject',
    'resume_run',
    'send_hint',
    'start_run',
    'stop_run',
    'wait_for_report',
  ]);
  const started = await call(client, 'start_run', { repo: 'fixtures/01_off_by_one', workflowId: 'mcp-killed-mid-run' });
  const workflowId = started.workflowId as string;
  assert.equal(workflowId, 'mcp-killed-mid-run');

  // Poll the status until the agent is at work, then kill the server (and its worker) outright.
  await until(async () => {
    const status = await call(client, 'get_status', { workflowId });
    return status.execution === 'running' && Number(status.iteration) >= 2;
  }, 'the run reached its second iteration');
  const requestsBefore = fake.requests.length;
  process.kill(first.transport.pid as number, 'SIGKILL');
  await client.close().catch(() => undefined);

  ({ client } = await connect());
  const report = await reportOf(client, workflowId);
  assert.equal(report.status, 'fixed', String(report.stopDetail));
  assert.ok(fake.requests.length > requestsBefore, 'the model was called again after the restart');
  const patch = (await call(client, 'get_patch', { workflowId })).patch as string;
  assert.match(patch, /^diff --git a\/buggy_code\.py b\/buggy_code\.py/m);
  const resource = await client.readResource({ uri: `durable-debugger://runs/${workflowId}/report` });
  assert.match(String((resource.contents[0] as { text?: string }).text), /Status: fixed/);
  const runs = (await call(client, 'list_runs', {})).runs as Array<{ workflowId: string; status: string }>;
  assert.equal(runs.find((run) => run.workflowId === workflowId)?.status, 'fixed');
  assert.deepEqual(fake.rejected, []);
});

test('a run started through MCP with approval waits for approve, and ends fixed', async () => {
  const { client } = await connect();
  const { workflowId } = await call(client, 'start_run', {
    repo: join(projectRoot, 'fixtures', '01_off_by_one'),
    approve: true,
    workflowId: 'mcp-approval',
  });
  // Approving too early is refused, with the reason.
  const early = await client.callTool({ name: 'approve', arguments: { workflowId } });
  assert.equal(early.isError, true);
  assert.match(JSON.stringify(early.content), /not awaiting approval/);
  await until(async () => {
    const status = await call(client, 'get_status', { workflowId });
    return Boolean(status.awaitingApproval);
  }, 'the run awaits approval');
  await call(client, 'approve', { workflowId });
  const report = await reportOf(client, workflowId as string);
  assert.equal(report.status, 'fixed', String(report.stopDetail));
  assert.equal(await containersOf(server), 0);
});

test('start_run refuses a repository that does not exist, saying so', async () => {
  const { client } = await connect();
  const result = await client.callTool({ name: 'start_run', arguments: { repo: '/no/such/repository' } });
  assert.equal(result.isError, true);
  assert.match(JSON.stringify(result.content), /does not exist/);
});

test('`mcp --port` serves the same tools over streamable HTTP on the loopback address, and refuses other Host headers', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const mcp = startCli(server, ['mcp', '--port', String(port)], {
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
  });
  await until(async () => mcp.output().includes(`http://127.0.0.1:${port}/mcp`), 'the HTTP server listens', 60_000);
  const client = new Client({ name: 'durable-debugger-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  connections.push({ client, transport: undefined as unknown as StdioClientTransport });
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(tools.includes('start_run') && tools.includes('wait_for_report'));
  assert.ok(Array.isArray((await call(client, 'list_runs', { limit: 50 })).runs));
  // A page on another site that resolves its name to 127.0.0.1 (DNS rebinding) sends its own Host header.
  const rebound = await new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: {
          host: `attacker.example:${port}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
  assert.equal(rebound, 403);
  mcp.child.kill('SIGTERM');
  assert.equal((await mcp.done).code, 0);
});

/** The status of a tools/list request to the HTTP MCP server with these headers. */
function statusOfPost(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  });
}

test('`mcp --port` refuses a browser Origin not its own, and with DURABLE_DEBUGGER_MCP_TOKEN a request without that bearer token', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const token = 'mcp-token-0123456789abcdef';
  const mcp = startCli(server, ['mcp', '--port', String(port)], {
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    DURABLE_DEBUGGER_MCP_TOKEN: token,
  });
  try {
    await until(async () => mcp.output().includes(`http://127.0.0.1:${port}/mcp`), 'the HTTP server listens', 60_000);
    const bearer = { authorization: `Bearer ${token}` };
    // Another local process, or a page that may not send credentials: no token, a wrong one.
    assert.equal(await statusOfPost(port, {}), 401);
    assert.equal(await statusOfPost(port, { authorization: 'Bearer mcp-token-0123456789abcdeX' }), 401);
    // A page of another site, served on 127.0.0.1 or not, sends its Origin: refused even with the token.
    assert.equal(await statusOfPost(port, { ...bearer, origin: 'http://attacker.example' }), 403);
    assert.equal(await statusOfPost(port, { ...bearer, origin: 'http://127.0.0.1:1' }), 403);
    assert.equal(await statusOfPost(port, { ...bearer, origin: `http://127.0.0.1:${port}` }), 200);
    // An MCP client given the token works as before.
    const client = new Client({ name: 'durable-debugger-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer } }),
    );
    connections.push({ client, transport: undefined as unknown as StdioClientTransport });
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'start_run'));
  } finally {
    mcp.child.kill('SIGTERM');
    await mcp.done;
  }
});
