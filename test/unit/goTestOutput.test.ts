// go test's own output (captured from go1.26.8 and go1.22.12 on a module with a passing, a failing
// and a skipped subtest, a package that does not compile, a TestMain that panics and a package
// without tests) read into per-test results and per-package failures.
import assert from 'node:assert/strict';
import test from 'node:test';
import { parseGoTestOutput } from '../../src/agent/goTestOutput.js';
import { formatTestSummary, summarizeTestOutput } from '../../src/agent/testResults.js';

const verbose =
  '# example.com/m/b [example.com/m/b.test]\nb/b.go:2:23: undefined: undefinedThing\n=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestSub\n=== RUN   TestSub/one\n=== RUN   TestSub/two\n    a_test.go:6: boom\n=== RUN   TestSub/skip\n    a_test.go:7: later\n--- FAIL: TestSub (0.00s)\n    --- PASS: TestSub/one (0.00s)\n    --- FAIL: TestSub/two (0.00s)\n    --- SKIP: TestSub/skip (0.00s)\nFAIL\nFAIL\texample.com/m/a\t0.013s\nFAIL\texample.com/m/b [build failed]\npanic: init failed\n\ngoroutine 1 [running]:\nexample.com/m/c.TestMain(...)\n\t/tmp/gop/c/c_test.go:3\nmain.main()\n\t_testmain.go:46 +0xaa\nFAIL\texample.com/m/c\t0.009s\n?   \texample.com/m/d\t[no test files]\nFAIL\n';

