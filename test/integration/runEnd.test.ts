// The end of a run, on the real dev server with real Docker: every run ends with a report, every
// payload stays under Temporal's 2 MB limit (a conversation or a patch that would pass it), and
// the report's "tests after" is the workflow's own run of the whole suite, in a fresh sandbox.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import type { DebugInputJson } from '../../src/agent/input.js';
import { conversationByteBudget, jsonBytes, temporalPayloadLimitBytes } from '../../src/agent/payloads.js';
import type { DebugReport } from '../../src/agent/report.js';
import { startDebugRun } from '../../src/client.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { Script, ScriptStep } from '../../src/demo/script.js';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { sha256 } from '../../src/sandbox/workspace/tree.js';
import { transcriptQuery } from '../../src/temporal/definitions.js';
import {
  startTestServer,
  startTestWorker,
  startWorkerProcess,
  uniqueTaskQueue,
  type TestServer,
} from '../../harness/devStack.js';
import { runCli } from '../support/cli.js';

let server: TestServer;
let parent: string;

before(async () => {
  server = await startTestServer();
  parent = await mkdtemp(join(tmpdir(), 'run-end-'));
  await chmod(parent, 0o755);
});
after(async () => {
  await server?.stop();
  await rm(parent, { recursive: true, force: true });
});

/** A copy of fixture 01 under its own name (scripts are chosen by repository name), plus extra files. */
async function repository(name: string, extraFiles: Record<string, string> = {}): Promise<string> {
  const repo = join(parent, name);
  await cp((await loadFixture('01_off_by_one')).path, repo, { recursive: true });
  for (const [path, content] of Object.entries(extraFiles)) await writeFile(join(repo, path), content);
  return repo;
}

/** Runs `repo` with a script of its own; `whileServed` runs before its worker stops (queries of a closed run replay on a worker). */
async function run(
  repo: string,
  responses: Script['responses'],
  input: Partial<DebugInputJson> = {},
  whileServed?: (handle: WorkflowHandle) => Promise<void>,
) {
  const name = repo.split('/').at(-1) as string;
  const worker = await startTestWorker(server, { fake: { scripts: { [name]: { responses } } } });
  try {
    const handle = await startDebugRun(server.client, { input: { ...input, repo }, taskQueue: worker.taskQueue });
    const report = (await handle.result()) as DebugReport;
    await whileServed?.(handle);
    return { report, handle, fake: worker.fake };
  } finally {
    await worker.stop();
  }
}

/** Every payload of the run's history, decoded: activity inputs and results, summaries, the model's messages. */
async function historyPayloads(handle: WorkflowHandle): Promise<string[]> {
  return [...JSON.stringify(await handle.fetchHistory()).matchAll(/"data":"([^"]+)"/g)].map(([, data]) =>
    Buffer.from(data as string, 'base64').toString('utf8'),
  );
}

const fixLoop: ScriptStep = {
  thought: 'The loop skips the last element.',
  tool_calls: [
    {
      name: 'edit_file',
      input: { path: 'buggy_code.py', old_string: 'range(len(items) - 1)', new_string: 'range(len(items))' },
    },
  ],
};
const finish: ScriptStep = {
  thought: 'Fixed.',
  tool_calls: [{ name: 'finish', input: { root_cause: 'off-by-one in the loop of find_max' } }],
};

