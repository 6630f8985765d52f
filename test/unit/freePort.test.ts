// Ports the tests' servers are given come from below the kernel's ephemeral range, where no
// outgoing connection can take them between the choice and the bind.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort } from '../../src/freePort.js';

test('freePort gives a port below the ephemeral range that can be listened on', async () => {
  const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    assert.ok(port >= 1024 && port < start, `${port} is below ${start}`);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  }
});
