import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectTestCommand, pytestCommand, testCommandFor } from '../../src/sandbox/testCommand.js';

test('test commands are detected from the repository files', () => {
  assert.equal(detectTestCommand(['src/stats.py', 'tests/test_stats.py'], null), pytestCommand);
  assert.equal(
    detectTestCommand(['package.json', 'sum.test.js'], '{"scripts":{"test":"node --test"}}'),
    'PATH="$PWD/node_modules/.bin:$PATH" node --test',
  );
  assert.equal(detectTestCommand(['lib.mjs', 'lib.test.mjs'], null), 'node --test');
  assert.equal(detectTestCommand(['go.mod', 'main.go'], null), 'go test -v ./...');
  assert.equal(detectTestCommand(['Cargo.toml', 'src/lib.rs'], null), 'cargo test');
  assert.equal(detectTestCommand(['README.md'], null), null);
});

test('a single test target is quoted for the shell', () => {
  assert.equal(
    testCommandFor(pytestCommand, "tests/test_a.py::test_it's"),
    `${pytestCommand} 'tests/test_a.py::test_it'\\''s'`,
  );
  assert.equal(testCommandFor('node --test', undefined), 'node --test');
});