const machineReadable =
  '{"ImportPath":"example.com/m/b [example.com/m/b.test]","Action":"build-output","Output":"# example.com/m/b [example.com/m/b.test]\\n"}\n{"ImportPath":"example.com/m/b [example.com/m/b.test]","Action":"build-output","Output":"b/b.go:2:23: undefined: undefinedThing\\n"}\n{"ImportPath":"example.com/m/b [example.com/m/b.test]","Action":"build-fail"}\n{"Time":"2026-12-03T09:23:12.590829293Z","Action":"start","Package":"example.com/m/a"}\n{"Time":"2026-12-03T09:23:12.591299907Z","Action":"start","Package":"example.com/m/b"}\n{"Time":"2026-12-03T09:23:12.591324368Z","Action":"output","Package":"example.com/m/b","Output":"FAIL\\texample.com/m/b [build failed]\\n"}\n{"Time":"2026-12-03T09:23:12.591338175Z","Action":"fail","Package":"example.com/m/b","Elapsed":0,"FailedBuild":"example.com/m/b [example.com/m/b.test]"}\n{"Time":"2026-12-03T09:23:12.593628182Z","Action":"start","Package":"example.com/m/c"}\n{"Time":"2026-12-03T09:23:12.600352093Z","Action":"output","Package":"example.com/m/c","Output":"panic: init failed\\n"}\n{"Time":"2026-12-03T09:23:12.600446092Z","Action":"output","Package":"example.com/m/c","Output":"\\n"}\n{"Time":"2026-12-03T09:23:12.600451451Z","Action":"output","Package":"example.com/m/c","Output":"goroutine 1 [running]:\\n"}\n{"Time":"2026-12-03T09:23:12.600455685Z","Action":"output","Package":"example.com/m/c","Output":"example.com/m/c.TestMain(...)\\n"}\n{"Time":"2026-12-03T09:23:12.6004603Z","Action":"output","Package":"example.com/m/c","Output":"\\t/tmp/gop/c/c_test.go:3\\n"}\n{"Time":"2026-12-03T09:23:12.600463947Z","Action":"output","Package":"example.com/m/c","Output":"main.main()\\n"}\n{"Time":"2026-12-03T09:23:12.60047027Z","Action":"output","Package":"example.com/m/c","Output":"\\t_testmain.go:46 +0xaa\\n"}\n{"Time":"2026-12-03T09:23:12.601052738Z","Action":"run","Package":"example.com/m/a","Test":"TestAdd"}\n{"Time":"2026-12-03T09:23:12.601065487Z","Action":"output","Package":"example.com/m/a","Test":"TestAdd","Output":"=== RUN   TestAdd\\n"}\n{"Time":"2026-12-03T09:23:12.601364566Z","Action":"output","Package":"example.com/m/a","Test":"TestAdd","Output":"--- PASS: TestAdd (0.00s)\\n"}\n{"Time":"2026-12-03T09:23:12.601396387Z","Action":"output","Package":"example.com/m/c","Output":"FAIL\\texample.com/m/c\\t0.008s\\n"}\n{"Time":"2026-12-03T09:23:12.601434033Z","Action":"fail","Package":"example.com/m/c","Elapsed":0.008}\n{"Time":"2026-12-03T09:23:12.60147418Z","Action":"pass","Package":"example.com/m/a","Test":"TestAdd","Elapsed":0}\n{"Time":"2026-12-03T09:23:12.601506162Z","Action":"run","Package":"example.com/m/a","Test":"TestSub"}\n{"Time":"2026-12-03T09:23:12.601547877Z","Action":"output","Package":"example.com/m/a","Test":"TestSub","Output":"=== RUN   TestSub\\n"}\n{"Time":"2026-12-03T09:23:12.601618147Z","Action":"run","Package":"example.com/m/a","Test":"TestSub/one"}\n{"Time":"2026-12-03T09:23:12.601622893Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/one","Output":"=== RUN   TestSub/one\\n"}\n{"Time":"2026-12-03T09:23:12.601890808Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/one","Output":"--- PASS: TestSub/one (0.00s)\\n"}\n{"Time":"2026-12-03T09:23:12.601902847Z","Action":"pass","Package":"example.com/m/a","Test":"TestSub/one","Elapsed":0}\n{"Time":"2026-12-03T09:23:12.601907701Z","Action":"run","Package":"example.com/m/a","Test":"TestSub/two"}\n{"Time":"2026-12-03T09:23:12.601910905Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/two","Output":"=== RUN   TestSub/two\\n"}\n{"Time":"2026-12-03T09:23:12.601914591Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/two","Output":"    a_test.go:6: boom\\n"}\n{"Time":"2026-12-03T09:23:12.601918762Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/two","Output":"--- FAIL: TestSub/two (0.00s)\\n"}\n{"Time":"2026-12-03T09:23:12.601922176Z","Action":"fail","Package":"example.com/m/a","Test":"TestSub/two","Elapsed":0}\n{"Time":"2026-12-03T09:23:12.601925754Z","Action":"run","Package":"example.com/m/a","Test":"TestSub/skip"}\n{"Time":"2026-12-03T09:23:12.60192989Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/skip","Output":"=== RUN   TestSub/skip\\n"}\n{"Time":"2026-12-03T09:23:12.601947609Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/skip","Output":"    a_test.go:7: later\\n"}\n{"Time":"2026-12-03T09:23:12.601951575Z","Action":"output","Package":"example.com/m/a","Test":"TestSub/skip","Output":"--- SKIP: TestSub/skip (0.00s)\\n"}\n{"Time":"2026-12-03T09:23:12.601954802Z","Action":"skip","Package":"example.com/m/a","Test":"TestSub/skip","Elapsed":0}\n{"Time":"2026-12-03T09:23:12.601958711Z","Action":"output","Package":"example.com/m/a","Test":"TestSub","Output":"--- FAIL: TestSub (0.00s)\\n"}\n{"Time":"2026-12-03T09:23:12.601961962Z","Action":"fail","Package":"example.com/m/a","Test":"TestSub","Elapsed":0}\n{"Time":"2026-12-03T09:23:12.601965105Z","Action":"output","Package":"example.com/m/a","Output":"FAIL\\n"}\n{"Time":"2026-12-03T09:23:12.602491803Z","Action":"output","Package":"example.com/m/a","Output":"FAIL\\texample.com/m/a\\t0.010s\\n"}\n{"Time":"2026-12-03T09:23:12.602519314Z","Action":"fail","Package":"example.com/m/a","Elapsed":0.012}\n{"Time":"2026-12-03T09:23:12.604301456Z","Action":"start","Package":"example.com/m/d"}\n{"Time":"2026-12-03T09:23:12.604658579Z","Action":"output","Package":"example.com/m/d","Output":"?   \\texample.com/m/d\\t[no test files]\\n"}\n{"Time":"2026-12-03T09:23:12.604715825Z","Action":"skip","Package":"example.com/m/d","Elapsed":0}\n';