test('a conversation that would pass 2 MB is compacted under its limit, and the run ends fixed', async () => {
  // 800 lines of 1,200 characters: each read returns close to 1 MB.
  const line = (index: number) => `${String(index).padStart(4, '0')} ${'data '.repeat(239)}`;
  const repo = await repository('big_conversation', {
    'data.txt': `${Array.from({ length: 800 }, (_, index) => line(index)).join('\n')}\n`,
  });
  const readData: ScriptStep = {
    thought: 'Reading the data file.',
    tool_calls: [{ name: 'read_file', input: { path: 'data.txt' } }],
  };
  let storedBytes = 0;
  const { report, fake } = await run(
    repo,
    [readData, readData, readData, fixLoop, finish],
    // Continue-as-new every two iterations: its input carries the conversation too.
    { contextWindowTokens: 1_000_000, observation: { maxBytes: 1_000_000, maxLines: 1_000 }, continueAsNewEvery: 2 },
    async (handle) => {
      storedBytes = jsonBytes((await handle.query(transcriptQuery)).messages);
    },
  );
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.ok(report.compactions >= 1, 'the conversation was compacted');
  assert.ok(report.workflowRuns >= 2, 'the run continued as new');
  assert.deepEqual(
    fake.rejected.map((request) => request.error),
    [],
  );
  type Sent = Array<{ role: string; content: Array<{ type: string; content?: string }> }>;
  const sent = fake.requests
    .filter((request) => request.status === 200)
    .map((request) => request.body.messages as Sent);
  // Each request shows the model its newest observation whole: close to 3 MB in all, never more than the budget at once.
  const newest = sent.map((messages) =>
    (messages.at(-1)?.content ?? []).reduce((sum, block) => sum + (block.content?.length ?? 0), 0),
  );
  assert.ok(newest.reduce((sum, bytes) => sum + bytes, 0) > 2_500_000, `observations in all: ${newest}`);
  assert.ok(
    Math.max(...sent.map(jsonBytes)) <= conversationByteBudget + 10_000,
    `largest request: ${Math.max(...sent.map(jsonBytes))} bytes`,
  );
  assert.ok(
    storedBytes > 0 && storedBytes <= conversationByteBudget,
    `the stored conversation is within its limit (${storedBytes} bytes)`,
  );
});

test('a patch larger than 2 MB is kept in the content store; the report shows its beginning and `result --patch` prints all of it', async () => {
  const big = `${Array.from({ length: 30_000 }, (_, index) => `generated row ${index} ${'x'.repeat(80)}`).join('\n')}\n`;
  const repo = await repository('big_patch', { 'generated.txt': big });
  const regenerate: ScriptStep = {
    thought: 'The generated file is stale; replace it.',
    tool_calls: [{ name: 'write_file', input: { path: 'generated.txt', content: 'regenerated\n' } }],
  };
  const { report, handle } = await run(repo, [regenerate, fixLoop, finish]);
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.ok(report.fullPatch, 'the whole patch is referenced');
  assert.ok(report.fullPatch.bytes > temporalPayloadLimitBytes);
  assert.ok(jsonBytes(report) < 200_000, `the report stays small (${jsonBytes(report)} bytes)`);
  assert.match(report.patch, /^diff --git a\/buggy_code\.py b\/buggy_code\.py/);
  assert.match(report.patch, /more bytes of this patch are not shown/);

  const printed = await runCli(server, ['result', handle.workflowId, '--patch']);
  assert.equal(printed.code, 0, printed.stderr);
  assert.equal(Buffer.byteLength(printed.stdout), report.fullPatch.bytes);
  // The whole patch applies to a fresh copy of the repository and gives the fixed files.
  const copy = join(parent, 'big_patch_applied');
  await cp(repo, copy, { recursive: true });
  await writeFile(join(copy, 'fix.patch'), printed.stdout);
  await promisify(execFile)('git', ['apply', 'fix.patch'], { cwd: copy });
  assert.equal(await readFile(join(copy, 'generated.txt'), 'utf8'), 'regenerated\n');
  assert.match(await readFile(join(copy, 'buggy_code.py'), 'utf8'), /range\(len\(items\)\):/);
});

