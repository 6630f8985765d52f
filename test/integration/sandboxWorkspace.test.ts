// The workspace, on a real sandbox: every path the model gives stays inside it, a retried
// mutation is applied once, and a workspace that differs from the run's log (a reset, another
// host) is rebuilt from the snapshot and the log, for the host tools and the container alike.
import assert from 'node:assert/strict';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SandboxNeedsPrepareError } from '../../src/sandbox/sandboxHost.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

const outsideFolder = join(tmpdir(), `durable-debugger-outside-${process.pid}`);
const outsideFile = join(outsideFolder, 'secret.txt');
const probeInEtc = '/etc/durable-debugger-confinement-probe';
let sandbox: TestSandbox;

before(async () => {
  await mkdir(outsideFolder, { recursive: true });
  await writeFile(outsideFile, 'SECRET=do-not-read\n');
  sandbox = await startTestSandbox({
    files: { 'src/app.py': 'a = 1\n', 'notes.txt': 'first line\n' },
    symlinks: { etc_link: '/etc', secret_link: outsideFile, app_link: 'src/app.py' },
  });
});

after(async () => {
  await sandbox?.stop();
  await rm(outsideFolder, { recursive: true, force: true });
  await rm(probeInEtc, { force: true });
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

const refusal =
  /is an absolute path|points outside the repository|leads outside the repository|leads nowhere inside the repository/;

/** Each of list/read/search/edit/write through `path` is refused with a clear message and changes nothing. */
async function assertRefusedEverywhere(path: string): Promise<void> {
  const digest = sandbox.log.digest;
  const attempts = {
    list_files: { path },
    read_file: { path },
    search_code: { pattern: 'root', path },
    edit_file: { path, old_string: 'zz-not-there', new_string: 'changed' },
    write_file: { path: `${path}/durable-debugger-confinement-probe`, content: 'written outside\n' },
  };
  for (const [name, input] of Object.entries(attempts)) {
    const outcome = await sandbox.tool(name, input);
    assert.equal(outcome.isError, true, `${name} ${input.path} was not refused: ${outcome.content}`);
    assert.match(outcome.content, refusal, `${name} ${input.path}: ${outcome.content}`);
    assert.deepEqual(outcome.mutations, []);
  }
  assert.equal(sandbox.log.digest, digest);
  assert.equal(await readFile(outsideFile, 'utf8'), 'SECRET=do-not-read\n');
  await assert.rejects(stat(probeInEtc), { code: 'ENOENT' });
}

test('"../" paths are refused', async () => {
  await assertRefusedEverywhere('../outside');
  await assertRefusedEverywhere('src/../../etc');
  const read = await sandbox.tool('read_file', { path: `../../../../../..${outsideFile}` });
  assert.match(read.content, /points outside the repository/);
});

test('absolute paths are refused, even ones inside the workspace', async () => {
  await assertRefusedEverywhere('/etc');
  await assertRefusedEverywhere(sandbox.workspace);
  const read = await sandbox.tool('read_file', { path: '/etc/passwd' });
  assert.match(read.content, /"\/etc\/passwd" is an absolute path\. Use a path relative to the repository root/);
});

test('a symlink in the repository that points to /etc (or any file outside) is refused', async () => {
  await assertRefusedEverywhere('etc_link');
  const passwd = await sandbox.tool('read_file', { path: 'etc_link/passwd' });
  assert.match(
    passwd.content,
    /"etc_link\/passwd" leads outside the repository \(through a symlink\), so it is refused\./,
  );
  for (const [name, input] of [
    ['read_file', { path: 'secret_link' }],
    ['edit_file', { path: 'secret_link', old_string: 'SECRET', new_string: 'STOLEN' }],
    ['write_file', { path: 'secret_link', content: 'overwritten\n' }],
  ] as const) {
    const outcome = await sandbox.tool(name, input);
    assert.equal(outcome.isError, true);
    assert.match(outcome.content, /leads outside the repository/);
    assert.doesNotMatch(outcome.content, /do-not-read/);
  }
  assert.equal(await readFile(outsideFile, 'utf8'), 'SECRET=do-not-read\n');
  // A symlink that stays inside is fine.
  const inside = await sandbox.tool('read_file', { path: 'app_link' });
  assert.match(inside.content, /1\ta = 1/);
});

test('a symlink made by a command during the run is refused', async () => {
  const made = await sandbox.run(
    `ln -s /etc made_link && ln -s ${outsideFile} made_secret_link && mkdir -p deep && ln -s ../../.. deep/up`,
  );
  assert.match(made.content, /^Exit code: 0/);
  assert.deepEqual(
    made.mutations.map((mutation) => [mutation.path, mutation.after?.kind]),
    [
      ['deep/up', 'symlink'],
      ['made_link', 'symlink'],
      ['made_secret_link', 'symlink'],
    ],
  );
  await assertRefusedEverywhere('made_link');
  await assertRefusedEverywhere('deep/up');
  const secret = await sandbox.tool('read_file', { path: 'made_secret_link' });
  assert.match(secret.content, /leads outside the repository/);
});

test('a FIFO made by a command is refused instead of blocking the worker', async () => {
  await sandbox.run('mkfifo pipe');
  const fifo = join(sandbox.workspace, 'pipe');
  // Were a tool to open the FIFO, it would block for ever: open the other end now and then, so
  // that the test fails instead of hanging.
  const release = setInterval(() => {
    for (const flags of [constants.O_RDONLY | constants.O_NONBLOCK, constants.O_WRONLY | constants.O_NONBLOCK]) {
      void open(fifo, flags).then(
        (handle) => handle.close(),
        () => undefined,
      );
    }
  }, 3000);
  try {
    for (const [name, input] of [
      ['read_file', { path: 'pipe' }],
      ['edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' }],
      ['write_file', { path: 'pipe', content: 'x' }],
    ] as const) {
      const started = Date.now();
      const outcome = await sandbox.tool(name, input);
      assert.equal(outcome.isError, true);
      assert.match(outcome.content, /"pipe" is not a regular file/);
      assert.ok(Date.now() - started < 2000, `${name} blocked on the FIFO`);
    }
  } finally {
    clearInterval(release);
  }
});

test('a retried edit (same call id, same expected digest) is applied once', async () => {
  const before = structuredClone(sandbox.log);
  const edit = { path: 'src/app.py', old_string: 'a = 1', new_string: 'a = 1\nb = 2' };
  const first = await sandbox.tool('edit_file', edit, { callId: 'toolu_retried_edit' });
  assert.equal(first.isError, false);
  assert.equal(first.mutations.length, 1);
  const after = structuredClone(sandbox.log);
  // The activity is retried (its first result was lost): same call, same expected digest.
  sandbox.log = structuredClone(before);
  const retried = await sandbox.tool('edit_file', edit, { callId: 'toolu_retried_edit' });
  assert.deepEqual(retried, first);
  assert.equal(await readFile(join(sandbox.workspace, 'src/app.py'), 'utf8'), 'a = 1\nb = 2\n');
  // A different call that expects the old workspace is not served from the journal.
  sandbox.log = structuredClone(before);
  await assert.rejects(sandbox.tool('edit_file', edit, { callId: 'toolu_other_edit' }), SandboxNeedsPrepareError);

  sandbox.log = after;
  const write = { path: 'notes.txt', content: 'second version\n' };
  const written = await sandbox.tool('write_file', write, { callId: 'toolu_retried_write' });
  sandbox.log = structuredClone(after);
  assert.deepEqual(await sandbox.tool('write_file', write, { callId: 'toolu_retried_write' }), written);
});

test('a workspace that differs from the log (a reset) is rebuilt, for the tools and the container alike', async () => {
  const beforeWrite = structuredClone(sandbox.log);
  await sandbox.tool('write_file', { path: 'reset_me.txt', content: 'made after the reset point\n' });
  assert.match((await sandbox.run('ls')).content, /reset_me\.txt/);
  // The run is reset to before that write: its log no longer has it.
  const prepared = await sandbox.host.prepare({
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run-after-reset',
    log: beforeWrite,
    limits: sandbox.limits,
  });
  assert.match(prepared.rebuiltBecause ?? '', /differed from the run’s mutation log/);
  sandbox.log = beforeWrite;
  const listed = await sandbox.tool('list_files', {});
  assert.doesNotMatch(listed.content, /reset_me\.txt/);
  const inContainer = await sandbox.run('ls; cat src/app.py');
  assert.doesNotMatch(inContainer.content, /reset_me\.txt/);
  assert.match(
    inContainer.content,
    /a = 1\nb = 2/,
    `the container does not see the rebuilt workspace:\n${inContainer.content}`,
  );
});

test('a workspace missing on this host (another worker) is rebuilt from the snapshot and the whole log', async () => {
  await sandbox.tool('write_file', { path: 'moved.txt', content: 'replayed on the new host\n' });
  await sandbox.host.destroy(sandbox.sandboxId);
  const prepared = await sandbox.host.prepare({
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run',
    log: sandbox.log,
    limits: sandbox.limits,
  });
  assert.match(prepared.rebuiltBecause ?? '', /not on this worker/);
  assert.equal(prepared.containerCreated, true);
  const inContainer = await sandbox.run('cat moved.txt src/app.py; ls -l made_link');
  assert.match(inContainer.content, /replayed on the new host\na = 1\nb = 2/);
  assert.match(inContainer.content, /made_link -> \/etc/, 'the symlink made by a command was not replayed');
});

test('the snapshot is taken once: later changes to the user’s checkout do not reach the run', async () => {
  await writeFile(join(sandbox.repository, 'src/app.py'), 'a = "changed by the user"\n');
  await sandbox.host.destroy(sandbox.sandboxId);
  await sandbox.host.prepare({
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run',
    log: sandbox.log,
    limits: sandbox.limits,
  });
  assert.match((await sandbox.tool('read_file', { path: 'src/app.py' })).content, /1\ta = 1\n2\tb = 2/);
});

test('a command that turns folders into a symlink (inside or outside the workspace) or a file: every later rebuild gives the workspace the run saw', async () => {
  const own = await startTestSandbox({
    files: { 'src/x.py': 'x = 1\n', 'lib/x.py': 'y = 2\n', 'pkg/mod.py': 'z = 3\n', 'vendor/v.py': 'v\n' },
  });
  try {
    await own.run(`rm -rf src pkg vendor && ln -s lib src && echo 'now a file' > pkg && ln -s ${outsideFolder} vendor`);
    const seen = own.log.digest;
    for (const attempt of ['another host', 'the same host again']) {
      await own.host.destroy(own.sandboxId);
      const prepared = await own.host.prepare({
        sandboxId: own.sandboxId,
        workflowId: 'test-workflow',
        runId: 'test-run',
        log: own.log,
        limits: own.limits,
      });
      assert.match(prepared.rebuiltBecause ?? '', /not on this worker/, attempt);
      const listed = await own.run('ls -l; cat lib/x.py src/x.py pkg');
      assert.equal(own.log.digest, seen, attempt);
      assert.match(listed.content, /src -> lib/);
      assert.match(listed.content, new RegExp(`vendor -> ${outsideFolder}`));
      assert.match(listed.content, /y = 2\ny = 2\nnow a file/);
    }
    assert.equal(await readFile(outsideFile, 'utf8'), 'SECRET=do-not-read\n');
  } finally {
    await own.stop();
  }
});

test('a command that replaces the protected tests folder with a symlink outside: the test files are restored in the workspace, nothing is written outside', async () => {
  const own = await startTestSandbox({ files: { 'tests/test_x.py': 'def test_x():\n    assert False\n' } });
  try {
    const outcome = await own.run(`rm -rf tests && ln -s ${outsideFolder} tests`);
    assert.equal(outcome.isError, false, outcome.content);
    assert.match(outcome.content, /they were restored: tests\/test_x\.py/);
    assert.deepEqual(outcome.mutations, []);
    assert.match((await own.tool('read_file', { path: 'tests/test_x.py' })).content, /assert False/);
    await assert.rejects(stat(join(outsideFolder, 'test_x.py')), { code: 'ENOENT' });
  } finally {
    await own.stop();
  }
});
