// The house tells its architecture (issue 24, docs/architecture.md): the top level is the design
// card's product plus one home for everything else, and a file name says one job: no two files
// of the product and its tooling share a name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { basename } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/config.js';

/** The design card's top level: the product's face. */
const product = [
  'package.json',
  'tsconfig.json',
  'src',
  'workflows',
  'activities',
  'fixtures',
  'docker-compose.yml',
  'test',
];
/** One home for everything else, and the files tools look for at the top. */
const homes = ['deploy', 'docs', 'bench', 'harness', 'scripts'];
const topFiles = ['README.md', 'package-lock.json', 'eslint.config.js'];

/** Folders whose files copy other projects or hold recorded data: their names are not ours to choose. */
const copied = ['fixtures/', 'test/histories/', 'test/wild-replies/', 'test/integration/repositories/'];

function trackedFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  assert.equal(listed.status, 0, listed.stderr);
  return listed.stdout.split('\n').filter(Boolean);
}

/** What does not belong at the top: anything but the product, the homes and the few top files (dotfiles aside). */
function strangersAtTheTop(files: string[]): string[] {
  const top = new Set(files.map((file) => file.split('/')[0] as string));
  return [...top].filter((name) => !name.startsWith('.') && ![...product, ...homes, ...topFiles].includes(name)).sort();
}

/** File names that more than one file carries, with those files. */
function repeatedNames(files: string[]): string[] {
  const byName = new Map<string, string[]>();
  for (const file of files) {
    if (copied.some((folder) => file.startsWith(folder))) continue;
    byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
  }
  return [...byName.values()].filter((paths) => paths.length > 1).map((paths) => paths.join(' and '));
}

test('the top level is the design card’s product and one home for everything else', () => {
  const files = trackedFiles();
  const top = new Set(files.map((file) => file.split('/')[0]));
  assert.deepEqual(
    product.filter((name) => !top.has(name)),
    [],
    'the product is all there',
  );
  assert.deepEqual(strangersAtTheTop(files), []);
});

test('no two files of the product and its tooling share a name', () => {
  assert.deepEqual(repeatedNames(trackedFiles()), []);
});

test('the layout checks catch a stranger at the top and a repeated name', () => {
  assert.deepEqual(strangersAtTheTop(['src/a.ts', 'Dockerfile', 'lab/harness.ts', '.ci/run', 'docs/a.md']), [
    'Dockerfile',
    'lab',
  ]);
  assert.deepEqual(repeatedNames(['bench/run.ts', 'src/agent/run.ts', 'fixtures/a/x.py', 'fixtures/b/x.py']), [
    'bench/run.ts and src/agent/run.ts',
  ]);
});