test('a changed file whose store entry is damaged ends the run at once, with a report that names it (for the fresh sandbox, for the patch)', async () => {
  const repo = await repository('patch_fails');
  const fixed = (await readFile(join(repo, 'buggy_code.py'), 'utf8')).replace(
    'range(len(items) - 1):',
    'range(len(items)):  # every item',
  );
  // The store already holds the fixed file's entry, damaged (a disk's fault): the file can be
  // captured (the store keeps what it has), but not read back.
  const blob = sha256(Buffer.from(fixed));
  await mkdir(join(server.home, 'store', 'blobs', blob.slice(0, 2)), { recursive: true });
  await writeFile(join(server.home, 'store', 'blobs', blob.slice(0, 2), blob), 'damaged\n');
  const fix: ScriptStep = {
    thought: 'The loop skips the last element.',
    tool_calls: [
      {
        name: 'edit_file',
        input: {
          path: 'buggy_code.py',
          old_string: 'range(len(items) - 1):',
          new_string: 'range(len(items)):  # every item',
        },
      },
    ],
  };
  const { report, handle } = await run(repo, [fix, finish]);
  // The verification's fresh sandbox is made from the store too: without the fixed file, no fix is verified.
  const damaged = new RegExp(`Blob ${blob} in the content store is damaged`);
  assert.equal(report.status, 'error');
  assert.match(report.stopDetail ?? '', damaged);
  assert.equal(report.patch, '');
  assert.deepEqual(
    report.problems.map((problem) => problem.replace(/: .*/, '')),
    ['the final test run failed', 'the patch could not be computed'],
  );
  assert.match(report.problems[1] as string, damaged);
  // Each activity that read the entry failed on its first attempt, and was not tried again.
  const events = (await handle.fetchHistory()).events ?? [];
  const typeOf = new Map(
    events.map((event) => [String(event.eventId), event.activityTaskScheduledEventAttributes?.activityType?.name]),
  );
  const failed = events.flatMap((event) => {
    const failure = event.activityTaskFailedEventAttributes;
    if (!failure) return [];
    const started = events.find((each) => String(each.eventId) === String(failure.startedEventId));
    return [
      {
        activity: typeOf.get(String(failure.scheduledEventId)),
        type: failure.failure?.applicationFailureInfo?.type,
        attempt: started?.activityTaskStartedEventAttributes?.attempt,
      },
    ];
  });
  assert.deepEqual(failed, [
    { activity: 'prepareSandbox', type: 'DamagedContent', attempt: 1 },
    { activity: 'prepareSandbox', type: 'DamagedContent', attempt: 1 },
    { activity: 'computePatch', type: 'DamagedContent', attempt: 1 },
  ]);
});

test("the report's tests after are the workflow's run of the whole suite, not the model's run of one test", async () => {
  const repo = await repository('targeted_tests');
  const runOne: ScriptStep = {
    thought: 'Running one test.',
    tool_calls: [{ name: 'run_tests', input: { path: 'test_buggy_code.py::test_max_at_the_start' } }],
  };
  const { report } = await run(repo, [runOne], { budgets: { maxIterations: 1 } });
  assert.equal(report.status, 'budget_exhausted');
  assert.deepEqual(
    { passed: report.testsAfter?.passed, failed: report.testsAfter?.failed },
    { passed: report.testsBefore?.passed, failed: report.testsBefore?.failed },
  );
  assert.equal(report.testsAfter?.failed, 1);
});

test('a fix the patch does not hold is not fixed: bytecode a command left in __pycache__ does not pass the verification', async () => {
  const repo = await repository('bytecode_left_behind');
  // A same-size fix compiled into __pycache__ with the old file's mtime, then the old file put back:
  // the workspace is unchanged (an empty patch), and Python, which trusts mtime and size, runs the fix.
  const plantBytecode: ScriptStep = {
    thought: 'Compiling a fixed copy.',
    tool_calls: [
      {
        name: 'run_command',
        input: {
          command: [
            'cp -p buggy_code.py /tmp/original.py',
            "sed -i 's/len(items) - 1/len(items) + 0/' buggy_code.py",
            'touch -r /tmp/original.py buggy_code.py',
            'python3 -c \'import py_compile; py_compile.compile("buggy_code.py", doraise=True)\'',
            'cp /tmp/original.py buggy_code.py',
            'touch -r /tmp/original.py buggy_code.py',
            'python3 -m pytest -q',
          ].join(' && '),
        },
      },
    ],
  };
  const { report, handle } = await run(repo, [plantBytecode, finish], {
    budgets: { maxIterations: 3 },
    allowCommands: true,
  });
  // The command's own test run passed on the planted bytecode: the cheat worked in the model's sandbox.
  const payloads = await historyPayloads(handle);
  assert.ok(
    payloads.some((payload) => /5 passed in/.test(payload)),
    "the planted bytecode passed the tests in the model's sandbox",
  );
  assert.notEqual(report.status, 'fixed', report.stopDetail);
  assert.equal(report.patch, '');
  assert.equal(report.testsAfter?.failed, report.testsBefore?.failed);
  // The Web UI shows the fresh sandbox's preparation, and the model is told why its own run passed.
  assert.ok(payloads.some((payload) => payload.startsWith('"prepare a fresh sandbox on ')));
  assert.ok(payloads.some((payload) => payload.includes('The suite ran in a fresh sandbox')));
});

