// cargo test's output, captured from cargo 1.95 (test/unit/runnerOutput/captures.md): libtest's
// lines per test binary, doc-tests by file and line, and what did not compile named as a build
// failure, never as "0 passed".
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatTestSummary, summarizeTestOutput } from '../../src/agent/testResults.js';

const capture = (file: string) => readFileSync(new URL(`./runnerOutput/${file}`, import.meta.url), 'utf8');

test('a workspace: every test binary counted, failures named by the binary they ran in', () => {
  const summary = summarizeTestOutput(capture('cargo-workspace.txt'), 101);
  assert.equal(summary.recognized, true);
  assert.deepEqual([summary.passed, summary.failed, summary.skipped], [6, 2, 0]);
  assert.deepEqual(summary.failing, [
    'render::history_lists_every_release_oldest_first',
    'semver_lite::tests::prerelease_sorts_before_its_release',
  ]);
});

test('stderr headers read ahead of stdout lines (as the sandbox merges the two) still name each failure by its binary', () => {
  // cargo's "Running" lines go to stderr, libtest's to stdout: in the sandbox's merged output the next header can come first.
  const lines = capture('cargo-workspace.txt').split('\n');
  const header = lines.findIndex(
    (line) => line.includes('Running unittests src/lib.rs') && line.includes('semver_lite'),
  );
  const moved = lines.splice(header, 1);
  const renderBlock = lines.findIndex((line) => line.includes('Running tests/render.rs')) + 1;
  lines.splice(renderBlock, 0, ...moved);
  const summary = summarizeTestOutput(lines.join('\n'), 101);
  assert.deepEqual(summary.failing, [
    'render::history_lists_every_release_oldest_first',
    'semver_lite::tests::prerelease_sorts_before_its_release',
  ]);
});

test('failures of one binary are named in the same order whichever of its parallel tests ended first', () => {
  // Fixture 68's two failures came in either order from run to run (libtest runs tests in parallel).
  const run = (first: string, second: string) =>
    summarizeTestOutput(
      [
        '     Running tests/decode.rs (target/debug/deps/decode-0123456789abcdef)',
        '',
        'running 3 tests',
        `test ${first} ... FAILED`,
        'test decodes_pairs ... ok',
        `test ${second} ... FAILED`,
        '',
        'test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
      ].join('\n'),
      101,
    ).failing;
  const expected = ['decode::error_message_names_the_position', 'decode::invalid_second_digit_reports_its_index'];
  assert.deepEqual(run('invalid_second_digit_reports_its_index', 'error_message_names_the_position'), expected);
  assert.deepEqual(run('error_message_names_the_position', 'invalid_second_digit_reports_its_index'), expected);
});

test('a failing doc-test is named by its file, item and line', () => {
  const summary = summarizeTestOutput(capture('cargo-doctest.txt'), 101);
  assert.deepEqual([summary.passed, summary.failed], [4, 1]);
  assert.deepEqual(summary.failing, ['src/lib.rs - slugify (line 8)']);
});

test('a compile error is a failure of the build of each target, not "0 passed"', () => {
  const summary = summarizeTestOutput(capture('cargo-compile-error.txt'), 101);
  assert.equal(summary.recognized, true);
  assert.equal(summary.passed, 0);
  assert.deepEqual(summary.failing, [
    'semver-lite (lib): does not compile',
    'semver-lite (lib test): does not compile',
  ]);
  assert.match(formatTestSummary(summary), /semver-lite \(lib test\): does not compile/);
});

test('cargo refusing to build (a dependency the offline sandbox does not have) is said in its own words', () => {
  const summary = summarizeTestOutput(capture('cargo-offline-refusal.txt'), 101);
  assert.equal(summary.failed, 1);
  assert.deepEqual(summary.failing, ['cargo: no matching package named `ryu` found']);
});

test('a compiler killed by the memory limit is named so', () => {
  const output = [
    '   Compiling heavy v0.1.0 (/workspace/heavy)',
    'error: could not compile `heavy` (lib)',
    '',
    'Caused by:',
    "  process didn't exit successfully: `rustc --crate-name heavy` (signal: 9, SIGKILL: kill)",
  ].join('\n');
  assert.deepEqual(summarizeTestOutput(output, 101).failing, [
    'heavy (lib): the compiler was killed (signal 9: out of memory?)',
  ]);
});

test('the old one-binary form still reads, and pytest output is not taken for cargo', () => {
  const cargo = summarizeTestOutput(
    'running 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n',
    101,
  );
  assert.deepEqual([cargo.passed, cargo.failed, cargo.failing], [1, 1, ['tests::b']]);
  const pytest = summarizeTestOutput('FAILED test_x.py::test_a - assert 1 == 2\n1 failed, 3 passed in 0.05s', 1);
  assert.deepEqual([pytest.passed, pytest.failed, pytest.failing], [3, 1, ['test_x.py::test_a']]);
});
