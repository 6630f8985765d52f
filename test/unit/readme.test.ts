// The README is a front page (issue 24): short, starting with the two commands, linking every page
// of docs/; no link of the README or docs/ points outside the repository, and every one of them
// finds its file and heading.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/config.js';

const maxFrontPageLines = 150;

const read = (path: string) => readFileSync(join(projectRoot, path), 'utf8');
const docsPages = () =>
  readdirSync(join(projectRoot, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);

/** The text outside fenced code blocks and inline code: what Markdown renders as prose (and links). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every link target of a page: inline links and images, reference definitions, autolinks and bare URLs. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] as string),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] as string),
    ...[...text.matchAll(/<((?:[a-z][a-z0-9+.-]*:|www\.)[^>\s]+)>/gi)].map((match) => match[1] as string),
    ...[...text.matchAll(/(?<![(<\w/])((?:https?|ftp):\/\/[^\s)>\]]+|www\.[^\s)>\]]+)/gi)].map(
      (match) => match[1] as string,
    ),
  ];
  return [...new Set(targets)];
}

/** Why a link of `page` does not stay inside the repository, or null when it finds its file and heading. */
function linkProblem(page: string, target: string, readPage: (path: string) => string | null): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//') || target.startsWith('www.'))
    return `${page} links outside the repository: ${target}`;
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? page : relative(projectRoot, resolve(dirname(join(projectRoot, page)), path));
  if (file.startsWith('..')) return `${page} links outside the repository: ${target}`;
  const content = readPage(file);
  if (content === null) return `${page} links to ${target}, which is not in the repository`;
  if (anchor && file.endsWith('.md') && !headingAnchors(content).includes(anchor))
    return `${page} links to ${target}: ${file} has no heading #${anchor}`;
  return null;
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as dashes. */
function headingAnchors(markdown: string): string[] {
  return [...prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((match) =>
    (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-'),
  );
}

function readInRepository(path: string): string | null {
  const full = join(projectRoot, path);
  if (!existsSync(full)) return null;
  return path.endsWith('.md') ? readFileSync(full, 'utf8') : '';
}

test(`the README is a front page: at most ${maxFrontPageLines} lines, the two commands first, a picture of the loop`, () => {
  const readme = read('README.md');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= maxFrontPageLines, `README.md has ${lines} lines`);
  const opening = readme.split('\n').slice(0, 6).join('\n');
  assert.match(opening, /^npm ci && npm run demo\s+#/m);
  assert.match(opening, /^npm ci && npm test\s+#/m);
  assert.match(readme, /^```mermaid\n[\s\S]*?debugRepository[\s\S]*?^```$/m, 'a Mermaid picture of the loop');
});

test('the README links every page of docs/', () => {
  const linked = new Set(linkTargets(read('README.md')).map((target) => target.split('#')[0]));
  const pages = docsPages();
  assert.ok(pages.length >= 8, 'docs/ holds the pages moved out of the README');
  assert.deepEqual(
    pages.filter((page) => !linked.has(page)),
    [],
  );
});

test('no link of the README or docs/ points outside the repository, and each finds its file and heading', () => {
  const problems = ['README.md', ...docsPages()].flatMap((page) =>
    linkTargets(read(page))
      .map((target) => linkProblem(page, target, readInRepository))
      .filter((problem): problem is string => problem !== null),
  );
  assert.deepEqual(problems, []);
});

test('the link check finds every kind of link that leaves the repository or finds nothing', () => {
  const page = [
    'See [the docs](https://example.com/docs) and <https://example.com>.',
    'Bare: https://temporal.io/ and www.example.com here.',
    '[ref]: http://example.org/ref',
    '![a picture](//cdn.example.com/a.png) and [up](../../outside.md) and [gone](docs/missing.md)',
    '[no heading](docs/runs.md#no-such-heading) [fine](docs/runs.md#approval) [also fine](#a-heading)',
    '`https://in-code.example.com` is code, not a link.',
    '```sh\ncurl https://in-a-block.example.com\n```',
    '## A heading',
  ].join('\n');
  const problems = linkTargets(page)
    .map((target) => linkProblem('README.md', target, (path) => (path === 'README.md' ? page : readInRepository(path))))
    .filter(Boolean);
  assert.equal(problems.length, 9, problems.join('\n'));
});

test('the configuration page names every environment variable the settings read', () => {
  const settings = read('src/config.ts');
  const schema = settings.slice(settings.indexOf('const environmentSchema'), settings.indexOf('});'));
  const variables = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1] as string);
  assert.ok(variables.length >= 10, 'the settings were read');
  const page = read('docs/configuration.md');
  assert.deepEqual(
    variables.filter((name) => !page.includes(`\`${name}\``)),
    [],
  );
});