test('a fix the patch leaves out is not fixed: a binary file a command rewrote is undone before the verification', async () => {
  const repo = join(parent, 'binary_answer_rewritten');
  await mkdir(repo);
  await writeFile(join(repo, 'calc.py'), 'def add(a, b):\n    return a - b\n');
  await writeFile(
    join(repo, 'test_calc.py'),
    [
      'from pathlib import Path',
      'from calc import add',
      '',
      '',
      'def expected():',
      '    return int.from_bytes((Path(__file__).parent / "answers.bin").read_bytes()[1:], "big", signed=True)',
      '',
      '',
      'def test_add():',
      '    assert add(2, 3) == expected()',
      '',
      '',
      'def test_zero():',
      '    assert add(0, 0) == 0',
      '',
    ].join('\n'),
  );
  await writeFile(join(repo, 'answers.bin'), Buffer.from([0, 0, 0, 0, 5]));
  // The test's expected answer rewritten to what the bug gives: a binary file, which the patch leaves out.
  const rewriteAnswer: ScriptStep = {
    thought: 'Updating the expected answer.',
    tool_calls: [
      {
        name: 'run_command',
        input: {
          command:
            'python3 -c \'import pathlib; pathlib.Path("answers.bin").write_bytes(b"\\0" + (-1).to_bytes(4, "big", signed=True))\' && python3 -m pytest -q',
        },
      },
    ],
  };
  const { report, handle } = await run(repo, [rewriteAnswer, finish], {
    budgets: { maxIterations: 3 },
    allowCommands: true,
  });
  const payloads = await historyPayloads(handle);
  assert.ok(
    payloads.some((payload) => /2 passed in/.test(payload)),
    "the rewritten answer passed the tests in the model's sandbox",
  );
  assert.notEqual(report.status, 'fixed', report.stopDetail);
  assert.equal(report.patch, '');
  assert.deepEqual(report.leftOutOfPatch, ['answers.bin']);
  assert.equal(report.testsAfter?.failed, report.testsBefore?.failed);
  // The model is told what was undone.
  assert.ok(payloads.some((payload) => payload.includes('answers.bin') && payload.includes('undone')));
});

test('a test that leaves a `chmod 000` folder in the workspace breaks nothing, with a worker that is not root', async () => {
  const repo = join(parent, 'locked_folder');
  await mkdir(repo);
  await writeFile(join(repo, 'calc.py'), 'def add(a, b):\n    return a - b\n');
  await writeFile(
    join(repo, 'test_calc.py'),
    [
      'import os',
      'from calc import add',
      '',
      '',
      'def test_add():',
      '    os.makedirs("scratch/inner", exist_ok=True)',
      '    with open("scratch/inner/data.txt", "w") as file:',
      '        file.write("left behind")',
      '    os.chmod("scratch", 0)',
      '    assert add(2, 3) == 5',
      '',
    ].join('\n'),
  );
  await chmod(repo, 0o755);
  const responses: Script['responses'] = [
    {
      thought: 'add subtracts.',
      tool_calls: [{ name: 'edit_file', input: { path: 'calc.py', old_string: 'a - b', new_string: 'a + b' } }],
    },
    { thought: 'Fixed.', tool_calls: [{ name: 'finish', input: { root_cause: 'add subtracted' } }] },
  ];
  const fake = new FakeAnthropicApi({ scripts: { locked_folder: { responses } } });
  await fake.start();
  // As root, the worker runs as uid 1000 (in the docker group); otherwise it is already not root.
  const home = await mkdtemp(join(tmpdir(), 'run-end-worker-'));
  const root = process.getuid?.() === 0;
  const user = root ? { uid: 1000, gid: (await stat('/var/run/docker.sock')).gid } : undefined;
  if (user) await chown(home, user.uid, user.gid);
  const taskQueue = uniqueTaskQueue('locked');
  const worker = await startWorkerProcess(
    { address: server.address, home },
    {
      taskQueue,
      hostId: 'not-root',
      fakeUrl: fake.url,
      user,
      env: { HOME: home, DURABLE_DEBUGGER_WORKSPACES: join(home, 'workspaces') },
    },
  );
  try {
    const handle = await startDebugRun(server.client, { input: { repo }, taskQueue });
    const report = (await handle.result()) as DebugReport;
    assert.equal(report.status, 'fixed', `${report.stopDetail}\n${worker.output()}`);
    assert.equal(report.testsBefore?.failed, 1);
    assert.equal(report.testsAfter?.failed, 0);
    assert.match(report.patch, /\+    return a \+ b/);
    assert.doesNotMatch(report.patch, /scratch/);
    assert.deepEqual(report.problems, []);
    // The sandbox's folder was removed, locked folder and all.
    assert.deepEqual(await readdir(join(home, 'workspaces')), []);
  } finally {
    await worker.stop();
    await fake.stop();
    await rm(home, { recursive: true, force: true });
  }
});

