// A patch is the repository's text: a file with terminal escapes (a window-title OSC, a screen
// clear) and a bidirectional override in a line near the fix puts them in the patch. `result
// --patch` prints it byte-exact through a pipe (for `git apply`) and printable on a terminal (a
// real pseudo-terminal, through util-linux `script`); MCP `get_patch` gives printable text and the
// byte-exact patch as structured content. Real dev server, real Docker, the real CLI.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';
import { runCli } from '../support/cli.js';

// eslint-disable-next-line no-control-regex -- finding raw control characters is the point
const rawControls = /[\u001b\u0007\u202e]/;
const hostileLine = '    # \u001b]0;pwned\u0007 \u001b[2J \u202Eevil\n';
let server: TestServer;
let worker: TestWorker;
let repository: string;
let workflowId: string;

before(async () => {
  server = await startTestServer();
  const fixture = await loadFixture('01_off_by_one');
  repository = await mkdtemp(join(tmpdir(), 'patch-on-terminal-'));
  await cp(fixture.path, repository, { recursive: true });
  const code = join(repository, 'buggy_code.py');
  const source = await readFile(code, 'utf8');
  const loop = '    for i in range(len(items) - 1):';
  await writeFile(code, source.replace(loop, `${hostileLine}${loop}`));
  worker = await startTestWorker(server, { fake: { scripts: fixture.script } });
  const handle = await startDebugRun(server.client, {
    input: { ...fixture.meta.input, repo: repository },
    taskQueue: worker.taskQueue,
  });
  workflowId = handle.workflowId;
  const report = (await handle.result()) as DebugReport;
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.ok(report.patch.includes(hostileLine), report.patch);
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  if (repository) await rm(repository, { recursive: true, force: true });
});

test('`result --patch` is byte-exact through a pipe and printable on a terminal', async () => {
  const piped = await runCli(server, ['result', workflowId, '--patch']);
  assert.equal(piped.code, 0, piped.output);
  assert.ok(piped.stdout.includes(hostileLine), 'the piped patch is not the patch');

  const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, ...checkoutCli, 'result', workflowId, '--patch'].map(shellQuote).join(' ');
  const onTerminal = await new Promise<string>((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: projectRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, DURABLE_DEBUGGER_HOME: server.home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`exit ${code}: ${output}`))));
  });
  assert.match(onTerminal, /buggy_code\.py/);
  assert.ok(!rawControls.test(onTerminal), `raw escapes reached the terminal: ${JSON.stringify(onTerminal)}`);
  assert.ok(onTerminal.includes('␛]0;pwned␇ ␛[2J <U+202E>evil'), JSON.stringify(onTerminal));
});

test('MCP `get_patch`: printable text, the byte-exact patch as structured content', async () => {
  const client = new Client({ name: 'durable-debugger-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...checkoutCli, 'mcp'],
      cwd: projectRoot,
      env: {
        ...(process.env as Record<string, string>),
        TEMPORAL_ADDRESS: server.address,
        DURABLE_DEBUGGER_HOME: server.home,
        NO_COLOR: '1',
      },
      stderr: 'pipe',
    }),
  );
  try {
    const result = await client.callTool({ name: 'get_patch', arguments: { workflowId } }, undefined, {
      timeout: 120_000,
    });
    const text = (result.content as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
    assert.ok(!result.isError, text);
    assert.ok(String((result.structuredContent as { patch?: string } | undefined)?.patch).includes(hostileLine));
    assert.ok(!rawControls.test(text), `raw escapes in the text: ${JSON.stringify(text)}`);
    assert.ok(text.includes('␛]0;pwned␇'), text);
  } finally {
    await client.close();
  }
});
