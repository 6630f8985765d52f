// Files with Windows line endings, whole or mixed: read without stray `\r`, edited with text
// written with `\n` (as the model reads the file), and written back with their own endings.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { editFileForTool, readTextForTool, writeFileForTool } from '../../src/sandbox/workspace/fileTools.js';
import { findIgnoringLineEndings, withLineEndingsOf } from '../../src/sandbox/workspace/lineEndings.js';

let workspace: string;

before(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-line-endings-'));
});

after(async () => {
  await rm(workspace, { recursive: true, force: true });
});

async function fileWith(name: string, content: string): Promise<string> {
  await writeFile(join(workspace, name), content);
  return name;
}

const crlfSource =
  'def total(items):\r\n    result = 0\r\n    for item in items[1:]:\r\n        result += item\r\n    return result\r\n';

test('read_file shows a CRLF file without stray \\r, and says it has Windows line endings', async () => {
  const path = await fileWith('crlf_read.py', crlfSource);
  const shown = await readTextForTool(workspace, { path });
  assert.doesNotMatch(shown, /\r/);
  assert.match(shown, /^crlf_read\.py \(lines 1-5 of 5; Windows line endings, kept by edits\)\n/);
  assert.match(shown, /\n3\t    for item in items\[1:\]:\n/);
});

test('edit_file matches \\n text in a CRLF file and keeps CRLF everywhere', async () => {
  const path = await fileWith('crlf_edit.py', crlfSource);
  const message = await editFileForTool(workspace, {
    path,
    old_string: '    result = 0\n    for item in items[1:]:\n',
    new_string: '    result = 0\n    for item in items:\n',
  });
  assert.match(message, /^Edited crlf_edit\.py at line 2: replaced 3 line\(s\) with 3 line\(s\)\.$/);
  assert.equal(await readFile(join(workspace, path), 'utf8'), crlfSource.replace('items[1:]', 'items'));
});

test('edit_file adding lines to a CRLF file gives the new lines CRLF too', async () => {
  const path = await fileWith('crlf_grow.py', crlfSource);
  await editFileForTool(workspace, {
    path,
    old_string: '    return result\n',
    new_string: '    # the sum of every item\n    return result\n',
  });
  const written = await readFile(join(workspace, path), 'utf8');
  assert.equal(
    written,
    crlfSource.replace('    return result\r\n', '    # the sum of every item\r\n    return result\r\n'),
  );
  // A one-line fragment (matched exactly) replaced by several lines: the file's ending.
  await editFileForTool(workspace, { path, old_string: 'result = 0', new_string: 'result = 0\n    seen = 0' });
  assert.match(await readFile(join(workspace, path), 'utf8'), /    result = 0\r\n    seen = 0\r\n/);
  assert.doesNotMatch(await readFile(join(workspace, path), 'utf8'), /[^\r]\n/);
});

test('edit_file in a mixed file keeps each line’s own ending', async () => {
  const mixed = 'first = 1\r\nsecond = 2\nthird = 3\r\nfourth = 4\n';
  const path = await fileWith('mixed.py', mixed);
  assert.doesNotMatch(await readTextForTool(workspace, { path }), /\r/);
  await editFileForTool(workspace, {
    path,
    old_string: 'second = 2\nthird = 3\n',
    new_string: 'second = 22\nthird = 33\n',
  });
  assert.equal(await readFile(join(workspace, path), 'utf8'), 'first = 1\r\nsecond = 22\nthird = 33\r\nfourth = 4\n');
  // Text that is in the file as-is is matched as-is.
  await editFileForTool(workspace, { path, old_string: 'fourth = 4\n', new_string: 'fourth = 44\n' });
  assert.equal(await readFile(join(workspace, path), 'utf8'), 'first = 1\r\nsecond = 22\nthird = 33\r\nfourth = 44\n');
});

test('edit_file counts a match once per place, whatever the endings, and still refuses an ambiguous one', async () => {
  const path = await fileWith('twice.py', 'x = 1\r\ny = 2\nx = 1\ny = 2\r\n');
  await assert.rejects(
    editFileForTool(workspace, { path, old_string: 'x = 1\ny = 2', new_string: 'x = 3\ny = 4' }),
    /old_string occurs 2 times in twice\.py \(at lines 1, 3\)/,
  );
  await assert.rejects(
    editFileForTool(workspace, { path, old_string: 'x = 1\nz = 2', new_string: 'x = 3' }),
    /old_string was not found in twice\.py\. It must match exactly, including whitespace\. The closest match is near line 1:\n1\tx = 1\n/,
  );
});

test('write_file over a CRLF file keeps CRLF', async () => {
  const path = await fileWith('crlf_write.txt', 'one\r\ntwo\r\n');
  await writeFileForTool(workspace, { path, content: 'one\ntwo\nthree\n' });
  assert.equal(await readFile(join(workspace, path), 'utf8'), 'one\r\ntwo\r\nthree\r\n');
  const unix = await fileWith('lf_write.txt', 'one\ntwo\n');
  await writeFileForTool(workspace, { path: unix, content: 'one\ntwo\nthree\n' });
  assert.equal(await readFile(join(workspace, unix), 'utf8'), 'one\ntwo\nthree\n');
});

test('line-ending-blind matching maps offsets back into the original text', () => {
  const text = 'a\r\nb\nc\r\nb\r\n';
  assert.deepEqual(findIgnoringLineEndings(text, 'b\n'), [
    { start: 3, end: 5 },
    { start: 8, end: 11 },
  ]);
  assert.deepEqual(findIgnoringLineEndings(text, '\nc'), [{ start: 4, end: 6 }]);
  assert.equal(withLineEndingsOf('x\ny\n', 'a\r\nb\n', text), 'x\r\ny\n');
  assert.equal(withLineEndingsOf('x\ny\nz\n', 'a\r\nb\r\n', text), 'x\r\ny\r\nz\r\n');
  assert.equal(withLineEndingsOf('x\ny', 'a', 'p\r\nq\r\nr\n'), 'x\r\ny');
});
