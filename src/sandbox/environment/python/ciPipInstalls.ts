// What the CI test job's own `pip install` commands install (ciTestJob.ts gives its steps' commands):
// many projects name their test tools only there (`pip install pytest responses`), or the extras
// they test with (`pip install -e ".[test,yaml]"`). Read as the shell would split the words; a word
// with a variable or an expression (`$PKG`, `${{ matrix.django }}`) is CI's to fill and is left out,
// and so are pip, setuptools and wheel (CI upgrades its own; the venv has its pip), the test runners'
// launchers (tox, nox: what they install is read from their own files) and the project tools
// (poetry, hatch, build, twine).
import { projectLineExtras } from './projectLine.js';
import type { TestInstalls } from './noxConfig.js';
import { requirementName } from './pythonProject.js';

/** The file the build gets them in, beside the repository's requirements files. */
export const ciRequirements = 'durable-debugger-ci-deps.txt';

const notForTests = new Set([
  'pip',
  'setuptools',
  'wheel',
  'tox',
  'nox',
  'uv',
  'pipx',
  'poetry',
  'pdm',
  'hatch',
  'pipenv',
  'build',
  'twine',
]);
// pip install's options that take a value (their value is no requirement).
const optionsWithValue =
  /^(-i|--index-url|--extra-index-url|-f|--find-links|--only-binary|--no-binary|--platform|--python-version|--implementation|--abi|-t|--target|--prefix|--root|--src|--upgrade-strategy|--progress-bar|--log|--cache-dir|--trusted-host|--proxy|--timeout|--retries|--config-settings|-C|--global-option|--python)$/;

export function ciPipInstalls(commands: readonly string[]): TestInstalls {
  const requirements: string[] = [];
  const extras: string[] = [];
  for (const command of commands.flatMap(shellCommands)) {
    const words = shellWords(command);
    const start = pipInstallStart(words);
    if (start === -1) continue;
    for (let index = start; index < words.length; index++) {
      const word = words[index] as string;
      const option = word.match(/^(-r|--requirement|-c|--constraint|-e|--editable)(?:=(.+))?$/);
      if (optionsWithValue.test(word)) {
        index++;
        continue;
      }
      if (!option && word.startsWith('-')) continue;
      const value = option ? (option[2] ?? words[++index]) : word;
      if (value === undefined || /[$*`]/.test(value)) continue;
      const flag = option?.[1];
      const projectExtras = projectLineExtras(flag === '-e' || flag === '--editable' ? `-e ${value}` : value);
      if (projectExtras) extras.push(...projectExtras);
      else if (flag === '-r' || flag === '--requirement') requirements.push(`-r ./${value}`);
      else if (flag === '-c' || flag === '--constraint') requirements.push(`-c ./${value}`);
      else if (!flag && !/^\.\.?(\/|$)/.test(value) && !notForTests.has(requirementName(value)))
        requirements.push(value);
    }
  }
  return { requirements: [...new Set(requirements)], extras: [...new Set(extras)] };
}

/** A run text's commands: lines joined where they end in `\`, split at `&&`, `||`, `;` and newlines. */
function shellCommands(run: string): string[] {
  return run.replace(/\\\r?\n/g, ' ').split(/\n|&&|\|\||;/);
}

/** Words as the shell splits them: whitespace outside quotes, the quotes removed; an Actions expression one word with a `$`. */
function shellWords(command: string): string[] {
  return [...command.replace(/\$\{\{[^}]*\}\}/g, '$expression').matchAll(/(?:"[^"]*"|'[^']*'|[^\s"']+)+/g)].map(
    (match) => match[0].replace(/["']/g, ''),
  );
}

/** Where `pip install`'s arguments start (`pip`, `pip3`, `python -m pip`, `uv pip`), or -1. */
function pipInstallStart(words: string[]): number {
  // After a shell keyword of an `if`/`for` (the starter workflow's `then pip install -r requirements.txt`) or sudo.
  let index = words.findIndex((word) => !['then', 'do', 'else', 'sudo', 'time', '{'].includes(word));
  if (/^(python(3(\.\d+)?)?|py)$/.test(words[index] ?? '') && words[index + 1] === '-m') index += 2;
  else if (words[index] === 'uv') index++;
  if (!/^pip3?(\.\d+)?$/.test(words[index] ?? '') || words[index + 1] !== 'install') return -1;
  return index + 2;
}
