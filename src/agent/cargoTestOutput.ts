// `cargo test` output: libtest's lines for each test binary (unit tests of a lib or bin, each
// integration test, the doc-tests), and cargo's own errors when something did not compile. A
// compile error is a failure of the build, named as such ("changelog (lib test): does not
// compile"), never "0 passed": no test of that target ran.
// Pure: read by the workflow through testResults.ts.

export interface CargoCounts {
  passed: number;
  failed: number;
  skipped: number;
  failing: string[];
}

/** The header cargo prints before each test binary runs. */
const runningLine = /^\s*Running (?:unittests )?(\S+) \((?:[^)]*\/)?([\w-]+?)(?:-[0-9a-f]{16})?(?:\.exe)?\)\s*$/;
const docTestsLine = /^\s*Doc-tests (\S+)\s*$/;
const testLine = /^test (.+?) \.\.\. (ok|FAILED|ignored(?:, .*)?)$/;
const resultLine = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/;
/** `error: could not compile `name` (lib test) due to 2 previous errors` (older cargo: no target, "due to previous error"). */
const couldNotCompile = /^error: could not compile `([^`]+)`(?: \(([^)]+)\))?/;
const buildScriptFailed = /^error: failed to run custom build command for `([^`\s]+)/;

export function parseCargoTest(output: string): CargoCounts | null {
  const lines = output.split('\n').map((line) => line.replace(/\r$/, ''));
  // cargo prints each binary's header on stderr, libtest its lines on stdout: merged, the two
  // streams interleave as they were read, but each keeps its order. So the k-th header names the
  // k-th "running N tests" block.
  const headers: Array<string | null> = [];
  for (const line of lines) {
    const running = line.match(runningLine);
    if (running) headers.push(running[2] as string);
    // Doc-tests are named by their file and line: "src/lib.rs - parse (line 12)".
    else if (docTestsLine.test(line)) headers.push(null);
  }
  let block = -1;
  let sawResult = false;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failing: string[] = [];
  // libtest runs a binary's tests in parallel and prints each as it ends: its failures are sorted,
  // as its own `failures:` list is, so that two runs of the same tests name them alike.
  let failingInBlock: string[] = [];
  const endBlock = () => {
    failing.push(...failingInBlock.sort());
    failingInBlock = [];
  };
  const buildFailures: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (/^running \d+ tests?$/.test(line)) {
      endBlock();
      block++;
      continue;
    }
    const test = line.match(testLine);
    if (test?.[2] === 'FAILED') {
      const name = test[1] as string;
      const binary = block >= 0 ? headers[block] : null;
      failingInBlock.push(binary && !name.includes(' - ') ? `${binary}::${name}` : name);
      continue;
    }
    const result = line.match(resultLine);
    if (result) {
      sawResult = true;
      passed += Number(result[1]);
      failed += Number(result[2]);
      skipped += Number(result[3]);
      continue;
    }
    const compile = line.match(couldNotCompile);
    if (compile) {
      const target = compile[2] ? ` (${compile[2]})` : '';
      const killed = lines.slice(index + 1, index + 6).some((next) => /signal: 9, SIGKILL/.test(next));
      buildFailures.push(
        `${compile[1]}${target}: ${killed ? 'the compiler was killed (signal 9: out of memory?)' : 'does not compile'}`,
      );
      continue;
    }
    const buildScript = line.match(buildScriptFailed);
    if (buildScript) buildFailures.push(`${buildScript[1]} (build script): failed`);
  }
  endBlock();
  if (!sawResult && buildFailures.length === 0 && failing.length === 0) {
    // cargo refused before building: a manifest it cannot read, a lockfile --locked forbids updating.
    const refusal = lines.find((line) => /^error: /.test(line) && !/^error: test failed/.test(line));
    const fromCargo =
      /^\s+(Compiling|Finished|Blocking|Locking|Updating|Downloaded) /m.test(output) ||
      /Cargo\.toml|Cargo\.lock|--locked|--offline|crates\.io/.test(output);
    if (!refusal || !fromCargo) return null;
    return { passed: 0, failed: 1, skipped: 0, failing: [`cargo: ${refusal.slice('error: '.length, 300)}`] };
  }
  return {
    passed,
    failed: failed + buildFailures.length,
    skipped,
    failing: unique([...buildFailures, ...failing]),
  };
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}
