// A command that ends while a call of its client is still under way (a query waiting for a busy
// worker, as the fixtures test saw when a run closed) must not die after closing its connection:
// the SDK retried such a call from a timer on the closed channel, which threw "Channel has been shut
// down" and killed the process. Real dev server; the client is the product's (src/client.ts), in a
// process of its own so that a crash is seen as its exit code.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { projectRoot } from '../../src/config.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

const closesWhileQuerying = `
import { connectClient } from './src/client.js';
const client = await connectClient(process.env.TEMPORAL_ADDRESS, 'default');
// No worker listens on this task queue: the query waits, as one does for a worker that is busy.
const handle = await client.workflow.start('nothing', {
  taskQueue: 'nobody-' + process.pid,
  workflowId: 'closes-while-querying-' + process.pid + '-' + Date.now(),
  args: [],
});
const answer = handle.query('status').then(() => 'answered', () => 'refused');
await new Promise((resolve) => setTimeout(resolve, 500));
await client.connection.close();
console.log('query ' + (await answer));
// What was left of the call settles within seconds of the close.
await new Promise((resolve) => setTimeout(resolve, 5000));
console.log('alive');
`;

test('closing the connection while a query waits leaves the process alive', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', closesWhileQuerying], {
    cwd: projectRoot,
    env: { ...process.env, TEMPORAL_ADDRESS: server.address },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.doesNotMatch(output, /Channel has been shut down/);
  assert.equal(code, 0, output);
  assert.match(output, /query refused\nalive/);
});
