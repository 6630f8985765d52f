// The arguments of a `pip install` that CI runs for the tests (a CI job's command line, a nox
// session's session.install), read as pip reads them: packages, `-r`/`-c` files (relative to the
// repository's root, where CI runs them), and the project itself, whose extras are what its tests
// need (projectLine.ts). A word with a shell variable or an Actions expression is CI's to fill and
// is left out, and so are pip, setuptools and wheel (CI upgrades its own; the venv has its pip), the
// test runners' launchers (tox, nox: what they install is read from their own files) and the
// project tools (Poetry, Hatch, build, twine).
import { projectLineExtras } from './projectLine.js';
import { requirementName } from './pythonProject.js';

/** What CI installs beside the project. */
export interface TestInstalls {
  /** Requirement lines: packages, `-r ./file`, `-c ./file`; the project itself left out. */
  requirements: string[];
  /** The extras the project is installed with (`-e ".[test]"`). */
  extras: string[];
}

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

export function pipInstallArguments(words: readonly string[]): TestInstalls {
  const requirements: string[] = [];
  const extras: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    if (optionsWithValue.test(word)) {
      index++;
      continue;
    }
    const option = word.match(/^(-r|--requirement|-c|--constraint|-e|--editable)(?:=(.+))?$/);
    if (!option && word.startsWith('-')) continue;
    const value = option ? (option[2] ?? words[++index]) : word;
    if (value === undefined || /[$*`]/.test(value)) continue;
    const flag = option?.[1];
    const projectExtras = projectLineExtras(flag === '-e' || flag === '--editable' ? `-e ${value}` : value);
    if (projectExtras) extras.push(...projectExtras);
    else if (flag === '-r' || flag === '--requirement') requirements.push(`-r ./${value}`);
    else if (flag === '-c' || flag === '--constraint') requirements.push(`-c ./${value}`);
    else if (!flag && !/^\.\.?(\/|$)/.test(value) && !notForTests.has(requirementName(value))) requirements.push(value);
  }
  return { requirements: [...new Set(requirements)], extras: [...new Set(extras)] };
}
