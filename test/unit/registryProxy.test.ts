// The registry proxy with real sockets: it lets a build reach the registries it allows (CONNECT
// and plain HTTP), refuses every other host and port (loopback services included) before any
// connection is made, and goes through the host's own proxy when there is one.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RegistryProxy } from '../../src/sandbox/environment/registryProxy.js';

let scratch: string;
let echo: Server;
let forbidden: Server;
let web: HttpServer;
const forbiddenConnections: number[] = [];

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'registry-proxy-'));
  echo = await listen(createServer((socket) => socket.pipe(socket)));
  forbidden = await listen(createServer((socket) => (forbiddenConnections.push(1), socket.end('secret\n'))));
  web = await listen(createHttpServer((request, response) => response.end(`served ${request.url}\n`)));
});

after(async () => {
  for (const server of [echo, forbidden, web]) server.close();
  await rm(scratch, { recursive: true, force: true });
});

function listen<T extends Server | HttpServer>(server: T): Promise<T> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function portOf(server: Server | HttpServer): number {
  return (server.address() as AddressInfo).port;
}

/** Sends `text` to the proxy's socket and collects the answer until the proxy closes or `until` is seen. */
function exchange(socketPath: string, text: string, until?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (until && answer.includes(until)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('end', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(text);
  });
}

async function startProxy(
  name: string,
  allowed: Array<{ host: string; port: number }>,
  upstream = { https: null as string | null, http: null as string | null, noProxy: [] as string[] },
) {
  return RegistryProxy.start({ socketPath: join(scratch, `${name}.sock`), allowed, upstream });
}

test('CONNECT reaches an allowed registry and nothing else: other ports and hosts get 403 and no connection', async () => {
  const proxy = await startProxy('connect', [{ host: '127.0.0.1', port: portOf(echo) }]);
  try {
    const tunnel = await exchange(
      proxy.options.socketPath,
      `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nping through the tunnel`,
      'ping through the tunnel',
    );
    assert.match(tunnel, /^HTTP\/1\.1 200 Connection established\r\n\r\nping through the tunnel/);

    for (const target of [`127.0.0.1:${portOf(forbidden)}`, `localhost:${portOf(echo)}`, `[::1]:${portOf(echo)}`]) {
      const answer = await exchange(proxy.options.socketPath, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 403 Forbidden/, target);
      assert.match(answer, /is not a package registry named by this machine's settings/);
    }
    assert.deepEqual(forbiddenConnections, [], 'the refused service was never connected to');
    assert.deepEqual(proxy.refused, [
      `127.0.0.1:${portOf(forbidden)}`,
      `localhost:${portOf(echo)}`,
      `[::1]:${portOf(echo)}`,
    ]);
  } finally {
    await proxy.stop();
  }
});

test('plain HTTP in absolute form is forwarded to an allowed host only', async () => {
  const proxy = await startProxy('http', [{ host: '127.0.0.1', port: portOf(web) }]);
  try {
    const allowed = await exchange(
      proxy.options.socketPath,
      `GET http://127.0.0.1:${portOf(web)}/simple/six/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    assert.match(allowed, /^HTTP\/1\.1 200/);
    assert.match(allowed, /served \/simple\/six\//);
    const refused = await exchange(
      proxy.options.socketPath,
      `GET http://127.0.0.1:${portOf(forbidden)}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    assert.match(refused, /^HTTP\/1\.1 403/);
    const notAProxyRequest = await exchange(
      proxy.options.socketPath,
      `GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    );
    assert.match(notAProxyRequest, /^HTTP\/1\.1 400/);
    assert.deepEqual(forbiddenConnections, []);
  } finally {
    await proxy.stop();
  }
});

test("allowed connections go through the host's own proxy, with its credentials; NO_PROXY hosts go direct", async () => {
  const seen: Array<{ line: string; authorization: string | undefined }> = [];
  // The host's proxy: answers CONNECT by connecting where it is asked.
  const hostProxy = await listen(
    createServer((socket) => {
      socket.once('data', (chunk) => {
        const head = chunk.toString();
        const line = head.split('\r\n')[0] as string;
        seen.push({ line, authorization: head.match(/Proxy-Authorization: (.*)\r\n/)?.[1] });
        const [host, port] = (line.split(' ')[1] as string).split(':') as [string, string];
        const onward = connect(Number(port), host, () => {
          socket.write('HTTP/1.1 200 OK\r\n\r\n');
          socket.pipe(onward).pipe(socket);
        });
      });
    }),
  );
  const upstream = { https: `http://builder:s3cret@127.0.0.1:${portOf(hostProxy)}`, http: null, noProxy: [] };
  const proxy = await startProxy('chain', [{ host: '127.0.0.1', port: portOf(echo) }], upstream);
  try {
    const tunnel = await exchange(
      proxy.options.socketPath,
      `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\n\r\nvia the host's proxy`,
      "via the host's proxy",
    );
    assert.match(tunnel, /^HTTP\/1\.1 200 Connection established/);
    assert.deepEqual(seen, [
      {
        line: `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1`,
        authorization: `Basic ${Buffer.from('builder:s3cret').toString('base64')}`,
      },
    ]);
  } finally {
    await proxy.stop();
  }
  const bypass = await startProxy('bypass', [{ host: '127.0.0.1', port: portOf(echo) }], {
    ...upstream,
    noProxy: ['127.0.0.1'],
  });
  try {
    const direct = await exchange(
      bypass.options.socketPath,
      `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\n\r\ndirect`,
      'direct',
    );
    assert.match(direct, /^HTTP\/1\.1 200/);
    assert.equal(seen.length, 1, 'a NO_PROXY host does not go through the host proxy');
  } finally {
    await bypass.stop();
    hostProxy.close();
  }
});

test('a tunnel that carries nothing is closed after the idle timeout, both ends', { timeout: 30_000 }, async () => {
  const proxy = await RegistryProxy.start({
    socketPath: join(scratch, 'idle.sock'),
    allowed: [{ host: '127.0.0.1', port: portOf(echo) }],
    upstream: { https: null, http: null, noProxy: [] },
    idleTimeoutMs: 300,
  });
  try {
    // The tunnel is opened, used once, then left idle: the proxy closes it (the exchange ends on close).
    const answer = await exchange(
      proxy.options.socketPath,
      `CONNECT 127.0.0.1:${portOf(echo)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nonce`,
    );
    assert.match(answer, /^HTTP\/1\.1 200 Connection established\r\n\r\nonce$/);
  } finally {
    await proxy.stop();
  }
});
