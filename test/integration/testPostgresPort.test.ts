// The tests' PostgreSQL moves to another port when something takes the one it chose before it
// binds it: on a busy machine the port (from the kernel's ephemeral range, shared with every
// outgoing connection) was taken during initdb, and `pg_ctl: could not start server` failed a job.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { freePort } from '../../src/freePort.js';
import { postgresBinaries, startTestPostgres } from '../support/postgres.js';

const run = promisify(execFile);

test('PostgreSQL whose chosen port was taken before its bind starts on another one', { timeout: 120_000 }, async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as { port: number }).port;
  const chosen: number[] = [];
  try {
    const server = await startTestPostgres({
      choosePort: async () => {
        const port = chosen.length === 0 ? taken : await freePort();
        chosen.push(port);
        return port;
      },
    });
    try {
      assert.equal(chosen.length, 2, 'a second port was chosen');
      assert.equal(server.port, chosen[1]);
      assert.notEqual(server.port, taken);
      const { stdout } = await run(join(postgresBinaries(), 'psql'), [server.url, '-tAc', 'select 1']);
      assert.equal(stdout.trim(), '1');
    } finally {
      await server.stop();
    }
  } finally {
    squatter.close();
  }
});
