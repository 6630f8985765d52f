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

test('run_tests with a path selects tests the way each runner does', () => {
  const go = 'go test -v ./...';
  assert.equal(testCommandFor(go, 'example.com/m/a.TestParse'), "go test -v -run '^TestParse$' 'example.com/m/a'");
  assert.equal(
    testCommandFor(go, 'example.com/m/a.TestSub/two.five'),
    "go test -v -run '^TestSub$/^two\\.five$' 'example.com/m/a'",
  );
  assert.equal(testCommandFor(go, 'a/a_test.go'), "go test -v './a'");
  assert.equal(testCommandFor(go, 'datasize_test.go'), "go test -v '.'");
  assert.equal(testCommandFor(go, 'internal/parse'), "go test -v './internal/parse'");
  const cargo = 'cargo test --workspace --no-fail-fast --offline --locked';
  assert.equal(testCommandFor(cargo, 'crates/semver-lite/tests/compare.rs'), `${cargo} --test 'compare'`);
  assert.equal(testCommandFor(cargo, 'tests::parses_a_range'), `${cargo} 'tests::parses_a_range'`);
  const maven = 'python3 /opt/durable-debugger/surefire.py mvn -B -o -fae -Dmaven.test.failure.ignore=true test';
  const tail = ' -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false';
  assert.equal(
    testCommandFor(maven, 'io.github.slugkit.SlugsTest.keepsWholeWordsWhenTruncating'),
    `${maven} '-Dtest=SlugsTest#keepsWholeWordsWhenTruncating'${tail}`,
  );
  assert.equal(
    testCommandFor(maven, 'core/src/test/java/org/example/MoneyTest.java'),
    `${maven} '-Dtest=MoneyTest'${tail}`,
  );
  assert.equal(testCommandFor(maven, 'org.example.MoneyTest'), `${maven} '-Dtest=MoneyTest'${tail}`);
  const ctest = 'ctest --test-dir /opt/build --output-on-failure';
  assert.equal(testCommandFor(ctest, 'Compare.SpecExampleOrder'), `${ctest} -R '^Compare\\.SpecExampleOrder$'`);
  // make and Gradle's quoted command cannot select: the whole suite runs.
  assert.equal(testCommandFor('make check', 'test_trim_both_ends'), 'make check');
});
