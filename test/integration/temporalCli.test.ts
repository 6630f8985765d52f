// The documented Temporal CLI commands (docs/temporal-cli.md), run exactly as written against a dev server, so the
// documentation cannot drift from what the product does. They run offline, as a newcomer
// without an API key runs them: against `durable-debugger dev --scripted`.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfig, projectRoot } from '../../src/config.js';
import { temporalCliPath } from '../../src/temporal/embeddedServer.js';
import { transcriptQuery } from '../../src/temporal/definitions.js';
import { checkoutCli } from '../../harness/checkoutCli.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';

let server: TestServer;
let dev: ChildProcess;
let devOutput = '';

before(async () => {
  server = await startTestServer();
  // The documented offline worker on the documented task queue, with no API key anywhere; a
  // little delay before each reply so the run is still going when it is steered.
  dev = spawn(process.execPath, [...checkoutCli, 'dev', '--scripted', '--reply-delay', '300'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      DURABLE_DEBUGGER_HOME: server.home,
      ANTHROPIC_API_KEY: '',
      ANTHROPIC_BASE_URL: '',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  dev.stdout?.on('data', (chunk: Buffer) => (devOutput += chunk.toString()));
  dev.stderr?.on('data', (chunk: Buffer) => (devOutput += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!devOutput.includes('Worker on task queue')) {
    if (Date.now() > deadline || dev.exitCode !== null) throw new Error(`dev --scripted did not start:\n${devOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});
after(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
  await server?.stop();
});

test('`dev --scripted` says that its model is scripted', () => {
  assert.match(devOutput, /SCRIPTED MODEL: model calls are answered by fixtures\/<name>\/script\.json/);
  assert.match(devOutput, /Model calls: the scripted model and the default endpoint/);
});

async function documentedCommands(): Promise<string[]> {
  const page = await readFile(join(projectRoot, 'docs', 'temporal-cli.md'), 'utf8');
  const block =
    page.split('<!-- temporal-cli-commands: begin -->')[1]?.split('<!-- temporal-cli-commands: end -->')[0] ?? '';
  const body = block.replace(/^```sh\n/m, '').replace(/```\s*$/m, '');
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
}

test('the Temporal CLI commands of docs/temporal-cli.md do what the page says', async () => {
  const commands = await documentedCommands();
  assert.ok(commands.length >= 8, 'docs/temporal-cli.md documents the commands');
  const cli = temporalCliPath(loadConfig());
  const outputs: Array<{ command: string; stdout: string }> = [];
  for (const command of commands) {
    const result = await run('bash', ['-c', command], {
      cwd: projectRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: server.address, PATH: `${dirname(cli)}:${process.env.PATH}` },
    });
    assert.equal(result.status, 0, `${command}\n${result.stdout}\n${result.stderr}`);
    outputs.push({ command, stdout: result.stdout });
  }
  const output = (fragment: string) =>
    outputs.filter((entry) => entry.command.includes(fragment)).map((entry) => entry.stdout);

  assert.match(output('query')[0] ?? '', /"phase"/);
  const [first, afterReset] = output('workflow result');
  assert.match(first ?? '', /"status":\s*"fixed"/);
  assert.match(
    first ?? '',
    /"answeredBy":\s*"scripted responses \(fixtures\/\*\/script\.json\) played by a local fake Anthropic API \(durable-debugger dev\/worker --scripted\), not Claude"/,
  );
  assert.match(afterReset ?? '', /"status":\s*"fixed"/);
  const shown = output('workflow show')[0] ?? '';
  for (const activity of [
    'snapshotRepository',
    'prepareSandbox',
    'callModel',
    'runTool',
    'runTestSuite',
    'computePatch',
    'destroySandbox',
  ]) {
    assert.match(shown, new RegExp(activity), `workflow show lists ${activity}`);
  }
  assert.ok(shown.indexOf('callModel') < shown.lastIndexOf('runTool'), 'model and tool activities appear in order');
  assert.match(output('workflow list')[0] ?? '', /fix-off-by-one/);

  // The reset made a second run of the same workflow.
  const runs: Array<{ runId: string; startTime: Date }> = [];
  for await (const run of server.client.workflow.list({ query: 'WorkflowId = "fix-off-by-one"' })) runs.push(run);
  assert.equal(runs.length, 2);
  // The hint reached the model in the first run, marked as the user's.
  const firstRun = runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime())[0]?.runId;
  const transcript = await server.client.workflow.getHandle('fix-off-by-one', firstRun).query(transcriptQuery);
  assert.match(JSON.stringify(transcript.messages), /Hint from the user who started this run: Look at the loop bounds/);
});

test('a bad --input fails the run at once, naming the field', async () => {
  const cli = temporalCliPath(loadConfig());
  const start = (id: string, input: string) =>
    run(
      cli,
      [
        'workflow',
        'execute',
        '--address',
        server.address,
        '--type',
        'debugRepository',
        '--task-queue',
        'durable-debugger',
        '--workflow-id',
        id,
        '--input',
        input,
      ],
      {},
    );
  const cases: Array<[string, string, RegExp]> = [
    ['bad-missing-repo', '{}', /repo: /],
    ['bad-types', '{"repo": "/tmp", "budgets": {"maxIterations": "ten"}}', /budgets\.maxIterations/],
    ['bad-unknown-field', '{"repo": "/tmp", "colour": "blue"}', /unknown field\(s\) "colour"/],
    ['bad-missing-path', '{"repo": "/no/such/repository"}', /repo: "\/no\/such\/repository" does not exist/],
    // Never resolved against the worker's folder (which holds fixtures/ here: it would have worked, wrongly).
    [
      'bad-relative-repo',
      '{"repo": "fixtures/01_off_by_one"}',
      /repo: "fixtures\/01_off_by_one" is a relative path: give the repository's absolute path/,
    ],
    [
      'bad-no-tests',
      `{"repo": "${join(projectRoot, 'deploy', 'sandbox-image')}"}`,
      /testCommand: no test command could be detected/,
    ],
  ];
  for (const [id, input, expected] of cases) {
    const started = Date.now();
    const result = await start(id, input);
    assert.notEqual(result.status, 0, `${id} should fail`);
    assert.match(`${result.stdout}${result.stderr}`, expected, id);
    assert.ok(Date.now() - started < 30_000, `${id} failed at once`);
  }
});

test('`dev --scripted` answers fixture runs only, and says so to a run of any other repository', async () => {
  const copy = await mkdtemp(join(tmpdir(), 'not-a-fixture-'));
  try {
    await cp(join(projectRoot, 'fixtures', '01_off_by_one'), copy, { recursive: true });
    const cli = temporalCliPath(loadConfig());
    const input = JSON.stringify({ repo: copy });
    const result = await run(
      cli,
      [
        'workflow',
        'execute',
        '--address',
        server.address,
        '--type',
        'debugRepository',
        '--task-queue',
        'durable-debugger',
        '--workflow-id',
        'not-a-fixture',
        '--input',
        input,
      ],
      {},
    );
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /"status":\s*"error"/);
    assert.match(
      result.stdout,
      /The scripted model has no scripted responses for this repository: it answers runs of the fixtures under fixtures\/ only/,
    );
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
});

/** Runs a command without blocking this process: the worker under test lives in it. */
function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
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
