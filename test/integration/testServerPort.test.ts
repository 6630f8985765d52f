// The tests' Temporal dev server starts again on a new port when the one chosen for it was taken
// before the server bound it (here by a loopback connection's own port, as the suite's outgoing
// connections take ports of the same ephemeral range): "bind: address already in use".
import assert from 'node:assert/strict';
import { createConnection, createServer } from 'node:net';
import { test } from 'node:test';
import { freePort, startTestServer } from '../../harness/devStack.js';

test(
  'a dev server whose chosen port was taken before its bind starts on another one',
  { timeout: 120_000 },
  async () => {
    const listener = createServer(() => undefined);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const connection = createConnection((listener.address() as { port: number }).port, '127.0.0.1');
    await new Promise((resolve) => connection.once('connect', resolve));
    const taken = connection.localPort as number;
    const chosen: number[] = [];
    try {
      const server = await startTestServer({
        choosePort: async () => {
          const port = chosen.length === 0 ? taken : await freePort();
          chosen.push(port);
          return port;
        },
      });
      try {
        assert.equal(chosen.length, 2, 'a second port was chosen');
        assert.equal(server.address, `127.0.0.1:${chosen[1]}`);
        const namespaces = await server.client.workflowService.listNamespaces({});
        assert.ok(namespaces.namespaces.length > 0, 'the server answers');
      } finally {
        await server.stop();
      }
    } finally {
      connection.destroy();
      listener.close();
    }
  },
);
