// `run --apply` and `apply <id>`: the verified patch becomes one commit on a new branch of the
// user's git repository; every refusal leaves the repository exactly as it was. Real CLI processes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import type { DebugReport } from '../../src/agent/report.js';
import { reportPatchBytes } from '../../src/agent/payloads.js';
import type { Script } from '../../src/demo/script.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { runCli, type CliResult } from '../support/cli.js';

let server: TestServer;
let fake: FakeAnthropicApi;
let scratch: string;
const fixture = '01_off_by_one';

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({ scripts: { ...scriptsByName(await loadFixtures()), [wideFix]: wideFixScript() } });
  await fake.start();
  scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-apply-test-'));
});
after(async () => {
  await fake?.stop();
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function cli(args: string[]): Promise<CliResult> {
  return runCli(server, args, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url });
}

function git(repo: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  assert.equal(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** A copy of the fixture (same folder name: the scripted model knows it by name), optionally a git repository. */
function copyOfFixture(label: string, asGitRepository: boolean): string {
  const repo = join(scratch, label, fixture);
  cpSync(join(projectRoot, 'fixtures', fixture), repo, { recursive: true });
  if (asGitRepository) {
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-m', 'initial');
  }
  return repo;
}

/** Everything a refusal must leave alone: refs, HEAD, index and working tree. */
function stateOf(repo: string): string {
  return [
    git(repo, 'show-ref'),
    git(repo, 'rev-parse', 'HEAD'),
    git(repo, 'status', '--porcelain', '--untracked-files=all'),
    readFileSync(join(repo, 'buggy_code.py'), 'utf8'),
  ].join('\n--\n');
}

let fixedRunId = '';

test('run --apply commits the verified patch on durable-debugger/<id>, with the root cause and the tests in the message', async () => {
  const repo = copyOfFixture('applied', true);
  fixedRunId = 'apply-fixed-run';
  const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
  const run = await cli(['run', repo, '--id', fixedRunId, '--apply']);
  assert.equal(run.code, 0, run.output);
  assert.match(run.output, /new branch durable-debugger\/apply-fixed-run/);

  const branch = 'durable-debugger/apply-fixed-run';
  assert.equal(git(repo, 'rev-parse', `${branch}^`).trim(), headBefore, 'one commit on top of HEAD');
  const message = git(repo, 'log', '-1', '--format=%B', branch);
  assert.match(message, /^Fix: /);
  assert.match(message, /Root cause: /);
  assert.match(message, /Tests before: \d+ passed, [1-9]\d* failed/);
  assert.match(message, /Tests after: \d+ passed, 0 failed/);
  // The checkout is untouched; the branch holds the fix and its tests pass.
  assert.equal(git(repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'main');
  assert.equal(git(repo, 'status', '--porcelain').trim(), '');
  const changed = git(repo, 'diff', '--name-only', 'main', branch).trim().split('\n');
  assert.deepEqual(changed, ['buggy_code.py']);
  git(repo, 'switch', '-q', branch);
  const tests = spawnSync('python3', ['-m', 'pytest', '-q'], { cwd: repo, encoding: 'utf8' });
  assert.equal(tests.status, 0, tests.stdout + tests.stderr);
});

test('apply refuses, changing nothing: a folder that is not a git repository', async () => {
  assert.ok(fixedRunId, 'needs the fixed run of the first test');
  const repo = copyOfFixture('not-git', false);
  const before = readFileSync(join(repo, 'buggy_code.py'), 'utf8');
  const result = await cli(['apply', fixedRunId, '--repo', repo]);
  assert.equal(result.code, 2, result.output);
  assert.match(result.output, /Not applied, nothing changed\. .* is not a git repository/);
  assert.equal(readFileSync(join(repo, 'buggy_code.py'), 'utf8'), before);
  assert.equal(existsSync(join(repo, '.git')), false);
});

test('apply refuses, changing nothing: the files it touches have uncommitted changes', async () => {
  const repo = copyOfFixture('dirty', true);
  writeFileSync(
    join(repo, 'buggy_code.py'),
    `${readFileSync(join(repo, 'buggy_code.py'), 'utf8')}\n# my own work in progress\n`,
  );
  const before = stateOf(repo);
  const result = await cli(['apply', fixedRunId, '--repo', repo]);
  assert.equal(result.code, 2, result.output);
  assert.match(result.output, /uncommitted changes[\s\S]*buggy_code\.py/);
  assert.equal(stateOf(repo), before);
});

test('apply refuses, changing nothing: the patch no longer applies at HEAD', async () => {
  const repo = copyOfFixture('moved-on', true);
  const source = readFileSync(join(repo, 'buggy_code.py'), 'utf8');
  writeFileSync(
    join(repo, 'buggy_code.py'),
    source
      .replace('for i in range(len(items) - 1):', 'for index in range(len(items) - 1):')
      .replace('items[i]', 'items[index]'),
  );
  git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-am', 'reformat');
  const before = stateOf(repo);
  const result = await cli(['apply', fixedRunId, '--repo', repo]);
  assert.equal(result.code, 2, result.output);
  assert.match(result.output, /no longer applies/);
  assert.equal(stateOf(repo), before);
});

test('apply refuses to overwrite a branch that already exists', async () => {
  const repo = copyOfFixture('twice', true);
  const first = await cli(['apply', fixedRunId, '--repo', repo]);
  assert.equal(first.code, 0, first.output);
  const before = stateOf(repo);
  const again = await cli(['apply', fixedRunId, '--repo', repo]);
  assert.equal(again.code, 2, again.output);
  assert.match(again.output, /already exists/);
  assert.equal(stateOf(repo), before);
});

// A fix that touches 40 generated rate tables (8 KB each): its patch is far over the 256 KB the
// report keeps, so the report holds a 64 KB preview and the whole patch is in the content store.
const wideFix = 'wide_fix';
const wideFiles = 40;
const rateTable = (version: number) =>
  `VERSION = ${version}\n${Array.from({ length: 400 }, (_, row) => `RATE_${row} = ${(row * version) / 1000}`).join('\n')}\n`;

function wideFixScript(): Script {
  const writes = Array.from({ length: wideFiles }, (_, index) => ({
    name: 'write_file',
    input: { path: `rates/table_${String(index).padStart(2, '0')}.py`, content: rateTable(2) },
  }));
  return {
    responses: [
      { thought: 'Every rate table is still at version 1; regenerate them all at version 2.', tool_calls: writes },
      {
        thought: 'All tables are at version 2.',
        tool_calls: [{ name: 'finish', input: { root_cause: 'the rate tables were generated from the old version' } }],
      },
    ],
  };
}

function wideRepository(label: string): string {
  const repo = join(scratch, label, wideFix);
  mkdirSync(join(repo, 'rates'), { recursive: true });
  writeFileSync(join(repo, 'rates', '__init__.py'), '');
  for (let index = 0; index < wideFiles; index++)
    writeFileSync(join(repo, 'rates', `table_${String(index).padStart(2, '0')}.py`), rateTable(1));
  writeFileSync(
    join(repo, 'test_rates.py'),
    [
      'import importlib',
      '',
      '',
      'def test_every_table_is_at_version_2():',
      `    for index in range(${wideFiles}):`,
      '        table = importlib.import_module(f"rates.table_{index:02d}")',
      '        assert table.VERSION == 2, table.__name__',
      '',
    ].join('\n'),
  );
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-m', 'initial');
  return repo;
}

/** Every changed file of the fix branch, and whether each holds the fixed table. */
function branchFiles(repo: string, branch: string): string[] {
  const changed = git(repo, 'diff', '--name-only', 'main', branch).trim().split('\n').filter(Boolean);
  for (const path of changed) assert.equal(git(repo, 'show', `${branch}:${path}`), rateTable(2), path);
  return changed;
}

let wideRunId = '';

test('run --apply of a patch over 256 KB commits all of it: the branch holds every file of the fix', async () => {
  const repo = wideRepository('wide-applied');
  wideRunId = 'apply-wide-run';
  const run = await cli(['run', repo, '--id', wideRunId, '--apply', '--max-iterations', '5']);
  assert.equal(run.code, 0, run.output);
  const report = JSON.parse((await cli(['result', wideRunId, '--json'])).stdout) as DebugReport;
  assert.ok(report.fullPatch && report.fullPatch.bytes > reportPatchBytes, 'the report holds only a preview');
  assert.equal(branchFiles(repo, `durable-debugger/${wideRunId}`).length, wideFiles);
  assert.equal(git(repo, 'status', '--porcelain').trim(), '', 'the checkout is unchanged');
});

test('apply of a patch over 256 KB commits all of it, and refuses, changing nothing, when the stored patch is damaged', async () => {
  assert.ok(wideRunId, 'needs the run of the test before');
  const repo = wideRepository('wide-apply-later');
  const applied = await cli(['apply', wideRunId, '--repo', repo]);
  assert.equal(applied.code, 0, applied.output);
  assert.equal(branchFiles(repo, `durable-debugger/${wideRunId}`).length, wideFiles);

  const report = JSON.parse((await cli(['result', wideRunId, '--json'])).stdout) as DebugReport;
  const stored = report.fullPatch?.file as string;
  const whole = readFileSync(stored);
  try {
    writeFileSync(stored, whole.subarray(0, whole.length - 1000));
    const other = wideRepository('wide-damaged');
    const before = [git(other, 'show-ref'), git(other, 'status', '--porcelain', '--untracked-files=all')].join('\n');
    const refused = await cli(['apply', wideRunId, '--repo', other]);
    assert.equal(refused.code, 2, refused.output);
    assert.match(
      refused.output,
      /Not applied, nothing changed\. The whole patch \(\d+ bytes, content-store blob [0-9a-f]{64}\) is damaged/,
    );
    assert.equal(
      [git(other, 'show-ref'), git(other, 'status', '--porcelain', '--untracked-files=all')].join('\n'),
      before,
    );
  } finally {
    writeFileSync(stored, whole);
  }
});

test('run --apply when the tests leave a SQLite file behind: the branch holds the fix alone; --patch-all-changes keeps the database too', async () => {
  const leftBehind = '26_sqlite_left_by_tests';
  const copy = (label: string) => {
    const repo = join(scratch, label, leftBehind);
    cpSync(join(projectRoot, 'fixtures', leftBehind), repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-m', 'initial');
    return repo;
  };
  const repo = copy('left-behind');
  const run = await cli(['run', repo, '--id', 'apply-left-behind', '--apply']);
  assert.equal(run.code, 0, run.output);
  assert.match(run.output, /Left out of the patch: test_inventory\.sqlite3 \(files the agent never edited/);
  assert.deepEqual(git(repo, 'diff', '--name-only', 'main', 'durable-debugger/apply-left-behind').trim().split('\n'), [
    'inventory.py',
  ]);

  const all = copy('all-changes');
  const kept = await cli(['run', all, '--id', 'apply-all-changes', '--apply', '--patch-all-changes']);
  assert.equal(kept.code, 0, kept.output);
  assert.doesNotMatch(kept.output, /Left out of the patch/);
  const branch = 'durable-debugger/apply-all-changes';
  assert.deepEqual(git(all, 'diff', '--name-only', 'main', branch).trim().split('\n'), [
    'inventory.py',
    'test_inventory.sqlite3',
  ]);
  const database = spawnSync('git', ['show', `${branch}:test_inventory.sqlite3`], { cwd: all });
  assert.equal(database.stdout.subarray(0, 16).toString('latin1'), 'SQLite format 3\0', 'the database, whole');
});

test('run --apply and apply in a repository whose .git/config names an fsmonitor, a hooks folder and a filter: none of them runs', async () => {
  const repo = copyOfFixture('hostile-git-config', true);
  // The filter is chosen by a committed .gitattributes; the commit is made before the config is.
  writeFileSync(join(repo, '.gitattributes'), '*.py filter=canary\n');
  git(repo, 'add', '.gitattributes');
  git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-m', 'attributes');
  const canaries = join(scratch, 'hostile-git-config', 'canaries');
  mkdirSync(canaries);
  const script = (name: string, tail: string) => {
    const path = join(scratch, 'hostile-git-config', name);
    writeFileSync(path, `#!/bin/sh\ntouch "${canaries}/${name}"\n${tail}\n`, { mode: 0o755 });
    return path;
  };
  const hooks = join(scratch, 'hostile-git-config', 'hooks');
  mkdirSync(hooks);
  for (const hook of ['reference-transaction', 'post-index-change', 'pre-auto-gc'])
    writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch "${canaries}/hook-${hook}"\n`, { mode: 0o755 });
  git(repo, 'config', 'core.fsmonitor', script('fsmonitor', 'exit 1'));
  git(repo, 'config', 'core.hooksPath', hooks);
  git(repo, 'config', 'filter.canary.clean', script('clean', 'cat'));
  git(repo, 'config', 'filter.canary.smudge', script('smudge', 'cat'));
  // A file newer than the index: status looks at its content, through the clean filter if there is one.
  writeFileSync(join(repo, 'buggy_code.py'), readFileSync(join(repo, 'buggy_code.py')));

  const run = await cli(['run', repo, '--id', 'apply-hostile-git-config', '--apply']);
  assert.deepEqual(readdirSync(canaries), [], 'a program named by the repository’s git config ran');
  assert.equal(run.code, 0, run.output);
  const safe = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'];
  assert.deepEqual(
    git(repo, ...safe, 'diff', '--name-only', 'main', 'durable-debugger/apply-hostile-git-config')
      .trim()
      .split('\n'),
    ['buggy_code.py'],
  );

  // apply <id>: refused while the branch is there, then done again once it is deleted.
  const second = await cli(['apply', 'apply-hostile-git-config', '--repo', repo]);
  assert.deepEqual(readdirSync(canaries), [], 'a program named by the repository’s git config ran');
  assert.notEqual(second.code, 0, 'the branch exists already: refused');
  git(repo, ...safe, 'branch', '-q', '-D', 'durable-debugger/apply-hostile-git-config');
  const applied = await cli(['apply', 'apply-hostile-git-config', '--repo', repo]);
  assert.deepEqual(readdirSync(canaries), [], 'a program named by the repository’s git config ran');
  assert.equal(applied.code, 0, applied.output);
});
