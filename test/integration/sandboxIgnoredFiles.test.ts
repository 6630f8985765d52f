// Build artefacts and Windows line endings, on a real sandbox: files the repository's
// .gitignore files ignore (root and nested) never enter the mutation log or the patch, while
// files git tracks still count; the model sees ignored entries marked; a CRLF file is edited
// with the patch showing only the changed line.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { patchFor } from '../../src/sandbox/workspace/patch.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

const sandboxes: TestSandbox[] = [];

after(async () => {
  for (const sandbox of sandboxes) await sandbox.stop();
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

async function sandboxWith(options: Parameters<typeof startTestSandbox>[0]): Promise<TestSandbox> {
  const sandbox = await startTestSandbox(options);
  sandboxes.push(sandbox);
  return sandbox;
}

function patchOf(sandbox: TestSandbox): Promise<string> {
  return patchFor(sandbox.host.options.store, sandbox.snapshotId, sandbox.log.mutations);
}

/** Rebuilds the workspace on this host from the snapshot and the log alone, as another worker would. */
async function rebuildFromLog(sandbox: TestSandbox): Promise<void> {
  await rm(join(sandbox.workspace, '..'), { recursive: true, force: true });
  await sandbox.host.prepare({
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run',
    log: sandbox.log,
    limits: sandbox.limits,
  });
}

const gitignore = ['# build output', 'dist/', '*.egg-info/', '.coverage', 'htmlcov/', '*.log', '!keep.log', ''].join(
  '\n',
);

const buildArtefacts = [
  'mkdir -p dist pkg.egg-info htmlcov sub src/__pycache__',
  'echo wheel > dist/pkg-1.0-py3-none-any.whl',
  'echo info > pkg.egg-info/PKG-INFO',
  'echo data > .coverage',
  'echo report > htmlcov/index.html',
  'echo noise > run.log',
  'echo kept > keep.log',
  'echo scratch > sub/scratch.tmp',
  'echo cache > src/__pycache__/app.cpython-311.pyc',
  'echo "VALUE = 2" > src/new_module.py',
].join(' && ');

test('build artefacts ignored by .gitignore (root and nested, with a negation) never reach the mutation log or the patch', async () => {
  const sandbox = await sandboxWith({
    files: { '.gitignore': gitignore, 'sub/.gitignore': '*.tmp\n', 'src/app.py': 'VALUE = 1\n' },
  });
  const outcome = await sandbox.run(buildArtefacts);
  assert.match(outcome.content, /^Exit code: 0/);
  assert.deepEqual(
    outcome.mutations.map((mutation) => mutation.path),
    ['keep.log', 'src/new_module.py'],
  );
  const patch = await patchOf(sandbox);
  assert.deepEqual(
    [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((match) => match[1]),
    ['keep.log', 'src/new_module.py'],
  );

  // Another worker rebuilds the same workspace from the log: the digests agree.
  await rebuildFromLog(sandbox);
  const after = await sandbox.run('ls dist 2>&1; echo "VALUE = 3" > src/app.py');
  assert.match(after.content, /No such file or directory/);
  assert.deepEqual(
    after.mutations.map((mutation) => mutation.path),
    ['src/app.py'],
  );
});

test('the model sees ignored entries marked, and searches leave them out unless asked for', async () => {
  const sandbox = await sandboxWith({
    files: { '.gitignore': gitignore, 'src/app.py': 'def answer():\n    return 42\n' },
  });
  await sandbox.run('mkdir -p dist && echo "def answer(): return 0" > dist/bundle.py && echo "answer" > run.log');

  const listing = await sandbox.tool('list_files', {});
  assert.match(listing.content, /^dist\/ \(ignored by \.gitignore; not listed\)$/m);
  assert.doesNotMatch(listing.content, /bundle\.py/);
  assert.match(listing.content, /^run\.log \(7 B; ignored by \.gitignore\)$/m);
  assert.match(listing.content, /^  app\.py \(\d+ B\)$/m);

  const search = await sandbox.tool('search_code', { pattern: 'answer' });
  assert.equal(search.content, 'src/app.py:1:def answer():\n[2 matches in files ignored by .gitignore are not shown]');
  const inDist = await sandbox.tool('search_code', { pattern: 'answer', path: 'dist' });
  assert.equal(inDist.content, 'dist/bundle.py:1:def answer(): return 0');
});

test('files git tracks count even where .gitignore would ignore them; untracked ones beside them do not', async () => {
  const git = (repo: string, ...args: string[]) =>
    promisify(execFile)('git', ['-C', repo, '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args]);
  const sandbox = await sandboxWith({
    files: {
      '.gitignore': 'dist/\n',
      'dist/vendored.js': 'module.exports = 1;\n',
      'src/app.js': 'module.exports = 2;\n',
    },
    prepareRepository: async (repo) => {
      await git(repo, 'init', '-q');
      await git(repo, 'add', '.gitignore', 'src/app.js');
      await git(repo, 'add', '-f', 'dist/vendored.js');
      await git(repo, 'commit', '-q', '-m', 'initial');
    },
  });
  const edit = await sandbox.tool('edit_file', { path: 'dist/vendored.js', old_string: '= 1', new_string: '= 10' });
  assert.deepEqual(
    edit.mutations.map((mutation) => mutation.path),
    ['dist/vendored.js'],
  );
  const build = await sandbox.run('echo built > dist/bundle.js');
  assert.deepEqual(build.mutations, []);
  assert.match(
    await patchOf(sandbox),
    /^diff --git a\/dist\/vendored\.js b\/dist\/vendored\.js\n[\s\S]*\+module\.exports = 10;\n$/,
  );
  await rebuildFromLog(sandbox);
  assert.match((await sandbox.run('cat dist/vendored.js')).content, /module\.exports = 10;$/);
});

test('a .gitignore that a command turns into a FIFO or a symlink to a secret is no rule file and blocks nothing', async () => {
  const sandbox = await sandboxWith({ files: { '.gitignore': '*.log\n', 'src/app.py': 'VALUE = 1\n' } });
  const fifo = await sandbox.run('rm .gitignore && mkfifo .gitignore && echo noise > run.log');
  assert.match(fifo.content, /^Exit code: 0/);
  assert.deepEqual(
    fifo.mutations.map((mutation) => [mutation.path, mutation.after === null]),
    [
      ['.gitignore', true],
      ['run.log', false],
    ],
  );
  const link = await sandbox.run('rm .gitignore && ln -s /etc/passwd .gitignore && echo more > other.log');
  assert.deepEqual(
    link.mutations.map((mutation) => mutation.path),
    ['.gitignore', 'other.log'],
  );
});

test('a CRLF file is edited with \\n text, searched without stray \\r, and its patch shows only the changed line', async () => {
  const source =
    'def total(items):\r\n    result = 0\r\n    for item in items[1:]:\r\n        result += item\r\n    return result\r\n';
  const sandbox = await sandboxWith({ files: { 'calc.py': source, 'mixed.py': 'a = 1\r\nb = 2\nc = 3\r\n' } });
  const read = await sandbox.tool('read_file', { path: 'calc.py' });
  assert.doesNotMatch(read.content, /\r/);
  const search = await sandbox.tool('search_code', { pattern: 'items' });
  assert.equal(search.content, 'calc.py:1:def total(items):\ncalc.py:3:    for item in items[1:]:');
  const edit = await sandbox.tool('edit_file', {
    path: 'calc.py',
    old_string: '    result = 0\n    for item in items[1:]:\n',
    new_string: '    result = 0\n    for item in items:\n',
  });
  assert.equal(edit.isError, false, edit.content);
  const mixed = await sandbox.tool('edit_file', {
    path: 'mixed.py',
    old_string: 'a = 1\nb = 2\nc = 3\n',
    new_string: 'a = 1\nb = 20\nc = 3\n',
  });
  assert.equal(mixed.isError, false, mixed.content);
  const patch = await patchOf(sandbox);
  assert.equal(
    patch,
    [
      'diff --git a/calc.py b/calc.py',
      '--- a/calc.py',
      '+++ b/calc.py',
      '@@ -1,5 +1,5 @@',
      ' def total(items):\r',
      '     result = 0\r',
      '-    for item in items[1:]:\r',
      '+    for item in items:\r',
      '         result += item\r',
      '     return result\r',
      'diff --git a/mixed.py b/mixed.py',
      '--- a/mixed.py',
      '+++ b/mixed.py',
      '@@ -1,3 +1,3 @@',
      ' a = 1\r',
      '-b = 2',
      '+b = 20',
      ' c = 3\r',
      '',
    ].join('\n'),
  );
});
