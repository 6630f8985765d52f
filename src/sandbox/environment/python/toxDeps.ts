// What a project's tox.ini installs for its tests: [testenv]'s `deps`, as `tox` in CI installs them
// beside the project. Many libraries declare their test tools (pytest plugins, freezegun, hypothesis)
// nowhere else. Read without an INI parser: tox's own rules for the lines that matter here.

/** The file the build gets them in, beside the repository's requirements files (`-r` lines stay relative to the root). */
export const toxRequirements = 'durable-debugger-tox-deps.txt';

/**
 * [testenv]'s `deps`, one requirement or pip option a line: continuation lines are indented; a
 * factor-conditional line (`py38: mock`) is for one named environment, not the base one, and a line
 * with any other substitution than {toxinidir} cannot be read without tox: both are left out, as
 * are the project itself (`.`, `-e .`, `.[tests]`) and comments.
 */
export function toxTestDeps(text: string | undefined): string[] {
  if (text === undefined) return [];
  const section = text.replace(/\r\n/g, '\n').match(/^\[testenv\][ \t]*\n((?:(?!\[)[^\n]*\n?)*)/m)?.[1] ?? '';
  const value = section.match(/^deps[ \t]*=[ \t]*([^\n]*(?:\n[ \t]+[^\n]*|\n[ \t]*(?=\n))*)/m)?.[1] ?? '';
  return value
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line && !/^[\w{},.!-]+:\s/.test(line))
    .map((line) => line.replace(/\{toxinidir\}\/?/g, './').replace(/^(-[rc])\s*/, '$1 '))
    .filter(
      (line) =>
        !/[{}]/.test(line) && !/^(-e\s+)?\.\.?(\/|\[|$)/.test(line) && !/^(-e\s+)?\.\/?(\[[^\]]*\])?$/.test(line),
    );
}
