// What the CI test job's own `pip install` commands install (ciTestJob.ts gives its steps' commands):
// many projects name their test tools only there (`pip install pytest responses`), or the extras
// they test with (`pip install -e ".[test,yaml]"`). Its words split as the shell splits them, its
// arguments read as pip reads them (pipInstallArguments.ts).
import { pipInstallArguments, type TestInstalls } from './pipInstallArguments.js';

/** The file the build gets them in, beside the repository's requirements files. */
export const ciRequirements = 'durable-debugger-ci-deps.txt';

export function ciPipInstalls(commands: readonly string[]): TestInstalls {
  const installs = commands.flatMap(shellCommands).flatMap((command) => {
    const words = shellWords(command);
    const start = pipInstallStart(words);
    return start === -1 ? [] : [pipInstallArguments(words.slice(start))];
  });
  return {
    requirements: [...new Set(installs.flatMap((install) => install.requirements))],
    extras: [...new Set(installs.flatMap((install) => install.extras))],
  };
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
