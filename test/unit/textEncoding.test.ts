// Files that are not UTF-8: told from binary by content, decoded by their byte-order mark, their
// coding line or the detector, shown to the model as text, and edited in their own encoding with
// every byte outside the edit kept.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import iconv from 'iconv-lite';
import { editFileForTool, readTextForTool, writeFileForTool } from '../../src/sandbox/workspace/fileTools.js';
import { decodeText, encodeText } from '../../src/sandbox/workspace/textEncoding.js';

let workspace: string;

before(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'durable-debugger-encodings-'));
});

after(async () => {
  await rm(workspace, { recursive: true, force: true });
});

// Legacy code as it is found: a French module in Latin-1 with its PEP 263 line, a Windows file
// in cp1252 (curly quotes, the euro sign), a Japanese one in Shift-JIS, a C# file in UTF-16 with
// a byte-order mark and CRLF (Visual Studio's "Unicode" save).
const latin1Source = [
  '# -*- coding: latin-1 -*-',
  '"""Calcul des prix toutes taxes comprises."""',
  '',
  'TAUX = {"normal": 0.20, "réduit": 0.55}',
  '',
  'def prix_ttc(prix, catégorie="normal"):',
  '    return round(prix * (1 + TAUX[catégorie]), 2)',
  '',
].join('\n');
const cp1252Source =
  'def devise():\n    return "Prix en € – « TTC »"\n\ndef citer(texte):\n    return "“" + texte + "”"\n';
const shiftJisSource = '# 価格の計算\ndef 税込(価格):\n    return 価格 * 1.08  # 消費税\n';
const utf16Source =
  '\ufeffusing System;\r\n\r\n// Façade des tarifs\r\npublic static class Tarifs\r\n{\r\n    public const decimal Réduit = 0.55m;\r\n}\r\n';

const cases: Array<{ name: string; bytes: Buffer; encoding: string; foundBy: string; text: string }> = [
  {
    name: 'Latin-1 with a coding line',
    bytes: iconv.encode(latin1Source, 'latin1'),
    encoding: 'latin-1',
    foundBy: 'declared',
    text: latin1Source,
  },
  {
    name: 'cp1252 without a declaration',
    bytes: iconv.encode(cp1252Source, 'win1252'),
    encoding: 'windows-1252',
    foundBy: 'detected',
    text: cp1252Source,
  },
  {
    name: 'Shift-JIS without a declaration',
    bytes: iconv.encode(shiftJisSource, 'shift_jis'),
    encoding: 'Shift_JIS',
    foundBy: 'detected',
    text: shiftJisSource,
  },
  {
    name: 'UTF-16LE with a byte-order mark',
    bytes: iconv.encode(utf16Source, 'utf16le'),
    encoding: 'UTF-16LE',
    foundBy: 'byte-order mark',
    text: utf16Source.slice(1),
  },
  {
    name: 'UTF-16LE without a byte-order mark',
    bytes: iconv.encode('[Settings]\r\nName=Caf\u00e9\r\n', 'utf16le'),
    encoding: 'UTF-16LE',
    foundBy: 'detected',
    text: '[Settings]\r\nName=Caf\u00e9\r\n',
  },
  {
    name: 'UTF-8 with a byte-order mark',
    bytes: Buffer.from('\ufeffprint("héllo")\n'),
    encoding: 'utf-8',
    foundBy: 'byte-order mark',
    text: 'print("héllo")\n',
  },
];

for (const example of cases) {
  test(`decodeText: ${example.name}`, () => {
    const decoded = decodeText(example.bytes);
    assert.ok(decoded, 'read as text');
    assert.equal(decoded.text, example.text);
    assert.equal(decoded.encoding.name, example.encoding);
    assert.equal(decoded.encoding.foundBy, example.foundBy);
    assert.ok(encodeText(decoded.text, decoded.encoding).equals(example.bytes), 'encodes back to the same bytes');
  });
}

test('decodeText: binary files are binary, also without a NUL byte or with a coding line', () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const sqlite = Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096, 7)]);
  const noNul = Buffer.from(Array.from({ length: 4096 }, (_, index) => ((index * 7919 + 13) % 255) + 1));
  const declaredButBinary = Buffer.concat([Buffer.from('# coding: latin-1\n'), noNul]);
  for (const bytes of [png, sqlite, noNul, declaredButBinary]) assert.equal(decodeText(bytes), null);
});

test('decodeText: a few bytes the detector cannot place are Latin-1 when they look like text', () => {
  assert.deepEqual(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0xff, 0xfe]))?.text, 'café\nÿþ');
  assert.equal(decodeText(Buffer.from([0x63, 0x61, 0x66, 0x93, 0x0a]))?.encoding.name, 'windows-1252');
  assert.equal(decodeText(Buffer.from([0x63, 0x01, 0x02, 0xe9, 0x0a])), null, 'control characters: binary');
});

test('decodeText: UTF-8 stays UTF-8, and a file that is valid UTF-8 only in its first 8 KB is not', () => {
  assert.equal(decodeText(Buffer.from('plain ascii\n'))?.encoding.name, 'utf-8');
  assert.equal(decodeText(Buffer.from('naïve café\n'))?.encoding.foundBy, 'utf-8');
  // A Latin-1 byte far into the file: reading it as UTF-8 would turn it into U+FFFD and an edit would write that back.
  const late = Buffer.concat([Buffer.from(`${'# ascii\n'.repeat(2000)}`), iconv.encode('nom = "Zoé"\n', 'latin1')]);
  const decoded = decodeText(late);
  assert.ok(decoded);
  assert.notEqual(decoded.encoding.name, 'utf-8');
  assert.ok(decoded.text.endsWith('nom = "Zoé"\n'));
});

