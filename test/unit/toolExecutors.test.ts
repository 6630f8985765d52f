// The sandbox's executor map, keyed by tool name: it covers exactly the tools the registry says
// the sandbox executes, and dispatches each call to its tool's executor. These run on a plain
// folder (no container): commands go through the context's exec, here a recorder.
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxLimitsSchema } from '../../src/agent/input.js';
import { defaultObservationLimits } from '../../src/agent/observations.js';
import type { SandboxSettings } from '../../src/agent/sandboxProtocol.js';
import { formatTestSummary } from '../../src/agent/testResults.js';
import { isSandboxTool, toolNames, tools } from '../../src/agent/tools.js';
import type { ExecResult } from '../../src/sandbox/container/exec.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { executeTool, toolExecutors, type ToolContext } from '../../src/sandbox/toolExecutors.js';
import { WorkspaceFolder } from '../../src/sandbox/workspace/workspaceFolder.js';

let root: string;
let folder: WorkspaceFolder;
const settings: SandboxSettings = {
  testCommand: 'python -m pytest -q',
  allowTestEdits: false,
  limits: sandboxLimitsSchema.parse({}),
  observation: defaultObservationLimits,
};

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tool-executors-'));
  await mkdir(join(root, 'workspace', 'tests'), { recursive: true });
  await writeFile(join(root, 'workspace', 'stats.py'), 'def mean(xs):\n    return sum(xs) / len(xs)\n');
  await writeFile(join(root, 'workspace', 'tests', 'test_stats.py'), 'def test_mean():\n    assert True\n');
  folder = new WorkspaceFolder(join(root, 'workspace'), new FolderStore(join(root, 'store')), {
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
  });
});
after(() => rm(root, { recursive: true, force: true }));

async function contextWith(commands: string[] = []): Promise<ToolContext> {
  const exec = async (command: string): Promise<ExecResult> => {
    commands.push(command);
    return {
      output: '1 passed in 0.01s\n',
      exitCode: 0,
      timedOut: false,
      durationMs: 1,
      outputBytes: 18,
      droppedBytes: 0,
    };
  };
  return { callId: 'call-1', folder, before: await folder.read(), settings, exec };
}

test('the executor map covers exactly the tools whose executor is the sandbox', () => {
  const sandboxTools = toolNames.filter(isSandboxTool).sort();
  assert.deepEqual(Object.keys(toolExecutors).sort(), sandboxTools);
  assert.deepEqual(
    toolNames.filter((name) => !isSandboxTool(name)),
    ['finish'],
  );
  assert.equal(tools.finish.executor, 'workflow');
});

test('a call is dispatched to its tool’s executor', async () => {
  const context = await contextWith();
  const read = await executeTool({ name: 'read_file', input: { path: 'stats.py', start_line: 2 } }, context);
  assert.equal(read.isError, false);
  assert.match(read.content, /return sum\(xs\) \/ len\(xs\)/);
  assert.doesNotMatch(read.content, /def mean/);
  assert.equal(read.digest, context.before.digest);
  assert.deepEqual(read.mutations, []);
});

test('a tool the sandbox does not execute, or an unknown one, is an error the model can read', async () => {
  const context = await contextWith();
  for (const name of ['finish', 'delete_everything', 'constructor']) {
    const outcome = await executeTool({ name, input: {} }, context);
    assert.equal(outcome.isError, true);
    assert.equal(outcome.content, `The tool "${name}" does not run in the sandbox.`);
  }
});

test('a path outside the workspace is refused as an error, before any command runs', async () => {
  const commands: string[] = [];
  const context = await contextWith(commands);
  const read = await executeTool({ name: 'read_file', input: { path: '../outside.txt' } }, context);
  assert.equal(read.isError, true);
  const tests = await executeTool({ name: 'run_tests', input: { path: '../../etc/passwd' } }, context);
  assert.equal(tests.isError, true);
  assert.deepEqual(commands, []);
});

test('run_tests runs the test command on the target and leads with the summary', async () => {
  const commands: string[] = [];
  const outcome = await executeTool(
    { name: 'run_tests', input: { path: 'tests/test_stats.py::test_mean' } },
    await contextWith(commands),
  );
  assert.deepEqual(commands, [`python -m pytest -q 'tests/test_stats.py::test_mean'`]);
  assert.equal(outcome.testSummary?.passed, 1);
  assert.ok(outcome.testSummary && outcome.content.startsWith(formatTestSummary(outcome.testSummary)));
  assert.match(outcome.content, /Exit code: 0/);
});

test('an edit of a test file is refused by the guardrail when test edits are off', async () => {
  const context = await contextWith();
  const outcome = await executeTool(
    { name: 'edit_file', input: { path: 'tests/test_stats.py', old_string: 'assert True', new_string: 'pass' } },
    context,
  );
  assert.equal(outcome.refusedBy, 'test-file-guardrail');
  assert.equal(outcome.isError, true);
  assert.deepEqual(outcome.mutations, []);
});
