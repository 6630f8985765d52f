// safeGit.ts with the real git: a repository's config that names programs (filters whose names
// hold dots and '=', a long-running filter process, an fsmonitor, hooks) runs none of them.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gitOutput, gitSync } from '../../src/sandbox/workspace/safeGit.js';

const scratch = mkdtempSync(join(tmpdir(), 'safe-git-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('filters with any name, a filter process, an fsmonitor and hooks named by the repository never run', async () => {
  const repo = join(scratch, 'repo');
  const canaries = join(scratch, 'canaries');
  mkdirSync(repo);
  mkdirSync(canaries);
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
  const program = (name: string, tail = 'cat') => {
    const path = join(scratch, name);
    writeFileSync(path, `#!/bin/sh\ntouch "${canaries}/${name}"\n${tail}\n`, { mode: 0o755 });
    return path;
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, '.gitattributes'), '*.txt filter=a=b.c\n*.md filter=long\n');
  writeFileSync(join(repo, 'a.txt'), 'text\n');
  writeFileSync(join(repo, 'b.md'), 'text\n');
  git('add', '-A');
  git('-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-q', '-m', 'first');
  const hooks = join(scratch, 'hooks');
  mkdirSync(hooks);
  writeFileSync(join(hooks, 'reference-transaction'), `#!/bin/sh\ntouch "${canaries}/hook"\n`, { mode: 0o755 });
  // git config's own parser takes the whole key; `-c filter.a=b.c.clean=…` could not even name it.
  git('config', 'filter.a=b.c.clean', program('clean'));
  git('config', 'filter.a=b.c.required', 'true');
  git('config', 'filter.long.process', program('process', 'exit 1'));
  git('config', 'core.fsmonitor', program('fsmonitor', 'exit 1'));
  git('config', 'core.hooksPath', hooks);
  // Newer than the index: status reads them, through their filters if any runs.
  for (const file of ['a.txt', 'b.md']) utimesSync(join(repo, file), new Date(), new Date(Date.now() + 5000));

  const status = gitSync(repo, ['status', '--porcelain']);
  assert.equal(status.status, 0, status.stderr);
  assert.equal(status.stdout, '');
  assert.match(await gitOutput(repo, ['ls-files', '-z']), /a\.txt/);
  const head = gitSync(repo, ['rev-parse', 'HEAD']).stdout.trim();
  assert.equal(gitSync(repo, ['update-ref', 'refs/heads/other', head, '']).status, 0);
  assert.deepEqual(readdirSync(canaries), []);

  // The same commands without safeGit run them (and fail, the filter process refusing): the test can tell.
  spawnSync('git', ['-C', repo, 'status', '--porcelain']);
  spawnSync('git', ['-C', repo, 'update-ref', 'refs/heads/another', head, '']);
  assert.deepEqual(readdirSync(canaries).sort(), ['clean', 'fsmonitor', 'hook', 'process']);
});