/** Go before 1.24: a build failure is a line of the package's output, with the compiler's lines before the events. */
const machineReadableGo122 =
  '# example.com/m/b [example.com/m/b.test]\nb/b.go:2:23: undefined: undefinedThing\n{"Time":"2026-12-03T09:26:02.309533768Z","Action":"start","Package":"example.com/m/b"}\n{"Time":"2026-12-03T09:26:02.309622305Z","Action":"output","Package":"example.com/m/b","Output":"FAIL\\texample.com/m/b [build failed]\\n"}\n{"Time":"2026-12-03T09:26:02.309632698Z","Action":"fail","Package":"example.com/m/b","Elapsed":0}\n';

test('go test -v: each test and subtest, a package that does not compile, a test binary that panics', () => {
  assert.deepEqual(parseGoTestOutput(verbose), {
    passed: 2,
    failed: 4,
    skipped: 1,
    failing: [
      'example.com/m/a.TestSub',
      'example.com/m/a.TestSub/two',
      'example.com/m/b [build failed]',
      'example.com/m/c [test binary failed]',
    ],
  });
});

test('go test -json reads the same, in the order the events come', () => {
  const counts = parseGoTestOutput(machineReadable);
  assert.deepEqual([counts?.passed, counts?.failed, counts?.skipped], [2, 4, 1]);
  assert.deepEqual([...(counts?.failing ?? [])].sort(), [
    'example.com/m/a.TestSub',
    'example.com/m/a.TestSub/two',
    'example.com/m/b [build failed]',
    'example.com/m/c [test binary failed]',
  ]);
  assert.deepEqual(parseGoTestOutput(machineReadableGo122)?.failing, ['example.com/m/b [build failed]']);
});

test('a compile error is a failed build in the summary, not "0 passed" or an unrecognised run', () => {
  const summary = summarizeTestOutput(
    '# example.com/slug [example.com/slug.test]\n./slug.go:14:9: undefined: normalise\nFAIL\texample.com/slug [build failed]\nFAIL\n',
    1,
  );
  assert.equal(summary.recognized, true);
  assert.equal(summary.failed, 1);
  assert.match(formatTestSummary(summary), /example\.com\/slug \[build failed\]/);
});

test('passing packages and packages without tests are no failures', () => {
  const counts = parseGoTestOutput(
    '=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/m/a\t0.004s\n?   \texample.com/m/cmd\t[no test files]\nok  \texample.com/m/b\t(cached)\n',
  );
  assert.deepEqual(counts, { passed: 1, failed: 0, skipped: 0, failing: [] });
  assert.equal(parseGoTestOutput('go: go.mod requires go >= 1.23 (running go 1.22.12; GOTOOLCHAIN=local)\n'), null);
});

test('a test name two packages share is told apart by its package, in -v and -json output', () => {
  const verboseTwo =
    '=== RUN   TestParse\n--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/m/config\t0.004s\n=== RUN   TestParse\n--- PASS: TestParse (0.00s)\nPASS\nok  \texample.com/m/url\t0.003s\nFAIL\n';
  assert.deepEqual(parseGoTestOutput(verboseTwo)?.failing, ['example.com/m/config.TestParse']);
  const jsonTwo = [
    { Action: 'fail', Package: 'example.com/m/url', Test: 'TestParse' },
    { Action: 'fail', Package: 'example.com/m/url' },
    { Action: 'pass', Package: 'example.com/m/config', Test: 'TestParse' },
    { Action: 'pass', Package: 'example.com/m/config' },
  ]
    .map((event) => JSON.stringify(event))
    .join('\n');
  assert.deepEqual(parseGoTestOutput(jsonTwo)?.failing, ['example.com/m/url.TestParse']);
});

test('output cut before the package line keeps the failing tests by their own names', () => {
  assert.deepEqual(parseGoTestOutput('=== RUN   TestA\n--- FAIL: TestA (0.00s)\n')?.failing, ['TestA']);
});
