// The only way out of a build container: an HTTP(S) proxy in the worker, listening on a unix
// socket, that lets a build reach the package registries the host's settings name and nothing
// else. HTTPS goes through CONNECT (end to end TLS, the proxy sees only the host and port);
// plain HTTP in absolute form. Every other host, loopback services included (the Temporal
// server, PostgreSQL, the content store), gets 403. When the host has a proxy of its own
// (HTTPS_PROXY, HTTP_PROXY, npm's https-proxy), the allowed connections go through it.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { RegistryTarget, UpstreamProxy } from './hostPackageSettings.js';

export interface RegistryProxyOptions {
  socketPath: string;
  allowed: RegistryTarget[];
  upstream: UpstreamProxy;
  /** Called for each refused connection: `host:port` and why. */
  onRefused?: (target: string, reason: string) => void;
  /** A tunnel that carries nothing either way for this long is closed (default: tunnelIdleTimeoutMs). */
  idleTimeoutMs?: number;
}

const connectTimeoutMs = 30_000;
/** Registries answer within seconds; a tunnel idle for minutes is a build holding the way out open. */
export const tunnelIdleTimeoutMs = 5 * 60_000;

export class RegistryProxy {
  /** The connections refused so far (`host:port`), in order; since the last `reset` when the proxy is kept for another build. */
  readonly refused: string[] = [];
  private readonly sockets = new Set<Duplex>();
  private onRefused: RegistryProxyOptions['onRefused'];

  private constructor(
    private readonly server: Server,
    readonly options: RegistryProxyOptions,
  ) {
    this.onRefused = options.onRefused;
  }