test('read_file shows a Latin-1 file as text and says its encoding; edit_file changes only the bytes of the edit', async () => {
  const original = iconv.encode(latin1Source, 'latin1');
  await writeFile(join(workspace, 'prix.py'), original);
  const shown = await readTextForTool(workspace, { path: 'prix.py' });
  assert.match(shown, /^prix\.py \(lines 1-7 of 7; latin-1 \(declared\) text, kept by edits\)\n/);
  assert.match(shown, /\n4\tTAUX = \{"normal": 0\.20, "réduit": 0\.55\}\n/);

  const message = await editFileForTool(workspace, {
    path: 'prix.py',
    old_string: '"réduit": 0.55}',
    new_string: '"réduit": 0.055}',
  });
  assert.match(message, /^Edited prix\.py at line 4/);
  const written = await readFile(join(workspace, 'prix.py'));
  const expected = Buffer.from(
    original.toString('latin1').replace('"r\xe9duit": 0.55}', '"r\xe9duit": 0.055}'),
    'latin1',
  );
  assert.ok(written.equals(expected), 'only the edited bytes changed, in Latin-1');
});

test('edit_file in a UTF-16 file with CRLF keeps its byte-order mark, its encoding and its line endings', async () => {
  const original = iconv.encode(utf16Source, 'utf16le');
  await writeFile(join(workspace, 'Tarifs.cs'), original);
  const shown = await readTextForTool(workspace, { path: 'Tarifs.cs' });
  assert.match(shown, /Windows line endings, kept by edits; UTF-16LE \(byte-order mark\) text, kept by edits\)/);
  assert.doesNotMatch(shown, /[\r\0\ufeff]/);
  await editFileForTool(workspace, {
    path: 'Tarifs.cs',
    old_string: '    public const decimal Réduit = 0.55m;\n',
    new_string: '    // 5,5 %\n    public const decimal Réduit = 0.055m;\n',
  });
  const expected = iconv.encode(
    utf16Source.replace(
      '    public const decimal Réduit = 0.55m;\r\n',
      '    // 5,5 %\r\n    public const decimal Réduit = 0.055m;\r\n',
    ),
    'utf16le',
  );
  assert.ok((await readFile(join(workspace, 'Tarifs.cs'))).equals(expected));
});

test('write_file keeps an existing file in its encoding; new files are UTF-8', async () => {
  await writeFile(join(workspace, 'japonais.py'), iconv.encode(shiftJisSource, 'shift_jis'));
  const message = await writeFileForTool(workspace, {
    path: 'japonais.py',
    content: shiftJisSource.replace('1.08', '1.10'),
  });
  assert.match(message, /kept in Shift_JIS \(detected\)/);
  assert.ok(
    (await readFile(join(workspace, 'japonais.py'))).equals(
      iconv.encode(shiftJisSource.replace('1.08', '1.10'), 'shift_jis'),
    ),
  );
  await writeFileForTool(workspace, { path: 'nouveau.py', content: 'x = "é"\n' });
  assert.equal(await readFile(join(workspace, 'nouveau.py'), 'utf8'), 'x = "é"\n');
});

test('an edit that needs a character the file’s encoding cannot hold is refused, and the file is unchanged', async () => {
  const original = iconv.encode(latin1Source, 'latin1');
  await writeFile(join(workspace, 'euro.py'), original);
  await assert.rejects(
    editFileForTool(workspace, { path: 'euro.py', old_string: '0.20', new_string: '0.20  # 20 € sur 100 €' }),
    /"euro\.py" is latin-1 \(declared\) text: "€" cannot be written in latin-1/,
  );
  assert.ok((await readFile(join(workspace, 'euro.py'))).equals(original));
});

test('a binary file is still refused by read_file and edit_file, in words', async () => {
  await writeFile(join(workspace, 'data.db'), Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(512, 3)]));
  await assert.rejects(readTextForTool(workspace, { path: 'data.db' }), /"data\.db" is a binary file/);
  await assert.rejects(
    editFileForTool(workspace, { path: 'data.db', old_string: 'SQLite', new_string: 'x' }),
    /"data\.db" is a binary file/,
  );
});

test('decodeText: only a comment declares an encoding; code that mentions one does not', () => {
  const code = Buffer.from('const options = {encoding:latin1};\nconsole.log("naïve");\n');
  assert.equal(decodeText(code)?.encoding.name, 'utf-8');
  const ruby = iconv.encode('# encoding: iso-8859-15\nPRIX = "10 €"\n', 'iso-8859-15');
  assert.deepEqual(
    [decodeText(ruby)?.encoding.name, decodeText(ruby)?.text],
    ['iso-8859-15', '# encoding: iso-8859-15\nPRIX = "10 €"\n'],
  );
});

test('decodeText: a coding line naming UTF-8 in any spelling is UTF-8', () => {
  for (const name of ['utf8', 'UTF-8', 'utf_8'])
    assert.equal(decodeText(Buffer.from(`# -*- coding: ${name} -*-\nx = "é"\n`))?.encoding.name, 'utf-8', name);
});
