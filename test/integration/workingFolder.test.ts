// Commands name repositories relative to the folder they run in, never the worker's (issue 25):
// `start .` from a repository's folder, with a `dev` worker running in another folder, debugs that
// repository; `apply <id>` from yet another folder commits into the run's repository.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { DebugReport } from '../../src/agent/report.js';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, runCli, startCli } from '../support/cli.js';

let server: TestServer;
let fake: FakeAnthropicApi;
let scratch: string;

before(async () => {
  server = await startTestServer();
  fake = new FakeAnthropicApi({ scripts: scriptsByName(await loadFixtures()) });
  await fake.start();
  scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-folders-'));
});
after(async () => {
  killCliProcesses();
  await fake?.stop();
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function git(repo: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  assert.equal(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

test(
  "`start .` debugs the folder it runs in, not the worker's; `apply <id>` from elsewhere commits into that repository",
  { timeout: 600_000 },
  async () => {
    const gateway = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
    // The worker's folder is another repository (the fake API knows it too), so a run that
    // resolved "." there would fix the wrong one.
    const workerFolder = join(scratch, 'worker', '03_mutable_default');
    cpSync(join(projectRoot, 'fixtures', '03_mutable_default'), workerFolder, { recursive: true });
    const repo = join(scratch, 'mine', '01_off_by_one');
    cpSync(join(projectRoot, 'fixtures', '01_off_by_one'), repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '-q', '-m', 'initial');
    const elsewhere = join(scratch, 'elsewhere');
    mkdirSync(elsewhere);

    const worker = startCli(server, ['dev'], gateway, workerFolder);
    const deadline = Date.now() + 180_000;
    while (!worker.output().includes('Worker on task queue')) {
      assert.equal(worker.child.exitCode, null, worker.output());
      assert.ok(Date.now() < deadline, `the worker did not start:\n${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const started = await runCli(server, ['start', '.', '--id', 'folders-run'], gateway, repo);
    assert.equal(started.code, 0, started.output);
    assert.equal(started.stdout.trim(), 'folders-run');
    const report = (await server.client.workflow.getHandle('folders-run').result()) as DebugReport;
    assert.equal(report.repository, repo);
    assert.equal(report.status, 'fixed', JSON.stringify(report, null, 1));
    assert.match(report.patch, /buggy_code\.py/);
    assert.equal(
      readFileSync(join(workerFolder, 'playlist.py'), 'utf8'),
      readFileSync(join(projectRoot, 'fixtures', '03_mutable_default', 'playlist.py'), 'utf8'),
    );

    const applied = await runCli(server, ['apply', 'folders-run'], gateway, elsewhere);
    assert.equal(applied.code, 0, applied.output);
    assert.match(git(repo, 'show', '--stat', 'durable-debugger/folders-run'), /buggy_code\.py/);
    worker.child.kill('SIGTERM');
    await worker.done;
  },
);
