// The network a build container gets: none of its own. A small container of ours (the network
// holder, on --network none) runs a bridge from 127.0.0.1:3128 to the registry proxy's unix
// socket, mounted into it; the build container (or a Dockerfile's RUN steps) joins the holder's
// network namespace, so all it can reach is its own loopback and, through it, the proxy. Docker
// without a bridge network (as here) needs nothing more than `container:<id>` network mode.
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { removeContainer } from '../container/container.js';
import type { RegistryTarget, UpstreamProxy } from './hostPackageSettings.js';
import { RegistryProxy } from './registryProxy.js';
import { registryRoutes, type RegistryRoute } from './registryRoutes.js';

export const proxyPort = 3128;
/** How often a holder checks that its proxy is still there (it exits when not). */
const proxyCheckMs = 5_000;
export const networkHolderPrefix = 'durable-debugger-env-net-';
const socketMountPoint = '/run/durable-debugger-proxy';

/**
 * Runs in the holder (the sandbox image's node): each connection to 127.0.0.1:3128 is piped to the
 * proxy's socket; each connection to a registry route's address (port 443) too, after a CONNECT to
 * its registry (registryRoutes.ts). A holder kept warm between builds outlives no worker: once the
 * proxy's socket answers no more (closed, or its worker gone), the bridge exits, and Docker removes
 * its container.
 */
function bridgeSource(routes: readonly RegistryRoute[]): string {
  return `
const net = require('net');
const socket = ${JSON.stringify(`${socketMountPoint}/proxy.sock`)};
const routes = ${JSON.stringify(routes)};
function bridge(client, connect) {
  const proxy = net.connect(socket);
  const end = () => { client.destroy(); proxy.destroy(); };
  client.on('error', end);
  proxy.on('error', end);
  if (!connect) { client.pipe(proxy); proxy.pipe(client); return; }
  client.pause();
  proxy.write('CONNECT ' + connect + ' HTTP/1.1\\r\\nHost: ' + connect + '\\r\\n\\r\\n');
  let answer = Buffer.alloc(0);
  const onData = (chunk) => {
    answer = Buffer.concat([answer, chunk]);
    const headEnd = answer.indexOf('\\r\\n\\r\\n');
    if (headEnd < 0) { if (answer.length > 16384) end(); return; }
    proxy.off('data', onData);
    proxy.off('close', end);
    if (!/^HTTP\\/1\\.[01] 200/.test(answer.toString('latin1', 0, 16))) return end();
    const rest = answer.subarray(headEnd + 4);
    if (rest.length) client.write(rest);
    client.pipe(proxy);
    proxy.pipe(client);
  };
  proxy.on('data', onData);
  // Closed before the tunnel (refused, or the worker gone): the paused client goes too.
  proxy.on('close', end);
}
const servers = [net.createServer((client) => bridge(client, null)).listen(${proxyPort}, '127.0.0.1')];
for (const route of routes)
  servers.push(net.createServer({ noDelay: true }, (client) => bridge(client, route.host + ':443')).listen(443, route.address));
let listening = 0;
for (const server of servers)
  server.on('listening', () => { if (++listening === servers.length) console.log('bridge ready'); });
setInterval(() => {
  const check = net.connect(socket);
  check.on('connect', () => check.destroy());
  check.on('error', () => process.exit(0));
}, ${proxyCheckMs});
`;
}

export interface BuildNetwork {
  /** HostConfig.NetworkMode (or the build API's networkmode) for what runs the build. */
  networkMode: string;
  /** The proxy as the build reaches it. */
  proxyUrl: string;
  proxy: RegistryProxy;
  close(): Promise<void>;
  /** Whether the holder still runs (a kept network is checked before each build). */
  running(): Promise<boolean>;
}

