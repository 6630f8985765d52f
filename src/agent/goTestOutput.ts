// Reads `go test` output, verbose (-v) or machine-readable (-json): each test's result, named with
// its package as `example.com/m/b.TestParse` (subtests as `.TestParse/child`) because packages often
// share test names, and each package that failed without a failing test of its own: one that did
// not compile ("example.com/m/b [build failed]"), whose go.mod or imports could not be resolved
// ("[setup failed]"), or whose test binary ended without a result (a panic in init or TestMain).
// Pure: the workflow reads it.

export interface GoTestCounts {
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

/** A package's result line: `ok  \tpath\t0.01s`, `FAIL\tpath [build failed]`, `?   \tpath\t[no test files]`. */
const packageLine = /^(ok|FAIL|\?)\s+(\S+)(?:\s+(.*))?$/;
const testLine = /^\s*--- (PASS|FAIL|SKIP): (\S+)/;

export function parseGoTestOutput(output: string): GoTestCounts | null {
  const events = goJsonEvents(output);
  return events ? fromJson(events) : fromText(output);
}

function fromText(output: string): GoTestCounts | null {
  const counts: GoTestCounts = { passed: 0, failed: 0, skipped: 0, failing: [] };
  let packages = 0;
  // go test prints a package's test lines before its own result line, which names it.
  let failedSincePackage: string[] = [];
  for (const line of output.split('\n')) {
    const test = line.match(testLine);
    if (test) {
      const [, result, name] = test as unknown as [string, string, string];
      if (result === 'PASS') counts.passed++;
      else if (result === 'SKIP') counts.skipped++;
      else {
        counts.failed++;
        failedSincePackage.push(name);
      }
      continue;
    }
    const result = line.match(packageLine);
    if (!result || !/^\S+\.\S+|^[\w-]+(\/[\w.-]+)*$/.test(result[2] as string)) continue;
    const [, status, path, rest = ''] = result as unknown as [string, string, string, string?];
    if (status === '?' && !/\[no test files\]/.test(rest)) continue;
    if (status === 'ok' && !/^(\d+(\.\d+)?s|\(cached\))/.test(rest)) continue;
    packages++;
    counts.failing.push(...failedSincePackage.map((name) => `${path}.${name}`));
    if (status === 'FAIL') {
      const failure = packageFailure(path, rest, failedSincePackage.length);
      if (failure) {
        counts.failed++;
        counts.failing.push(failure);
      }
    }
    failedSincePackage = [];
  }
  // Output cut before its package's line: the tests by their own names.
  counts.failing.push(...failedSincePackage);
  if (packages === 0 && counts.passed + counts.failed + counts.skipped === 0) return null;
  return { ...counts, failing: [...new Set(counts.failing)] };
}

/** A failed package's own entry, when no failing test accounts for it. */
function packageFailure(path: string, rest: string, failedTests: number): string | null {
  const bracket = rest.match(/\[(build failed|setup failed)\]/)?.[1];
  if (bracket) return `${path} [${bracket}]`;
  return failedTests === 0 ? `${path} [test binary failed]` : null;
}

interface GoTestEvent {
  Action?: string;
  Package?: string;
  ImportPath?: string;
  Test?: string;
  Output?: string;
  FailedBuild?: string;
}

/** The events of `go test -json` output, or null when it is not that (a few non-JSON lines, go's own errors, are allowed). */
function goJsonEvents(output: string): GoTestEvent[] | null {
  const lines = output.split('\n').filter((line) => line.trim());
  const events: GoTestEvent[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const event = JSON.parse(line) as GoTestEvent;
      if (typeof event.Action === 'string') events.push(event);
    } catch {
      // not an event
    }
  }
  return events.length > 0 && events.length >= lines.length / 2 ? events : null;
}

function fromJson(events: GoTestEvent[]): GoTestCounts {
  const counts: GoTestCounts = { passed: 0, failed: 0, skipped: 0, failing: [] };
  const failedTests = new Map<string, number>();
  const packageOutput = new Map<string, string>();
  for (const event of events) {
    if (
      event.Action === 'output' &&
      event.Package &&
      !event.Test &&
      /\[(build|setup) failed\]/.test(event.Output ?? '')
    )
      packageOutput.set(event.Package, event.Output ?? '');
    if (event.Test && event.Package) {
      if (event.Action === 'pass') counts.passed++;
      else if (event.Action === 'skip') counts.skipped++;
      else if (event.Action === 'fail') {
        counts.failed++;
        counts.failing.push(`${event.Package}.${event.Test}`);
        failedTests.set(event.Package, (failedTests.get(event.Package) ?? 0) + 1);
      }
      continue;
    }
    if (event.Action !== 'fail' || !event.Package) continue;
    // Go 1.24+ names the build that failed; older ones print "[build failed]" in the package's output.
    const failure = event.FailedBuild
      ? `${event.Package} [build failed]`
      : packageFailure(event.Package, packageOutput.get(event.Package) ?? '', failedTests.get(event.Package) ?? 0);
    if (failure) {
      counts.failed++;
      counts.failing.push(failure);
    }
  }
  return { ...counts, failing: [...new Set(counts.failing)] };
}
