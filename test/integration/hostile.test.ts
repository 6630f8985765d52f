// Hostile and bad input, end to end: what a careless user, a misbehaving model, or a
// malicious repository can throw at a run. Each case expects a clear error or a safe
// observation; test/HOSTILE_INPUTS.md lists them all with the test that covers each.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { sandboxLimitsSchema, type DebugInputJson } from '../../src/agent/input.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { projectRoot } from '../../src/config.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { ScriptStep } from '../../src/demo/script.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let scratch: string;

before(async () => {
  server = await startTestServer();
  scratch = await mkdtemp(join(tmpdir(), 'hostile-'));
  await chmod(scratch, 0o755);
});
after(async () => {
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** A copy of fixture 01 under a new name, plus extra files. */
async function repoWith(name: string, files: Record<string, string | Buffer> = {}): Promise<string> {
  const repo = join(scratch, name);
  await cp((await loadFixture('01_off_by_one')).path, repo, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(repo, path, '..'), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  return repo;
}

async function runScripted(
  repo: string,
  responses: ScriptStep[],
  input: Partial<DebugInputJson> = {},
  worker?: TestWorker,
): Promise<{ report: DebugReport; observations: string[]; worker: TestWorker }> {
  const name = repo.split('/').pop() as string;
  const own = worker ?? (await startTestWorker(server, { fake: { scripts: { [name]: { responses } } } }));
  try {
    const handle = await startDebugRun(server.client, { input: { ...input, repo }, taskQueue: own.taskQueue });
    const report = (await handle.result()) as DebugReport;
    const last = own.fake.requests.filter((request) => request.status === 200).pop();
    const messages = (last?.body.messages ?? []) as Array<{
      role: string;
      content: Array<{ type: string; content?: string }>;
    }>;
    const observations = messages.flatMap((message) =>
      message.role === 'user'
        ? message.content.filter((block) => block.type === 'tool_result').map((block) => String(block.content))
        : [],
    );
    return { report, observations, worker: own };
  } finally {
    if (!worker) await own.stop();
  }
}

async function failureOf(input: unknown, taskQueue: string): Promise<string> {
  const handle = await server.client.workflow.start('debugRepository', {
    taskQueue,
    workflowId: `hostile-${Math.random().toString(36).slice(2)}`,
    args: [input],
  });
  try {
    await handle.result();
  } catch (error) {
    assert.ok(error instanceof WorkflowFailedError);
    assert.ok(error.cause instanceof ApplicationFailure);
    assert.equal(error.cause.type, 'InvalidInput');
    return error.cause.message;
  }
  throw new Error('the run did not fail');
}

/** The sandbox's default process limit: a fork bomb stops there. */
const defaultPids = sandboxLimitsSchema.parse({}).pids;
const runTests: ScriptStep = { thought: 'Running the tests.', tool_calls: [{ name: 'run_tests', input: {} }] };

test('workflow input: a file, an unreadable folder, an oversized repository or an unknown resumeFrom fails at once, naming the field', async () => {
  const worker = await startTestWorker(server, { fake: { scripts: {} } });
  try {
    const file = join(scratch, 'just-a-file.txt');
    await writeFile(file, 'hello');
    assert.match(
      await failureOf({ repo: file }, worker.taskQueue),
      /repo: ".*just-a-file\.txt" is a file, not a folder/,
    );

    // Oversized: a sparse 300 MB file is over the 200 MB snapshot limit without filling the disk.
    const huge = await repoWith('huge_repo');
    await writeFile(join(huge, 'data.bin'), '');
    await truncate(join(huge, 'data.bin'), 300 * 1024 * 1024);
    assert.match(
      await failureOf({ repo: huge }, worker.taskQueue),
      /repo: ".*huge_repo" is too large: its files add up to more than the limit of 200 MB/,
    );

    const repo = await repoWith('resume_repo');
    assert.match(
      await failureOf({ repo, resumeFrom: 'no-such-run' }, worker.taskQueue),
      /resumeFrom: no run with workflow id "no-such-run"/,
    );
  } finally {
    await worker.stop();
  }
  // Unreadable: root reads everything, so the snapshot runs as an unprivileged user here.
  const locked = await repoWith('locked_repo');
  await chmod(locked, 0o700);
  const result = await runAsNobody(`import { SandboxHost } from '${projectRoot}/src/sandbox/sandboxHost.ts';
    import { FolderStore } from '${projectRoot}/src/sandbox/store/folderStore.ts';
    import { connectDocker } from '${projectRoot}/src/sandbox/container/container.ts';
    const store = new FolderStore('/tmp/durable-debugger-nobody-store');
    const host = new SandboxHost({ docker: connectDocker(), store, workspaceRoot: '/tmp', hostId: 'nobody', image: 'none', scope: 'none' });
    try { await host.snapshotRepository(${JSON.stringify(locked)}, undefined); console.log('read'); } catch (error) { console.log(error.message); }`);
  assert.match(result, /repo: ".*locked_repo" cannot be read \(EACCES\)/);
});

test('workflow input: with DURABLE_DEBUGGER_REPO_ROOTS, a repo outside the roots (directly, by "..", or by a symlink) is refused; one inside runs', async () => {
  const allowed = join(scratch, 'allowed-root');
  await mkdir(allowed, { recursive: true });
  const inside = await repoWith('allowed-root/inside_repo');
  const outside = await repoWith('outside_repo');
  await symlink(outside, join(allowed, 'link_to_outside'));
  const worker = await startTestWorker(server, {
    fake: { scripts: { inside_repo: { responses: [runTests] } } },
    configOverrides: { DURABLE_DEBUGGER_REPO_ROOTS: `/nonexistent-root:${allowed}` },
  });
  try {
    const refused = new RegExp(
      `is outside the allowed repository roots \\(/nonexistent-root, ${allowed}\\); put the repository under one of them`,
    );
    for (const repo of [
      outside,
      join(allowed, '..', 'outside_repo'),
      join(allowed, 'link_to_outside'),
      '/etc',
      '/no/such/folder',
    ]) {
      const message = await failureOf({ repo }, worker.taskQueue);
      assert.match(message, refused, repo);
      assert.ok(message.startsWith(`repo: "${repo}"`), message);
    }
    const { report } = await runToReport(server, worker.taskQueue, { repo: inside, budgets: { maxIterations: 1 } });
    assert.equal(report.stopCondition, 'max_iterations', 'the repository inside a root was snapshotted and debugged');
  } finally {
    await worker.stop();
  }
});

test('model output: a 10 MB edit, an edit of a binary file, and a finish without a root cause are refused', async () => {
  const repo = await repoWith('model_output_repo', {
    'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 1, 2, 3]),
  });
  const hugeEdit: ScriptStep = {
    thought: 'Rewriting the whole file.',
    tool_calls: [
      {
        name: 'edit_file',
        input: { path: 'buggy_code.py', old_string: 'largest', new_string: 'x'.repeat(10 * 1024 * 1024) },
      },
    ],
  };
  const binaryEdit: ScriptStep = {
    thought: 'Editing the logo.',
    tool_calls: [{ name: 'edit_file', input: { path: 'logo.png', old_string: 'PNG', new_string: 'GIF' } }],
  };
  const emptyFinish: ScriptStep = { thought: 'Done.', tool_calls: [{ name: 'finish', input: { root_cause: '' } }] };
  const { report, observations } = await runScripted(repo, [runTests, hugeEdit, binaryEdit, emptyFinish]);
  assert.match(observations[1] ?? '', /was \d+ bytes, over the limit of 262144/);
  assert.match(observations[2] ?? '', /"logo\.png" is a binary file/);
  assert.match(observations[3] ?? '', /Invalid input for finish: root_cause:/);
  assert.equal(report.patch, '', 'nothing was changed');
});

test('repository content: binary, huge, invalid UTF-8 and thousands of files give safe observations', async () => {
  const many = Object.fromEntries(
    Array.from({ length: 3000 }, (_, index) => [`generated/file_${index}.txt`, `${index}`]),
  );
  const repo = await repoWith('content_repo', {
    ...many,
    'image.bin': Buffer.from(Array.from({ length: 4096 }, (_, index) => index % 256)),
    'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0xff, 0xfe]),
  });
  await writeFile(join(repo, 'big.log'), Buffer.alloc(50 * 1024 * 1024, 'a'));
  const reads: ScriptStep = {
    thought: 'Looking around.',
    tool_calls: [
      { name: 'list_files', input: {} },
      { name: 'read_file', input: { path: 'image.bin' } },
      { name: 'read_file', input: { path: 'big.log' } },
      { name: 'read_file', input: { path: 'latin1.txt' } },
      { name: 'search_code', input: { pattern: 'find_max' } },
    ],
  };
  const { observations } = await runScripted(repo, [reads]);
  const [listing, binary, big, latin1, search] = observations;
  assert.match(listing ?? '', /more entries not shown; list a subfolder/);
  assert.ok((listing ?? '').split('\n').length < 520, 'the listing is capped');
  assert.match(binary ?? '', /binary file/);
  assert.match(big ?? '', /"big\.log" is 50\.0 MB, too large to read/);
  // Not UTF-8, but text: too short for the detector, read as ISO-8859-1 (see textEncoding.ts).
  assert.equal(latin1, 'latin1.txt (lines 1-2 of 2; ISO-8859-1 (detected) text, kept by edits)\n1\tcafé\n2\tÿþ');
  assert.match(search ?? '', /buggy_code\.py:4:def find_max/);
});

test('repository content: a test suite that prints 500 MB gives a capped observation', async () => {
  const repo = await repoWith('flood_repo', {
    'test_flood.py':
      'import sys\n\ndef test_flood():\n    chunk = "y" * 1048576 + "\\n"\n    for _ in range(500):\n        sys.stdout.write(chunk)\n    assert False\n',
  });
  // -s: pytest does not capture, so all 500 MB stream out of the sandbox.
  const testCommand = 'python3 -m pytest -q -s -rfE -p no:cacheprovider';
  const { observations } = await runScripted(repo, [runTests], {
    testCommand,
    sandbox: { commandTimeoutSeconds: 120 },
  });
  const flood = observations[0] ?? '';
  assert.ok(flood.length < 20_000, `observation of ${flood.length} characters`);
  assert.match(flood, /Tests: 4 passed, 2 failed/);
  assert.match(flood, /The command printed \d+ bytes; \d+ bytes from the middle were dropped/);
});

test('repository content: tests that fork endlessly, use the network, or probe the host stay in the sandbox', async () => {
  const hostServer = await listenOnHost();
  const port = (hostServer.address() as { port: number }).port;
  const repo = await repoWith('escape_repo', {
    'test_escape.py': `import os, socket, subprocess

def test_fork_bomb_is_contained():
    children = []
    try:
        for _ in range(10000):
            children.append(subprocess.Popen(["sleep", "30"]))
    except (OSError, BlockingIOError):
        pass
    # The sandbox's process limit (${defaultPids} by default) stops it short of 10,000.
    assert len(children) < ${defaultPids}, f"started {len(children)} processes"

def test_no_network_to_the_host():
    try:
        socket.create_connection(("127.0.0.1", ${port}), timeout=2)
        reached = True
    except OSError:
        reached = False
    assert not reached, "reached a server on the host"

def test_no_docker_socket():
    assert not os.path.exists("/var/run/docker.sock")

def test_no_api_key_in_the_environment():
    assert not any("ANTHROPIC" in name for name in os.environ)

def test_host_files_are_not_visible():
    assert not os.path.exists("/work") and not os.path.exists("/root/.pyenv")
`,
  });
  try {
    const { observations } = await runScripted(repo, [runTests], { sandbox: { commandTimeoutSeconds: 60 } });
    const result = observations[0] ?? '';
    assert.match(result, /Tests: 9 passed, 1 failed/, result.slice(0, 2000));
    assert.match(result, /test_max_at_the_end/);
  } finally {
    hostServer.close();
  }
});

test('the API key never appears in workflow history, logs or the report', async () => {
  const canary = `sk-ant-canary-${Math.random().toString(36).slice(2)}`;
  const logs: string[] = [];
  const originalError = console.error;
  const originalWarn = console.warn;
  console.error = (...args: unknown[]) => logs.push(args.map(String).join(' '));
  console.warn = (...args: unknown[]) => logs.push(args.map(String).join(' '));
  const worker = await startTestWorker(server, {
    fake: {
      scripts: { secret_repo: (await loadFixture('01_off_by_one')).script },
      faultPlan: (number) => (number === 2 ? 'unauthorized' : null),
    },
    apiKey: canary,
  });
  try {
    const repo = await repoWith('secret_repo');
    // The run names its model endpoint, as our CLI does: a fingerprint of base URL and key, never the key.
    const modelEndpoint = worker.worker.modelEndpoint as string;
    const handle = await startDebugRun(server.client, { input: { repo, modelEndpoint }, taskQueue: worker.taskQueue });
    const report = (await handle.result()) as DebugReport;
    assert.equal(report.status, 'error');
    assert.ok(
      worker.fake.requests.every((request) => request.apiKey === canary),
      `the key was sent to the API: ${JSON.stringify(worker.fake.requests.map((request) => request.apiKey))}`,
    );
    const history = JSON.stringify(await handle.fetchHistory());
    assert.ok(!history.includes(canary), 'the key is in the workflow history');
    assert.ok(
      history.includes(`${worker.taskQueue}/model/${modelEndpoint}`),
      'the model call went to the endpoint’s task queue',
    );
    assert.ok(!JSON.stringify(report).includes(canary), 'the key is in the report');
    assert.ok(!logs.join('\n').includes(canary), 'the key is in a log line');
    assert.ok(logs.length > 0, 'the failed model call was logged');
  } finally {
    console.error = originalError;
    console.warn = originalWarn;
    await worker.stop();
  }
});

function listenOnHost(): Promise<Server> {
  return new Promise((resolve) => {
    const listener = createServer((socket) => socket.end('hello from the host\n'));
    listener.listen(0, '127.0.0.1', () => resolve(listener));
  });
}

/** Runs a TypeScript snippet as user nobody, for checks that root's privileges would hide. */
function runAsNobody(source: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
      uid: 65534,
      gid: 65534,
      cwd: projectRoot,
      env: { PATH: process.env.PATH, HOME: '/tmp' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(output));
  });
}
