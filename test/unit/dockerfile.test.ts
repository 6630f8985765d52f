// The repository's durable-debugger.Dockerfile read as Docker's parser reads it (issue 33 item 3):
// every image it names is found however the file is written, and what could fetch from the host's
// network or that the reader does not understand is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDockerfile } from '../../src/sandbox/environment/dockerfile.js';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';

const images = (text: string) => {
  const parsed = parseDockerfile(text);
  return [...parsed.fromImages, ...parsed.copiedImages];
};

test('a FROM is found behind a line continuation followed by blanks, a comment or a blank line', () => {
  assert.deepEqual(images('FROM \\   \nevil.example/base:1\nRUN true\n'), ['evil.example/base:1']);
  assert.deepEqual(images('FROM \\\n# a comment inside the instruction\nevil.example/base:1\n'), [
    'evil.example/base:1',
  ]);
  assert.deepEqual(images('FROM \\\n\n   \nevil.example/base:1\n'), ['evil.example/base:1']);
  assert.deepEqual(images('  from   allowed:1 \\\n  AS  base\nFROM base\nRUN true\n'), ['allowed:1']);
  assert.deepEqual(images('FROM allowed:1\r\nFROM \\ \t\r\n evil:2\r\n'), ['allowed:1', 'evil:2']);
});

test('an escape directive changes the continuation character, as Docker reads it', () => {
  assert.deepEqual(images('# escape=`\nFROM `\nevil:1\nRUN dir c:\\\n'), ['evil:1']);
  assert.deepEqual(images('#   ESCAPE = `  \nFROM allowed:1 `  \n AS one\nFROM one\nCOPY --from=one `\n /a /b\n'), [
    'allowed:1',
  ]);
  // A directive after a comment or a blank line is a comment: the escape stays \.
  assert.deepEqual(images('# hello\n# escape=`\nFROM \\\nevil:1\n'), ['evil:1']);
  assert.deepEqual(images('\n# escape=`\nFROM \\\nevil:1\n'), ['evil:1']);
  assert.throws(() => parseDockerfile('# escape=x\nFROM a\n'), /escape="x" must be/);
  assert.throws(() => parseDockerfile('# escape=`\n# escape=\\\nFROM a\n'), /given twice/);
});

test('COPY --from an image is checked as FROM is; a stage, by name or index, is not', () => {
  const parsed = parseDockerfile(
    'FROM allowed:1 AS build\nRUN make\nFROM allowed:2\nCOPY --from=build /out /out\nCOPY --from=0 /a /a\nCOPY --from=someone/else:latest /etc/passwd /x\nCOPY --chown=1:1 --from=Other:3 /y /y\n',
  );
  assert.deepEqual(parsed.fromImages, ['allowed:1', 'allowed:2']);
  assert.deepEqual(parsed.copiedImages, ['someone/else:latest', 'Other:3']);
  assert.equal(parsed.readsRepository, false);
  // A stage named later, or the stage itself, is no earlier stage: an image.
  assert.deepEqual(parseDockerfile('FROM a AS first\nCOPY --from=first /x /x\n').copiedImages, ['first']);
  assert.deepEqual(parseDockerfile('FROM a\nCOPY --from=1 /x /x\n').copiedImages, ['1']);
  assert.throws(
    () => parseDockerfile('ARG I=x\nFROM a\nCOPY --from=$I /x /x\n'),
    /must name a stage or an image itself/,
  );
  assert.equal(parseDockerfile('FROM a\nCOPY . /src\n').readsRepository, true);
});

test('ADD of a URL or a git source is refused; ADD of a path of the repository is not', () => {
  for (const source of [
    'http://169.254.169.254/latest/meta-data/',
    'https://example.com/x.tgz',
    'HTTP://127.0.0.1:8233/namespaces',
    'git@github.com:someone/repo.git',
    'github.com/someone/repo',
    'git://example.com/repo',
  ])
    assert.throws(
      () => parseDockerfile(`FROM a\nADD ${source} /x\n`),
      /would be fetched by Docker on the host's network/,
      source,
    );
  assert.throws(() => parseDockerfile('FROM a\nADD ["http://127.0.0.1:8233/", "/x"]\n'), /would be fetched/);
  assert.throws(
    () => parseDockerfile('FROM a\nADD --checksum=sha256:00 https://e.com/x /x\n'),
    /ADD --checksum is not supported/,
  );
  assert.throws(() => parseDockerfile('FROM a\nADD \\\n  http://127.0.0.1/ /x\n'), /would be fetched/);
  assert.throws(() => parseDockerfile('ARG U=http://127.0.0.1/\nFROM a\nADD $U /x\n'), /uses a build argument/);
  assert.throws(
    () => parseDockerfile('FROM a\nADD "http"://127.0.0.1/ /x\n'),
    /would be fetched|uses a build argument/,
  );
  assert.equal(parseDockerfile('FROM a\nADD vendor/lib.tar.gz /opt/\n').readsRepository, true);
});

test('what the reader does not understand, or what would run or fetch outside the build, is refused', () => {
  assert.throws(() => parseDockerfile('# syntax=evil/frontend:1\nFROM a\n'), /names a builder frontend image/);
  assert.throws(
    () => parseDockerfile('FROM a\nRUN --mount=type=bind,from=evil:1,target=/x true\n'),
    /RUN --mount is not supported/,
  );
  assert.throws(() => parseDockerfile('FROM a\nRUN --network=host curl x\n'), /RUN --network is not supported/);
  assert.throws(() => parseDockerfile('FROM a\nRUN <<EOF\nFROM evil\nEOF\n'), /heredoc/);
  assert.throws(() => parseDockerfile('FROM a\nONBUILD RUN curl x\n'), /ONBUILD is not supported/);
  assert.throws(() => parseDockerfile('FROM a\nFETCH http://x /y\n'), /"FETCH" is not a Dockerfile instruction/);
  assert.throws(() => parseDockerfile('FROM a b c\n'), /FROM must be/);
  assert.throws(() => parseDockerfile('FROM "evil:1"\n'), /uses a build argument or quotes/);
  assert.throws(() => parseDockerfile('RUN true\nFROM a\n'), /RUN comes before the first FROM/);
  assert.throws(() => parseDockerfile('# only a comment\n'), /has no FROM line/);
  // The plan refuses such a file before anything is built.
  assert.throws(
    () =>
      planEnvironment(['durable-debugger.Dockerfile'], { 'durable-debugger.Dockerfile': 'FROM a\nADD http://x/ /y\n' }),
    /durable-debugger\.Dockerfile line 2: ADD "http:\/\/x\/" would be fetched/,
  );
});
