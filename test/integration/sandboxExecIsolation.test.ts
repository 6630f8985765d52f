// Commands that run at the same time in one sandbox (the workflow runs a reply's tool calls
// concurrently) must not stop each other: each command's clean-up stops only what that
// command started, on the real Docker engine.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { demultiplexed, execToEnd } from '../../src/sandbox/container/exec.js';
import { stopSandboxUserProcesses } from '../../src/sandbox/container/quiesce.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

let sandbox: TestSandbox;

/** Lines no pattern below matches by chance, then one line it does match, at the very end. */
function slowSearchFile(lines: number, marker: string): string {
  const body: string[] = [];
  let seed = lines;
  for (let line = 0; line < lines; line++) {
    let text = '';
    for (let column = 0; column < 100; column++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      text += 'abcdefghijklmnop'[(seed >>> 16) % 16];
    }
    body.push(text);
  }
  body.push(`${marker} xyzxyzxyzxyzxyzxyzxyz`);
  return `${body.join('\n')}\n`;
}

// A back-reference makes grep slow on purpose: seconds per search, the larger file longer.
const slowPattern = '(.{3,})\\1\\1\\1\\1\\1';

before(async () => {
  sandbox = await startTestSandbox({
    files: {
      'quick/data.txt': slowSearchFile(3000, 'END-OF-QUICK'),
      'slow/data.txt': slowSearchFile(9000, 'END-OF-SLOW'),
    },
    limits: { commandTimeoutSeconds: 60 },
  });
});

after(async () => {
  await sandbox?.stop();
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

test('two slow searches in parallel both finish with all their matches', async () => {
  const started = Date.now();
  const [quick, slow] = await Promise.all([
    sandbox.tool('search_code', { pattern: slowPattern, path: 'quick' }),
    sandbox.tool('search_code', { pattern: slowPattern, path: 'slow' }),
  ]);
  console.log(`the two searches took ${Date.now() - started} ms together`);
  assert.match(quick.content, /quick\/data\.txt:3001:END-OF-QUICK/);
  assert.match(
    slow.content,
    /slow\/data\.txt:9001:END-OF-SLOW/,
    `the slow search was cut short:\n${slow.content.slice(0, 300)}`,
  );
  assert.deepEqual(await sandbox.sandboxUserProcesses(), []);
});

test('two commands in parallel: the one that ends first does not stop the other', async () => {
  const [long, short] = await Promise.all([
    sandbox.run('sleep 3; echo long done'),
    sandbox.run('sleep 0.5; echo short done'),
  ]);
  assert.match(short.content, /^Exit code: 0\n\nshort done$/);
  assert.match(long.content, /^Exit code: 0\n\nlong done$/, `the longer command was stopped:\n${long.content}`);
});

test('a command’s leftover processes are stopped without stopping another command’s', async () => {
  const [long, leaver] = await Promise.all([
    sandbox.run('sleep 3; echo long done'),
    sandbox.run('sleep 1000 & setsid sleep 1000 & sleep 0.5; echo left two behind'),
  ]);
  assert.match(leaver.content, /^Exit code: 0\n\nleft two behind$/);
  assert.match(long.content, /^Exit code: 0\n\nlong done$/, `the longer command was stopped:\n${long.content}`);
  assert.deepEqual(await sandbox.sandboxUserProcesses(), [], 'a leftover process survived');
});

test('a command that times out is stopped with its setsid child, and a parallel command is not', async () => {
  const [timedOut, other] = await Promise.all([
    sandbox.run('setsid sh -c "sleep 1000" & sleep 1000', { commandTimeoutSeconds: 2 }),
    sandbox.run('sleep 5; echo other done'),
  ]);
  assert.match(timedOut.content, /The command timed out after 2 s/);
  assert.match(other.content, /^Exit code: 0\n\nother done$/, `the parallel command was stopped:\n${other.content}`);
  assert.deepEqual(await sandbox.sandboxUserProcesses(), [], 'a process survived');
});

test('a short command of ours returns its exit code and output once it has exited, while a process it left still runs', async () => {
  const container = await sandbox.container();
  const started = Date.now();
  // The stream stays open while the background sleep holds stdout: only Docker's exit status says it is over.
  const result = await execToEnd(container, sandbox.host.user, ['sh', '-c', 'echo before; sleep 30 & exit 3']);
  const tookMs = Date.now() - started;
  assert.equal(result.exitCode, 3);
  assert.match(demultiplexed(result.output), /^before\n$/);
  assert.ok(tookMs < 10_000, `it waited ${tookMs} ms for the left process`);
  await stopSandboxUserProcesses(container, sandbox.host.user);
});
