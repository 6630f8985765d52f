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
    const port = low + Math.floor(Math.random() * (ephemeralStart - low));
    if (await listensOn(port, host)) return port;
  }
  return anyPort(host);
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

function listensOn(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

function anyPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}
