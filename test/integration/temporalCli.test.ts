// The README's Temporal CLI commands, run exactly as written against a dev server, so the
// documentation cannot drift from what the product does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import { temporalCliPath } from '../../src/temporal/embeddedServer.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../support/harness.js';

let server: TestServer;
let worker: TestWorker;

before(async () => {
  server = await startTestServer();
  // The documented task queue; a little model latency so the run is still going when it is steered.
  worker = await startTestWorker(server, { fake: { scripts: scriptsByName(await loadFixtures()), latencyMs: 300 }, taskQueue: 'durable-debugger' });
});
after(async () => {
  await worker?.stop();
  await server?.stop();
});

async function documentedCommands(): Promise<string[]> {
  const readme = await readFile(join(projectRoot, 'README.md'), 'utf8');
  const block = readme.split('<!-- temporal-cli-commands: begin -->')[1]?.split('<!-- temporal-cli-commands: end -->')[0] ?? '';
  const body = block.replace(/^```sh\n/m, '').replace(/```\s*$/m, '');
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

test('the README’s Temporal CLI commands do what the README says', async () => {
  const commands = await documentedCommands();
  assert.ok(commands.length >= 8, 'the README documents the commands');
  const cli = temporalCliPath(server.config());
  const outputs: Array<{ command: string; stdout: string }> = [];
  for (const command of commands) {
    const result = await run('bash', ['-c', command], {
      cwd: projectRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, PATH: `${dirname(cli)}:${process.env.PATH}` },
    });
    assert.equal(result.status, 0, `${command}\n${result.stdout}\n${result.stderr}`);
    outputs.push({ command, stdout: result.stdout });
  }
  const output = (fragment: string) => outputs.filter((entry) => entry.command.includes(fragment)).map((entry) => entry.stdout);

  assert.match(output('query')[0] ?? '', /"phase"/);
  const [first, afterReset] = output('workflow result');
  assert.match(first ?? '', /"status":\s*"fixed"/);
  assert.match(afterReset ?? '', /"status":\s*"fixed"/);
  const shown = output('workflow show')[0] ?? '';
  for (const activity of ['snapshotRepository', 'prepareSandbox', 'callModel', 'runTool', 'runTestSuite', 'computePatch', 'destroySandbox']) {
    assert.match(shown, new RegExp(activity), `workflow show lists ${activity}`);
  }
  assert.ok(shown.indexOf('callModel') < shown.lastIndexOf('runTool'), 'model and tool activities appear in order');
  assert.match(output('workflow list')[0] ?? '', /fix-off-by-one/);

  // The hint reached the model, marked as the user's.
  const sent = JSON.stringify(worker.fake.requests.map((request) => request.body.messages));
  assert.match(sent, /Hint from the user who started this run: Look at the loop bounds/);
  // The reset made a second run of the same workflow.
  const runs = [];
  for await (const run of server.client.workflow.list({ query: 'WorkflowId = "fix-off-by-one"' })) runs.push(run.runId);
  assert.equal(runs.length, 2);
});

test('a bad --input fails the run at once, naming the field', async () => {
  const cli = temporalCliPath(server.config());
  const start = (id: string, input: string) =>
    run(cli, ['workflow', 'execute', '--address', server.address, '--type', 'debugRepository', '--task-queue', 'durable-debugger', '--workflow-id', id, '--input', input], {});
  const cases: Array<[string, string, RegExp]> = [
    ['bad-missing-repo', '{}', /repo: /],
    ['bad-types', '{"repo": "/tmp", "budgets": {"maxIterations": "ten"}}', /budgets\.maxIterations/],
    ['bad-unknown-field', '{"repo": "/tmp", "colour": "blue"}', /unknown field\(s\) "colour"/],
    ['bad-missing-path', '{"repo": "/no/such/repository"}', /repo: "\/no\/such\/repository" does not exist/],
    ['bad-no-tests', `{"repo": "${join(projectRoot, 'sandbox')}"}`, /testCommand: no test command could be detected/],
  ];
  for (const [id, input, expected] of cases) {
    const started = Date.now();
    const result = await start(id, input);
    assert.notEqual(result.status, 0, `${id} should fail`);
    assert.match(`${result.stdout}${result.stderr}`, expected, id);
    assert.ok(Date.now() - started < 30_000, `${id} failed at once`);
  }
});

/** Runs a command without blocking this process: the worker under test lives in it. */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