  static async start(options: RegistryProxyOptions): Promise<RegistryProxy> {
    const server = createServer();
    const proxy = new RegistryProxy(server, options);
    server.on('connect', (request: IncomingMessage, client: Duplex, head: Buffer) =>
      proxy.tunnel(request, client, head),
    );
    server.on('request', (request, response) => proxy.forward(request, response));
    server.on('connection', (socket: Socket) => proxy.track(socket));
    server.on('clientError', (_error, socket: Duplex) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.socketPath, () => resolve());
    });
    return proxy;
  }

  /**
   * Makes the proxy another build's: the connections still open (the last build's, whose container
   * is gone) are closed, and refusals from now on are this build's, told to `onRefused`.
   */
  reset(onRefused?: RegistryProxyOptions['onRefused']): void {
    for (const socket of this.sockets) socket.destroy();
    this.refused.length = 0;
    this.onRefused = onRefused;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  /** Null when the build may reach host:port, else why not. */
  private refusal(host: string, port: number): string | null {
    const wanted = host.replace(/^\[|\]$/g, '').toLowerCase();
    if (this.options.allowed.some((target) => target.host === wanted && target.port === port)) return null;
    const named = this.options.allowed.map((target) => `${target.host}:${target.port}`).join(', ') || 'none';
    return `${wanted}:${port} is not a package registry named by this machine's settings (allowed: ${named})`;
  }

  private refuse(target: string, reason: string): void {
    this.refused.push(target);
    this.onRefused?.(target, reason);
  }

  /** CONNECT host:port: a tunnel to an allowed registry, directly or through the host's proxy. */
  private tunnel(request: IncomingMessage, client: Duplex, head: Buffer): void {
    this.track(client);
    const target = parseAuthority(request.url ?? '');
    const reason = target ? this.refusal(target.host, target.port) : `"${request.url}" is not host:port`;
    if (!target || reason) {
      this.refuse(request.url ?? '', reason ?? '');
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${reason}\n`);
      return;
    }
    const upstream = this.upstreamFor(target.host, 'https');
    const ready = (server: Duplex, leftover: Buffer) => {
      this.track(server);
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (leftover.length) client.write(leftover);
      if (head.length) server.write(head);
      server.pipe(client);
      client.pipe(server);
      server.on('close', () => client.destroy());
      client.on('close', () => server.destroy());
      // The client socket sees both directions (what it sends, what the registry sends back): idle there is idle.
      const idle = this.options.idleTimeoutMs ?? tunnelIdleTimeoutMs;
      if ('setTimeout' in client && typeof client.setTimeout === 'function') {
        (client as Socket).setTimeout(idle);
        client.once('timeout', () => client.destroy());
      }
    };
    const fail = (message: string) => {
      if (!client.destroyed) client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${message}\n`);
    };
    if (!upstream) {
      const server = netConnect({ host: target.host, port: target.port, timeout: connectTimeoutMs });
      server.once('connect', () => {
        server.setTimeout(0);
        ready(server, Buffer.alloc(0));
      });
      server.once('timeout', () => server.destroy(new Error('connection timed out')));
      server.once('error', (error) => fail(`${target.host}:${target.port}: ${error.message}`));
      return;
    }
    const proxySocket = connectTo(upstream);
    proxySocket.once('error', (error) => fail(`the host's proxy ${upstream.host}: ${error.message}`));
    proxySocket.write(
      `CONNECT ${target.host}:${target.port} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\n${proxyAuthorization(upstream)}\r\n`,
    );
    let answer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) return;
      proxySocket.off('data', onData);
      const status = answer.subarray(0, answer.indexOf('\r\n')).toString();
      if (/^HTTP\/1\.[01] 200/.test(status)) ready(proxySocket, answer.subarray(end + 4));
      else {
        fail(`the host's proxy answered ${status}`);
        proxySocket.destroy();
      }
    };
    proxySocket.on('data', onData);
  }

  /** A plain HTTP request in absolute form (http://host/path): forwarded when the host is allowed. */
  private forward(request: IncomingMessage, response: import('node:http').ServerResponse): void {
    let url: URL;
    try {
      url = new URL(request.url ?? '');
    } catch {
      response.writeHead(400, { 'Content-Type': 'text/plain' }).end('this is a proxy: ask for an absolute URL\n');
      return;
    }
    const port = Number(url.port) || 80;
    const reason = url.protocol === 'http:' ? this.refusal(url.hostname, port) : `${url.protocol} is not proxied`;
    if (reason) {
      this.refuse(`${url.hostname}:${port}`, reason);
      response.writeHead(403, { 'Content-Type': 'text/plain', Connection: 'close' }).end(`${reason}\n`);
      return;
    }
    const headers: Record<string, string | string[] | undefined> = { ...request.headers, host: url.host };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = this.upstreamFor(url.hostname, 'http');
    const outgoing = httpRequest(
      upstream
        ? {
            host: upstream.host,
            port: upstream.port,
            path: url.href,
            method: request.method,
            headers: {
              ...headers,
              ...(upstream.authorization ? { 'proxy-authorization': upstream.authorization } : {}),
            },
            agent: false,
          }
        : {
            host: url.hostname,
            port,
            path: `${url.pathname}${url.search}`,
            method: request.method,
            headers,
            agent: false,
          },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    outgoing.on('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'Content-Type': 'text/plain' });
      response.end(`${url.host}: ${error.message}\n`);
    });
    request.pipe(outgoing);
  }

  private upstreamFor(host: string, scheme: 'http' | 'https'): Upstream | null {
    const { upstream } = this.options;
    const url = scheme === 'https' ? (upstream.https ?? upstream.http) : upstream.http;
    if (!url || bypasses(upstream.noProxy, host.toLowerCase())) return null;
    return parseUpstream(url);
  }
}

interface Upstream {
  host: string;
  port: number;
  tls: boolean;
  authorization: string | null;
}

function parseUpstream(text: string): Upstream | null {
  let url: URL;
  try {
    url = new URL(/^\w+:\/\//.test(text) ? text : `http://${text}`);
  } catch {
    return null;
  }
  const tls = url.protocol === 'https:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: Number(url.port) || (tls ? 443 : 80),
    tls,
    authorization: url.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
      : null,
  };
}

function connectTo(upstream: Upstream): Socket {
  return upstream.tls
    ? tlsConnect({ host: upstream.host, port: upstream.port, servername: upstream.host })
    : netConnect({ host: upstream.host, port: upstream.port });
}

function proxyAuthorization(upstream: Upstream): string {
  return upstream.authorization ? `Proxy-Authorization: ${upstream.authorization}\r\n` : '';
}

/** NO_PROXY as curl and npm read it: `*`, a host, `.domain` or `domain` (its subdomains too). */
function bypasses(noProxy: string[], host: string): boolean {
  return noProxy.some((entry) => {
    const name = entry.replace(/:\d+$/, '').replace(/^\*?\./, '');
    return entry === '*' || host === name || host.endsWith(`.${name}`);
  });
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function parseAuthority(text: string): { host: string; port: number } | null {
  const match = text.match(/^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+):(\d{1,5})$/);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return null;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}
