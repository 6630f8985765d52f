// What a test run's output says beyond its counts that no model call can fix: the command could
// not start (the shell's exit 126 or 127), or its runner found no tests. A baseline that says
// either ends the run (workflows/failures.ts), with the words these functions give it.
/** The program a command could not start, and the shell's line that says so. */
export interface CannotStart {
  program: string;
  line: string;
}

/** What of a test summary these read (TestSummary in testResults.ts has it). */
interface BaselineOutcome {
  exitCode: number | null;
  cannotStart?: CannotStart;
  noTests?: string;
}

/**
 * The line of a runner that found no tests and failed for it: pytest ("no tests ran in 0.01s", exit
 * 5), unittest on Python 3.12+ ("NO TESTS RAN", exit 5), jest, vitest and mocha (exit 1). A run that
 * exited 0 passes as it is: the repository's CI accepts it too.
 */
export function noTestsLine(output: string, exitCode: number | null): string | undefined {
  if (exitCode === 0 || exitCode === null) return undefined;
  const lines = output.split('\n').map((line) => line.trim());
  const said = lines.find((line) =>
    /^=*\s*no tests ran in [\d.]+s\s*=*$|^NO TESTS RAN\b|^No tests found, exiting with code \d+|^No test files found(?:, exiting with code \d+)?|^Error: No test files found\b/.test(
      line,
    ),
  );
  return said?.slice(0, 300);
}

/**
 * The program a command could not start: the shell's own exit codes (127: not found, 126: found but
 * not executable) with its line naming the program (dash, bash, env, npm's sh). Only when no runner
 * printed a summary: a runner that started and exited 127 itself is the tests' business.
 */
export function programThatCannotStart(output: string, exitCode: number | null): CannotStart | undefined {
  if (exitCode !== 126 && exitCode !== 127) return undefined;
  const lines = output.split('\n').map((line) => line.trim());
  for (const line of lines.reverse()) {
    const match =
      line.match(/^(?:\S*sh|bash)(?:: line \d+)?: (?:\d+: )?(.+?): (?:command )?not found$/) ??
      line.match(
        /^(?:\S*sh|bash)(?:: line \d+)?: (?:\d+: )?(.+?): (?:Permission denied|cannot execute.*|Is a directory)$/,
      ) ??
      line.match(/^env: [‘'"]?(.+?)[’'"]?: No such file or directory$/);
    if (match?.[1]) return { program: match[1].slice(0, 120), line: line.slice(0, 300) };
  }
  return { program: '', line: lines.find(Boolean)?.slice(0, 300) ?? '' };
}

/** Why a run ends when its baseline test command cannot start: no model call could fix the sandbox. */
export function describeCommandThatCannotStart(summary: BaselineOutcome): string | null {
  const cannotStart = summary.cannotStart;
  if (!cannotStart) return null;
  const what = cannotStart.program ? `\`${cannotStart.program}\`` : 'its program';
  const why =
    summary.exitCode === 126
      ? `${what} is there but cannot be run (exit 126)`
      : `${what} is not installed in the sandbox (exit 127)`;
  const said = cannotStart.line ? ` ("${cannotStart.line}")` : '';
  return `the test command cannot start: ${why}${said}. The environment has no toolchain that provides it: name the tool in durable-debugger.json (an image, setup commands or apt packages), or pass a test command that the sandbox can run.`;
}

/** Why a run ends when its baseline ran no tests: there is nothing failing to fix, and nothing to verify a fix by. */
export function describeNoTests(summary: BaselineOutcome): string | null {
  if (!summary.noTests) return null;
  return `the test command ran no tests: its runner said "${summary.noTests}" (exit code ${summary.exitCode}). There is no failing test to fix and none to verify a fix by: pass the test command that runs the repository's tests (--test-command, or "testCommand" in durable-debugger.json), or check that the tests are in the repository (a package's sdist often leaves them out).`;
}
