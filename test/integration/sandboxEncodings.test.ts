// Legacy-encoded and binary files on a real sandbox: search_code finds text in Latin-1 and UTF-16
// files (which grep skips as binary) and shows it decoded; a pattern that backtracks without end
// does not stall the worker; a test run that leaves a SQLite file behind in a repository whose
// .gitignore does not cover it still gives a patch that `git apply` accepts, without that file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import iconv from 'iconv-lite';
import { computePatch } from '../../src/sandbox/workspace/patch.js';
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

const latin1 = '# -*- coding: latin-1 -*-\nTAUX = {"normal": 0.20, "réduit": 0.55}\n';
const utf16 = '\ufeff[facture]\r\ntotal = Total à payer : {montnat} €\r\n';

test('search_code finds text in Latin-1 and UTF-16 files and shows it decoded', async () => {
  const sandbox = await sandboxWith({
    files: { 'app.py': 'from tarifs import TAUX  # réduit\n' },
    prepareRepository: async (repo) => {
      await writeFile(join(repo, 'tarifs.py'), iconv.encode(latin1, 'latin1'));
      await writeFile(join(repo, 'fr.ini'), iconv.encode(utf16, 'utf16le'));
      await writeFile(join(repo, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xe9, 0, 0, 0x72, 0xe9]));
    },
  });
  const reduced = await sandbox.tool('search_code', { pattern: 'r.duit' });
  assert.equal(reduced.isError, false, reduced.content);
  assert.deepEqual(reduced.content.split('\n').sort(), [
    'app.py:1:from tarifs import TAUX  # réduit',
    'tarifs.py:2:TAUX = {"normal": 0.20, "réduit": 0.55}',
  ]);
  const typo = await sandbox.tool('search_code', { pattern: 'montnat' });
  assert.equal(typo.content, 'fr.ini:2:total = Total à payer : {montnat} €');
});

test('a pattern that backtracks without end on a legacy file does not stall the search', async () => {
  const sandbox = await sandboxWith({
    prepareRepository: async (repo) => {
      await writeFile(join(repo, 'vieux.txt'), iconv.encode(`é${'a'.repeat(40)}c\n`, 'latin1'));
    },
  });
  const started = Date.now();
  const search = await sandbox.tool('search_code', { pattern: '(a+)+b' });
  assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
  assert.match(search.content, /^No matches/);
});

test('a test run that leaves a SQLite file behind (not in .gitignore): the patch leaves it out and applies', async () => {
  const sandbox = await sandboxWith({
    files: {
      'inventory.py': 'def low(rows, threshold):\n    return [sku for sku, quantity in rows if quantity > threshold]\n',
      'test_inventory.py': [
        'import sqlite3',
        'from inventory import low',
        '',
        'def test_low():',
        '    connection = sqlite3.connect("test_inventory.sqlite3")',
        '    connection.execute("CREATE TABLE IF NOT EXISTS stock (sku TEXT, quantity INTEGER)")',
        '    connection.commit()',
        '    assert low([("a", 1), ("b", 9)], 5) == ["a"]',
        '',
      ].join('\n'),
    },
    testCommand: 'python3 -m pytest -q -p no:cacheprovider',
  });
  await sandbox.tool('edit_file', {
    path: 'inventory.py',
    old_string: 'if quantity > threshold',
    new_string: 'if quantity < threshold',
  });
  const tests = await sandbox.tool('run_tests', {});
  assert.match(tests.content, /1 passed/);
  assert.deepEqual(
    tests.mutations.map((mutation) => [mutation.path, mutation.madeBy]),
    [['test_inventory.sqlite3', 'test_run']],
  );
  const { patch, leftOut } = await computePatch(sandbox.host.options.store, sandbox.snapshotId, sandbox.log.mutations);
  assert.deepEqual(leftOut, ['test_inventory.sqlite3']);
  assert.deepEqual(
    [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((match) => match[1]),
    ['inventory.py'],
  );
  const copy = `${sandbox.repository}-patched`;
  await cp(sandbox.repository, copy, { recursive: true });
  await writeFile(join(copy, '..', 'fix.patch'), patch);
  execFileSync('git', ['apply', join(copy, '..', 'fix.patch')], { cwd: copy, stdio: 'pipe' });
  assert.match(await readFile(join(copy, 'inventory.py'), 'utf8'), /quantity < threshold/);

  // Asked for all changes, the database is in the patch as a git binary patch, and it applies too.
  const all = await computePatch(sandbox.host.options.store, sandbox.snapshotId, sandbox.log.mutations, {
    allChanges: true,
  });
  assert.match(
    all.patch,
    /^diff --git a\/test_inventory\.sqlite3 b\/test_inventory\.sqlite3\nnew file mode 100644\nindex 0{40}\.\.[0-9a-f]{40}\nGIT binary patch\n/m,
  );
  const allCopy = `${sandbox.repository}-all`;
  await cp(sandbox.repository, allCopy, { recursive: true });
  await writeFile(join(allCopy, '..', 'all.patch'), all.patch);
  execFileSync('git', ['apply', join(allCopy, '..', 'all.patch')], { cwd: allCopy, stdio: 'pipe' });
  assert.ok(
    (await readFile(join(allCopy, 'test_inventory.sqlite3'))).equals(
      await readFile(join(sandbox.workspace, 'test_inventory.sqlite3')),
    ),
  );
});