export interface BuildNetworkOptions {
  docker: Docker;
  /** An image with node (the sandbox image) to run the bridge. */
  image: string;
  /** A folder of its own for the proxy's socket; removed on close. */
  folder: string;
  name: string;
  labels: Record<string, string>;
  allowed: RegistryTarget[];
  upstream: UpstreamProxy;
  onRefused?: (target: string, reason: string) => void;
}

export async function openBuildNetwork(options: BuildNetworkOptions): Promise<BuildNetwork> {
  const { docker, folder } = options;
  await mkdir(folder, { recursive: true });
  const socketPath = join(folder, 'proxy.sock');
  const proxy = await RegistryProxy.start({
    socketPath,
    allowed: options.allowed,
    upstream: options.upstream,
    onRefused: options.onRefused,
  });
  let holder: Docker.Container | undefined;
  const close = async () => {
    if (holder) await removeContainer(docker, holder.id);
    await proxy.stop();
    await rm(folder, { recursive: true, force: true });
  };
  try {
    // The socket and its folder are the holder's alone (0700, 0600): no other local user reaches the
    // proxy. A root worker gives them to nobody, whom the holder runs as; a worker that is not root
    // runs the holder as itself.
    const user = holderUser();
    await chmod(folder, 0o700);
    await chmod(socketPath, 0o600);
    if (user.uid !== process.getuid?.()) {
      await chown(folder, user.uid, user.gid);
      await chown(socketPath, user.uid, user.gid);
    }
    const routes = registryRoutes(options.allowed);
    holder = await docker.createContainer({
      name: options.name,
      Image: options.image,
      Cmd: ['node', '-e', bridgeSource(routes)],
      User: `${user.uid}:${user.gid}`,
      WorkingDir: '/',
      Env: ['PATH=/usr/local/bin:/usr/bin:/bin'],
      Labels: options.labels,
      HostConfig: {
        NetworkMode: 'none',
        // The registry routes listen on port 443, and the bridge runs as nobody, with no capability.
        ...(routes.length ? { Sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' } } : {}),
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Memory: 128 * 1024 * 1024,
        PidsLimit: 64,
        // Gone when its bridge exits (the proxy closed, or its worker died without closing it).
        AutoRemove: true,
        Binds: [`${folder}:${socketMountPoint}:ro`],
        LogConfig: { Type: 'none', Config: {} },
      },
    });
    await waitForLine(holder, 'bridge ready', 30_000);
    const id = holder.id;
    const running = () =>
      docker
        .getContainer(id)
        .inspect()
        .then(
          (info) => info.State.Running,
          () => false,
        );
    return { networkMode: `container:${id}`, proxyUrl: `http://127.0.0.1:${proxyPort}`, proxy, close, running };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Who the holder runs as: nobody, or the worker's own user when it cannot give the socket to nobody. */
function holderUser(): { uid: number; gid: number } {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  return uid === 0 || uid === undefined || gid === undefined ? { uid: 65534, gid: 65534 } : { uid, gid };
}

/** Starts the container and waits until it prints `line` (it exits or the time runs out: an error with its output). */
async function waitForLine(container: Docker.Container, line: string, timeoutMs: number): Promise<void> {
  const stream = await container.attach({ stream: true, stdout: true, stderr: true });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`it printed nothing in ${timeoutMs / 1000} s`)), timeoutMs);
    const finish = (error?: Error) => {
      clearTimeout(timer);
      (stream as unknown as { destroy(): void }).destroy();
      if (error)
        reject(
          new Error(
            `The build's network bridge did not start (${error.message}); it needs node in the sandbox image. Its output: ${output.trim().slice(-500)}`,
          ),
        );
      else resolve();
    };
    container.modem.demuxStream(
      stream,
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          output += chunk.toString('utf8');
          if (output.includes(line)) finish();
          done();
        },
      }),
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          output += chunk.toString('utf8');
          done();
        },
      }),
    );
    container
      .start()
      .then(() => container.wait())
      .then(
        (result: { StatusCode: number }) => finish(new Error(`it exited with code ${result.StatusCode}`)),
        (error: Error) => finish(error),
      );
  });
}

