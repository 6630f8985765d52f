// A TCP port that was free a moment ago: for listeners that need a number before they start (the
// SDK's metrics exporter, the tests' servers). It is taken below the kernel's ephemeral range: a
// port from that range (what listening on port 0 gives) can be taken by any outgoing connection
// between our choice and the listener's bind, and on a busy machine one was ("bind: address
// already in use"). Below the range only another listener can take it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const candidates = 20;
const span = 10_000;

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const ephemeralStart = ephemeralRangeStart();
  const low = Math.max(1024, ephemeralStart - span);
  for (let tries = 0; tries < candidates && low < ephemeralStart; tries++) {
    const port = await listenedPort(low + Math.floor(Math.random() * (ephemeralStart - low)), host);
    if (port !== null) return port;
  }
  // No free port below the range: any the kernel gives.
  const port = await listenedPort(0, host);
  if (port === null) throw new Error(`no TCP port can be listened on at ${host}`);
  return port;
}

/** The first port the kernel hands to outgoing connections (Linux's default where it cannot be read). */
function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : 32768;
  } catch {
    return 32768;
  }
}

/** The port a listener got at `port` (0: any), closed again; null when it could not listen there. */
function listenedPort(port: number, host: string): Promise<number | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(null));
    probe.listen(port, host, () => {
      const got = (probe.address() as { port: number }).port;
      probe.close(() => resolve(got));
    });
  });
}
