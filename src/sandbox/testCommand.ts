// Finds the command that runs a repository's tests, from the files it has.

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

/** The command that runs only `target` (a file or test id), for run_tests with a path. */
export function testCommandFor(command: string, target: string | undefined): string {
  if (!target) return command;
  const quoted = `'${target.replace(/'/g, `'\\''`)}'`;
  if (command.startsWith('go test')) return command.replace('./...', `./${quoted}`);
  return `${command} ${quoted}`;
}

function safeJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
