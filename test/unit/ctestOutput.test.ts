// C and C++ test output as the workflow reads it: CTest's summary and failed list, GoogleTest's
// lines, Unity's summary, and a build that fails read as a failed build, never "0 passed".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTestSummary, summarizeTestOutput, verifyFix } from '../../src/agent/testResults.js';

const ctestFailing = `[ 84%] Built target semver_tests
Internal ctest changing into directory: /opt/build
Test project /opt/build
    Start 1: Compare.CoreNumbers
1/7 Test #1: Compare.CoreNumbers ..............   Passed    0.00 sec
    Start 3: Compare.ReleaseAfterPrerelease
3/7 Test #3: Compare.ReleaseAfterPrerelease ...***Failed    0.00 sec
Running main() from /usr/src/googletest/googletest/src/gtest_main.cc
Note: Google Test filter = Compare.ReleaseAfterPrerelease
[==========] Running 1 test from 1 test suite.
[ RUN      ] Compare.ReleaseAfterPrerelease
/workspace/tests/version_test.cpp:17: Failure
[  FAILED  ] Compare.ReleaseAfterPrerelease (0 ms)
[==========] 1 test from 1 test suite ran. (0 ms total)
[  PASSED  ] 0 tests.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Compare.ReleaseAfterPrerelease

 1 FAILED TEST
    Start 8: Slow.Disabled
8/9 Test #8: Slow.Disabled ....................***Skipped   0.00 sec

71% tests passed, 2 tests failed out of 9

Total Test time (real) =   0.05 sec

The following tests did not run:
	  8 - Slow.Disabled (Skipped)

The following tests FAILED:
	  3 - Compare.ReleaseAfterPrerelease (Failed)
	  4 - Compare.SpecExampleOrder (SEGFAULT)
Errors while running CTest
`;

test('CTest’s summary gives the counts and its failed list the names; skipped tests are not passed', () => {
  const summary = summarizeTestOutput(ctestFailing, 8);
  assert.equal(summary.recognized, true);
  assert.deepEqual(
    { passed: summary.passed, failed: summary.failed, skipped: summary.skipped },
    { passed: 6, failed: 2, skipped: 1 },
  );
  assert.deepEqual(summary.failing, ['Compare.ReleaseAfterPrerelease', 'Compare.SpecExampleOrder']);
});

test('one CTest test that runs a whole GoogleTest binary: the binary’s failing tests are named too', () => {
  const output = `Test project /opt/build
1/1 Test #1: unit_tests .......................***Failed    0.02 sec
[ RUN      ] Parser.EmptyInput
[  FAILED  ] Parser.EmptyInput (0 ms)
[ RUN      ] Typed/Stack/0.PushPop
[  FAILED  ] Typed/Stack/0.PushPop, where TypeParam = int (0 ms)
[  PASSED  ] 10 tests.
[  FAILED  ] 2 tests, listed below:

0% tests passed, 1 tests failed out of 1

The following tests FAILED:
	  1 - unit_tests (Failed)
`;
  const summary = summarizeTestOutput(output, 8);
  assert.deepEqual(summary.failing, ['unit_tests', 'Parser.EmptyInput', 'Typed/Stack/0.PushPop']);
  assert.equal(summary.failed, 1);
});

test('a GoogleTest binary run on its own (make test): its summary lines', () => {
  const output = `[==========] Running 3 tests from 1 test suite.
[ RUN      ] Ring.Push
[       OK ] Ring.Push (0 ms)
[ RUN      ] Ring.Wrap
[  FAILED  ] Ring.Wrap (0 ms)
[ RUN      ] Ring.Later
[  SKIPPED ] Ring.Later (0 ms)
[==========] 3 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 2 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] Ring.Later
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Ring.Wrap
`;
  const summary = summarizeTestOutput(output, 1);
  assert.deepEqual([summary.passed, summary.failed, summary.skipped], [1, 1, 1]);
  assert.deepEqual(summary.failing, ['Ring.Wrap']);
});

test('Unity’s output (C projects’ make check)', () => {
  const output = `./tests/test_strbuf
tests/test_strbuf.c:39:test_append_grows:PASS
tests/test_strbuf.c:24:test_trim_both_ends:FAIL: Expected 'hello world' Was 'hello world
 '
tests/test_strbuf.c:41:test_later:IGNORE

-----------------------
3 Tests 1 Failures 1 Ignored 
FAIL
make: *** [Makefile:25: check] Error 1
`;
  const summary = summarizeTestOutput(output, 2);
  assert.deepEqual([summary.passed, summary.failed, summary.skipped], [1, 1, 1]);
  assert.deepEqual(summary.failing, ['test_trim_both_ends']);
});

test('a build that fails is a failed build naming each file that does not compile, not 0 passed; fixed, the tests count', () => {
  const output = `[ 25%] Building CXX object CMakeFiles/ringbuf.dir/src/byte_ring.cpp.o
/workspace/src/byte_ring.cpp:22:13: error: no declaration matches ‘std::size_t ringbuf::ByteRing::size()’
   22 | std::size_t ByteRing::size() noexcept { return count_; }
      |             ^~~~~~~~
/workspace/include/ringbuf/byte_ring.hpp:16:15: note: candidate is: ‘std::size_t ringbuf::ByteRing::size() const’
/workspace/src/parse.cpp:3:10: fatal error: missing.h: No such file or directory
gmake[2]: *** [CMakeFiles/ringbuf.dir/build.make:76: CMakeFiles/ringbuf.dir/src/byte_ring.cpp.o] Error 1
gmake: *** [Makefile:101: all] Error 2
`;
  const before = summarizeTestOutput(output, 2);
  assert.equal(before.recognized, true);
  assert.deepEqual(before.failing, [
    'build: src/byte_ring.cpp does not compile',
    'build: src/parse.cpp does not compile',
  ]);
  assert.equal(before.passed, 0);
  assert.match(formatTestSummary(before), /build: src\/byte_ring\.cpp does not compile/);
  const linkOnly = summarizeTestOutput(
    "/usr/bin/ld: libx.a(a.o): undefined reference to `foo'\ncollect2: error: ld returned 1 exit status\n",
    2,
  );
  assert.deepEqual(linkOnly.failing, ['build: the tests do not link']);
  const after = summarizeTestOutput('100% tests passed, 0 tests failed out of 3\n', 0);
  assert.equal(verifyFix(before, after).fixed, true);
  // Other runners' output is not read as a C build.
  assert.equal(summarizeTestOutput('error: something went wrong\n', 1).recognized, false);
});
