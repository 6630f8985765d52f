// After `poetry install`, the build asks the venv whether the requirements it adds are installed
// already before it starts pip. The check runs here with the host's python3 and its pip (whose
// vendored `packaging` it reads, as it does in the build's venv): installed only when every line,
// and what each requires, is there in a version the line allows; anything else is pip's to decide.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { installedAlreadyCheck } from '../../src/sandbox/environment/python/installedAlready.js';

let folder: string;

before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'installed-already-'));
  await writeFile(join(folder, installedAlreadyCheck.file), installedAlreadyCheck.text);
});

after(() => rm(folder, { recursive: true, force: true }));

/** Whether the check says the lines are installed, for the host's python3. */
async function installed(...files: string[]): Promise<boolean> {
  const paths: string[] = [];
  for (const [index, text] of files.entries()) {
    paths.push(join(folder, `requirements-${index}.txt`));
    await writeFile(paths[index] as string, text);
  }
  return new Promise((resolve) =>
    execFile('python3', [join(folder, installedAlreadyCheck.file), ...paths], (error) => resolve(!error)),
  );
}

test('installed: lines whose distributions (and what they require) are there, in versions the lines allow', async () => {
  assert.equal(await installed('pip\n'), true);
  assert.equal(await installed('# the runner\npip>=1  # any recent one\n\n', ''), true);
  assert.equal(await installed('pip\n', 'Pip >= 1.0\n'), true);
  // A marker that does not apply needs nothing installed.
  assert.equal(await installed('pip\nnot-a-real-distribution-xyz; python_version < "3"\n'), true);
});

test('not installed: a missing distribution, a version out of range, in any file', async () => {
  assert.equal(await installed('not-a-real-distribution-xyz\n'), false);
  assert.equal(await installed('pip>=999\n'), false);
  assert.equal(await installed('pip\n', 'not-a-real-distribution-xyz==1.0\n'), false);
});

test('what the check does not fully read is left to pip: options, nested files, extras, URLs, hashes, bad lines', async () => {
  for (const line of [
    '-r other.txt',
    '--index-url https://example.invalid/simple',
    '-e .',
    'pip[extra-xyz]',
    'pip @ https://example.invalid/pip.whl',
    'pip==24.0 --hash=sha256:0000',
    'pip ===',
  ])
    assert.equal(await installed(`${line}\n`), false, line);
  assert.equal(await installed(), true, 'no files: nothing to install');
});
