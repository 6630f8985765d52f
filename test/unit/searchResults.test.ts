// What search_code shows of grep's output: matches in the workspace's tree, without stray `\r`,
// with matches in ignored files (build artefacts) counted and left out unless asked for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatSearchResults, maxSearchMatchesShown } from '../../src/sandbox/workspace/searchResults.js';
import type { Tree, TreeEntry } from '../../src/sandbox/workspace/tree.js';

function treeOf(...paths: string[]): Tree {
  const entries: TreeEntry[] = paths.map((path) => ({
    path,
    kind: 'file',
    blob: '0'.repeat(64),
    size: 1,
    executable: false,
  }));
  return { digest: 'd', entries };
}

test('matches outside the tree are counted and left out; names with colons and CRLF lines come back exactly', () => {
  const output = [
    './src/a:b.py\u00003:x = 1\r',
    './dist/bundle.js\u00001:x = 1',
    './src/c.py\u00007:    x = 2',
    '',
  ].join('\n');
  assert.equal(
    formatSearchResults(output, treeOf('src/a:b.py', 'src/c.py'), '.', 'x ='),
    'src/a:b.py:3:x = 1\nsrc/c.py:7:    x = 2\n[1 matches in files ignored by .gitignore are not shown]',
  );
});

test('a search that names an ignored folder shows its matches; one with only ignored matches says so', () => {
  const output = 'dist/bundle.js\u00001:x = 1\n';
  assert.equal(formatSearchResults(output, treeOf('src/c.py'), 'dist', 'x'), 'dist/bundle.js:1:x = 1');
  assert.equal(
    formatSearchResults(`./${output}`, treeOf('src/c.py'), '.', 'x'),
    'No matches for /x/ in ..\n[1 matches in files ignored by .gitignore are not shown]',
  );
});

test('grep’s own messages are kept, and long results stop with a note', () => {
  const lines = Array.from({ length: maxSearchMatchesShown + 5 }, (_, index) => `a.py\u0000${index + 1}:x`);
  const shown = formatSearchResults(
    ['grep: b.py: Permission denied', ...lines].join('\n'),
    treeOf('a.py'),
    '.',
    'x',
  ).split('\n');
  assert.equal(shown[0], 'grep: b.py: Permission denied');
  assert.equal(shown.length, maxSearchMatchesShown + 1);
  assert.equal(shown.at(-1), `[stopped at ${maxSearchMatchesShown} matches; narrow the search]`);
});
