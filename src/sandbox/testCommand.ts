// Finds the command that runs a repository's tests, from the files it has.
import { shellQuote } from './shellQuote.js';

export const pytestCommand = 'python3 -m pytest -q -rfE -p no:cacheprovider';

export function detectTestCommand(files: string[], packageJson: string | null): string | null {
  const names = files.map((path) => path.split('/').pop() ?? path);
  if (packageJson !== null) {
    const scripts = safeJson(packageJson)?.scripts as Record<string, unknown> | undefined;
    const test = typeof scripts?.test === 'string' ? scripts.test.trim() : '';
    // The script itself, as npm would run it (the sandbox image has node but not npm).
    if (test && !test.includes('no test specified')) return `PATH="$PWD/node_modules/.bin:$PATH" ${test}`;
  }
  if (
    names.some((name) => /^test_.*\.py$|_test\.py$|^conftest\.py$|^pytest\.ini$/.test(name)) ||
    (files.includes('pyproject.toml') && files.some((path) => path.endsWith('.py')))
  ) {
    return pytestCommand;
  }
  if (names.some((name) => /\.test\.[cm]?js$|\.spec\.[cm]?js$/.test(name))) return 'node --test';
  if (files.includes('go.mod')) return 'go test -v ./...';
  if (files.includes('Cargo.toml')) return 'cargo test';
  return null;
}

/**
 * The command that runs only `target` (a file or a test id as the summary names it), for run_tests
 * with a path: each runner selects tests its own way. Where a runner cannot select (make, Gradle's
 * quoted command), the whole suite runs.
 */
export function testCommandFor(command: string, target: string | undefined): string {
  if (!target) return command;
  if (/\bgo test\b/.test(command) && command.includes('./...')) return command.replace('./...', () => goTarget(target));
  if (/\bcargo test\b/.test(command)) return `${command} ${cargoTarget(target)}`;
  if (/\bmvn\b.*\btest\b/.test(command)) return `${command} ${mavenTarget(target)}`;
  if (/\bctest\b/.test(command)) return `${command} -R ${shellQuote(`^${escapeRegExp(target)}$`)}`;
  if (/\bmake\b/.test(command) || /\bgradlew?\b/.test(command)) return command;
  return `${command} ${shellQuote(target)}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `example.com/m/a.TestParse/case` (the summary's name), a test file, or a package folder. */
function goTarget(target: string): string {
  const test = target.match(/^(.+?)\.((?:Test|Benchmark|Example|Fuzz)\w*)((?:\/.*)?)$/);
  if (test && !test[1]?.endsWith('.go')) {
    const [, pkg, name, sub = ''] = test as unknown as [string, string, string, string?];
    const run = [name, ...sub.split('/').filter(Boolean)].map((part) => `^${escapeRegExp(part)}$`).join('/');
    // The summary names the package by its import path, which go test takes as it is.
    return `-run ${shellQuote(run)} ${shellQuote(pkg)}`;
  }
  // A test file is compiled with its package: the file's folder.
  const folder = target.endsWith('.go') ? target.split('/').slice(0, -1).join('/') : target;
  return shellQuote(folder ? `./${folder.replace(/^\.\//, '')}` : '.');
}

/** An integration test file (`tests/slug.rs`) by its target name; anything else as libtest's name filter. */
function cargoTarget(target: string): string {
  const file = target.match(/(?:^|\/)tests\/([\w-]+)\.rs$/);
  return file ? `--test ${shellQuote(file[1] as string)}` : shellQuote(target);
}

/** Surefire's -Dtest: a test file or a class by its simple name, `Class#method` for a method. */
function mavenTarget(target: string): string {
  const file = target.match(/([\w$]+)\.(java|kt|groovy|scala)$/);
  const method = target.match(/^(?:[\w$]+\.)*([A-Z][\w$]*)[.#]([a-z_$][\w$]*)$/);
  const simpleClass = target.match(/^(?:[\w$]+\.)*([A-Z][\w$]*)$/);
  const selector = file ? file[1] : method ? `${method[1]}#${method[2]}` : simpleClass ? simpleClass[1] : target;
  // Modules of a reactor without that test are no failure.
  return `${shellQuote(`-Dtest=${selector}`)} -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false`;
}

function safeJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