/** A build's use of a kept network: what it joins, what it was refused, and giving it back. */
export interface BuildNetworkLease {
  networkMode: string;
  refused: string[];
  /** Gives the network back to be kept for the next build (`reusable`), or closes it. */
  release(reusable: boolean): Promise<void>;
  /** Says the build is over and its clean-up will release the network soon: a next build waits for it. */
  returning(): void;
}

/** How long a build waits for a network that a finished build's clean-up is about to give back. */
const returningWaitMs = 60_000;

/**
 * The build networks of one worker, kept warm between its builds: a holder container and its proxy
 * cost a container start and a node start each (seconds on a busy host), paid once per idle period
 * instead of once per build. One build at a time uses a network (its refusals are that build's),
 * never two: a second build at the same time gets one of its own. A network is kept only for builds
 * allowed the same registries through the same upstream; idle for `idleMs`, it is closed.
 * What a build leaves in the network namespace it joined dies with its container, which is removed
 * before the network is given back: the next build finds only the bridge.
 */
export class BuildNetworks {
  private readonly idle = new Map<string, { network: BuildNetwork; timer: NodeJS.Timeout }>();
  /** The releases under way of networks whose builds are over (their containers being removed), by key. */
  private readonly returning = new Map<string, Set<Promise<void>>>();

  constructor(private readonly idleMs = 120_000) {}

  /** A network for one build: a kept one allowed the same registries, else a new one (`open`). */
  async lease(
    allowed: RegistryTarget[],
    upstream: UpstreamProxy,
    onRefused: (target: string, reason: string) => void,
    open: () => Promise<BuildNetwork>,
  ): Promise<BuildNetworkLease> {
    const key = JSON.stringify({ allowed, upstream });
    // A build that just ended gives its network back once its container is gone (seconds on a busy
    // host): the next build waits for that instead of opening a second holder.
    let network = this.take(key) ?? (await this.nextReturned(key));
    if (network && !(await network.running())) {
      await network.close();
      network = undefined;
    }
    network ??= await open();
    network.proxy.reset(onRefused);
    const leased = network;
    let released = false;
    let returned = () => {};
    const done = new Promise<void>((resolve) => (returned = resolve));
    return {
      networkMode: leased.networkMode,
      refused: leased.proxy.refused,
      returning: () => {
        if (released) return;
        const pending = this.returning.get(key) ?? new Set();
        pending.add(done);
        this.returning.set(key, pending);
      },
      release: async (reusable) => {
        if (released) return;
        released = true;
        try {
          leased.proxy.reset(undefined);
          if (!reusable || this.idle.has(key)) return await leased.close();
          const timer = setTimeout(() => {
            if (this.idle.get(key)?.network === leased) this.idle.delete(key);
            void leased.close().catch(() => undefined);
          }, this.idleMs);
          timer.unref();
          this.idle.set(key, { network: leased, timer });
        } finally {
          this.returning.get(key)?.delete(done);
          returned();
        }
      },
    };
  }

  /** A network of `key` that a finished build gives back within returningWaitMs, if any is on its way. */
  private async nextReturned(key: string): Promise<BuildNetwork | undefined> {
    const pending = [...(this.returning.get(key) ?? [])];
    if (pending.length === 0) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, returningWaitMs)));
    await Promise.race([Promise.race(pending), timeout]);
    clearTimeout(timer);
    return this.take(key);
  }

  /** Closes the networks kept idle. */
  async close(): Promise<void> {
    const kept = [...this.idle.values()];
    this.idle.clear();
    for (const { network, timer } of kept) {
      clearTimeout(timer);
      await network.close().catch(() => undefined);
    }
  }

  private take(key: string): BuildNetwork | undefined {
    const kept = this.idle.get(key);
    if (!kept) return undefined;
    this.idle.delete(key);
    clearTimeout(kept.timer);
    return kept.network;
  }
}
