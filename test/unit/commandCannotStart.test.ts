// The shell's own lines for a program it cannot start, as each shell prints them: the run ends
// before any model call when the baseline's command is one of these (workflows/debugRepository.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCommandThatCannotStart } from '../../src/agent/baselineProblems.js';
import { summarizeTestOutput } from '../../src/agent/testResults.js';

test('the program a shell could not start is named, whatever the shell', () => {
  const cases: Array<[string, number, string]> = [
    ['sh: 1: go: not found\n', 127, 'go'],
    ['/bin/sh: 1: cargo: not found', 127, 'cargo'],
    ['bash: line 1: mvn: command not found', 127, 'mvn'],
    ['bash: bundle: command not found\n', 127, 'bundle'],
    ["env: 'ctest': No such file or directory", 127, 'ctest'],
    ['/bin/sh: 1: ./run-tests.sh: Permission denied', 126, './run-tests.sh'],
  ];
  for (const [output, exitCode, program] of cases) {
    const summary = summarizeTestOutput(output, exitCode);
    assert.equal(summary.cannotStart?.program, program, output);
    assert.match(describeCommandThatCannotStart(summary) ?? '', new RegExp(`\`${program.replace('.', '\\.')}\``));
  }
});

test('a runner that started is not a command that cannot start', () => {
  // pytest ran and printed its summary; its own exit code is the tests' business.
  assert.equal(summarizeTestOutput('==== 1 failed, 2 passed in 0.1s ====\n', 127).cannotStart, undefined);
  // Another exit code, or a timeout, is no shell's "not found".
  assert.equal(summarizeTestOutput('sh: 1: go: not found', 1).cannotStart, undefined);
  assert.equal(summarizeTestOutput('sh: 1: go: not found', 127, true).cannotStart, undefined);
  assert.equal(describeCommandThatCannotStart(summarizeTestOutput('FAILED', 1)), null);
});