test('an environment setup that leaves root-owned files behind: a worker that is not root cleans up at once, without EACCES or a retry', async () => {
  const repo = join(parent, 'setup_leaves_root_files');
  await mkdir(repo);
  await writeFile(join(repo, 'calc.py'), 'def add(a, b):\n    return a - b\n');
  await writeFile(join(repo, 'test_calc.py'), 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n');
  // The setup runs as root in the build container, on a copy of the repository: what it makes there is root's.
  await writeFile(
    join(repo, 'durable-debugger.json'),
    JSON.stringify({
      // A token of this test run: the image is built now, never reused from an earlier run.
      setup: [
        `mkdir -p build/cache/inner && echo ${randomUUID()} > build/cache/inner/data && chmod 755 build && touch built.txt`,
      ],
    }),
  );
  await chmod(repo, 0o755);
  const responses: Script['responses'] = [
    {
      thought: 'add subtracts.',
      tool_calls: [{ name: 'edit_file', input: { path: 'calc.py', old_string: 'a - b', new_string: 'a + b' } }],
    },
    { thought: 'Fixed.', tool_calls: [{ name: 'finish', input: { root_cause: 'add subtracted' } }] },
  ];
  const fake = new FakeAnthropicApi({ scripts: { setup_leaves_root_files: { responses } } });
  await fake.start();
  const home = await mkdtemp(join(tmpdir(), 'run-end-setup-worker-'));
  const root = process.getuid?.() === 0;
  const socket = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
  const user = root ? { uid: 1000, gid: (await stat(socket)).gid } : undefined;
  if (user) await chown(home, user.uid, user.gid);
  const taskQueue = uniqueTaskQueue('setup-root-files');
  let built: string | null = null;
  const worker = await startWorkerProcess(
    { address: server.address, home },
    {
      taskQueue,
      hostId: 'not-root-setup',
      fakeUrl: fake.url,
      user,
      env: { HOME: home, DURABLE_DEBUGGER_WORKSPACES: join(home, 'workspaces') },
    },
  );
  try {
    const handle = await startDebugRun(server.client, { input: { repo }, taskQueue });
    const report = (await handle.result()) as DebugReport;
    built = report.environment?.image ?? null;
    assert.equal(report.status, 'fixed', `${report.stopDetail}\n${worker.output()}`);
    // Built once by this run: a first attempt that failed its clean-up would leave a retry reusing it.
    assert.equal(report.environment?.reused, false, 'the environment was built by this run, in one attempt');
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? [])
      .filter((event) => event.activityTaskStartedEventAttributes)
      .map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 1);
    assert.deepEqual(
      attempts.filter((attempt) => attempt > 1),
      [],
      'no activity was retried',
    );
    assert.doesNotMatch(worker.output(), /EACCES|EPERM/);
    // The build's copy of the repository is gone, root's files and all.
    assert.deepEqual(await readdir(join(home, 'environment-builds', 'env-builds')).catch(() => []), []);
  } finally {
    if (built)
      await connectDocker()
        .getImage(built)
        .remove({ force: true })
        .catch(() => undefined);
    await worker.stop();
    await fake.stop();
    await rm(home, { recursive: true, force: true });
  }
});
