// An edit of the same length in the second of the file's last write: Python's bytecode cache,
// which trusts the source's mtime in whole seconds and its size, must still see the change (a
// fast model edits right after the test run that compiled the old code).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { editFileForTool, writeFileForTool } from '../../src/sandbox/workspace/fileTools.js';

const run = promisify(execFile);

async function addTwoAndThree(workspace: string): Promise<string> {
  // Python as the sandbox runs it: writing bytecode (a developer's shell may turn that off).
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'PYTHONDONTWRITEBYTECODE'));
  const { stdout } = await run('python3', ['-c', 'import calc; print(calc.add(2, 3))'], { cwd: workspace, env });
  return stdout.trim();
}

/** Waits for the start of a second, so that what follows happens within one. */
async function startOfASecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
}

test('an edit and a rewrite within the second of the bytecode Python compiled: the next import runs the new code', async () => {
  const workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-bytecode-'));
  try {
    await startOfASecond();
    await writeFile(join(workspace, 'calc.py'), 'def add(a, b):\n    return a - b\n');
    assert.equal(await addTwoAndThree(workspace), '-1');
    assert.equal((await readdir(join(workspace, '__pycache__'))).length, 1, 'compiled into __pycache__');
    const before = await stat(join(workspace, 'calc.py'));
    await editFileForTool(workspace, { path: 'calc.py', old_string: 'a - b', new_string: 'a + b' });
    const after = await stat(join(workspace, 'calc.py'));
    assert.equal(after.size, before.size);
    assert.notEqual(Math.floor(after.mtimeMs / 1000), Math.floor(before.mtimeMs / 1000));
    assert.equal(await addTwoAndThree(workspace), '5');
    await writeFileForTool(workspace, { path: 'calc.py', content: 'def add(a, b):\n    return a * b\n' });
    assert.equal(await addTwoAndThree(workspace), '6');
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});
