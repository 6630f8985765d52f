// Every repository of a fixture group (fixtureGroups.ts) runs through the whole product: the real
// Temporal dev server, real Docker sandboxes, and the real Anthropic SDK talking HTTP to the fake
// API that plays each fixture's script.json, with 30% of its model calls failing at random. Each
// run must end as its fixture.json expects, and a reported fix must really fix a fresh copy of the
// repository on the host. A fixture marked `throughCli` runs as a person runs it:
// `durable-debugger run <fixture>` in a process of its own, with its own worker, reaching the same
// fake API as a gateway.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import iconv from 'iconv-lite';
import ignore from 'ignore';
import picomatch from 'picomatch';
import { describeEnvironment } from '../../src/agent/environment.js';
import type { DebugReport } from '../../src/agent/report.js';
import { summarizeTestOutput } from '../../src/agent/testResults.js';
import { defaultTestFileGlobs } from '../../src/sandbox/sandboxHost.js';
import { sandboxContainerEnv } from '../../src/sandbox/container/sandboxEnv.js';
import type { RecordedRequest } from '../../src/demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixtures, scriptsByName, type Fixture } from '../../src/demo/fixtures.js';
import {
  containersOf,
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { killCliProcesses, startCli } from './cli.js';
import { groupOf, type FixtureGroup } from './fixtureGroups.js';

/** The host-side check runs without blocking: this process hosts the worker of the fixture running beside it. */
const execFileAsync = promisify(execFile);
let server: TestServer;
let worker: TestWorker;

/** Registers the group's tests: one run per fixture (two at a time, one under npm test), on a dev server and worker of their own. */
export async function fixtureSuite(group: FixtureGroup): Promise<void> {
  const fixtures = (await loadFixtures()).filter((fixture) => groupOf(fixture) === group);

  before(async () => {
    server = await startTestServer();
    // 30% of the model calls fail at random, as a real endpoint's rate limits, overloads (before or
    // while the reply streams), server errors, dropped connections and replies slower than the
    // request's timeout come: every fixture must still end as it expects. No call fails more than 4
    // of its 8 attempts (eight failures in a row is a model_error by design, and came once in CI by
    // chance: a fixture's outcome must not). One pass over the fixtures
    // serves both (model.test.ts ran them all a second time, with faults: 25 of its 28 minutes).
    worker = await startTestWorker(server, {
      fake: {
        scripts: scriptsByName(fixtures),
        faults: {
          rate: 0.3,
          kinds: ['rate_limit', 'overloaded', 'overloaded_mid_stream', 'server_error', 'disconnect', 'slow'],
          maxPerRequest: 4,
        },
        retryAfterSeconds: 1,
        slowMs: 2_500,
      },
      timeoutMs: 1_500,
    });
  });

  let workerStopped = false;
  after(async () => {
    killCliProcesses();
    if (!workerStopped) await worker?.stop();
    await server?.stop();
  });

  // Two runs at a time when the group runs alone: each spends most of its time waiting on Docker and
  // the test runners. `npm test` asks for one (DURABLE_DEBUGGER_FIXTURE_CONCURRENCY): its three
  // groups start together in its lanes, and six runs at once beside the other lanes' jobs (load
  // average 15 on 2 cores) made a runner's own timers fire (ava's 10 s) where they never do in CI.
  const concurrency = Number(process.env.DURABLE_DEBUGGER_FIXTURE_CONCURRENCY) || 2;
  describe('each fixture ends as its fixture.json expects', { concurrency }, () => {
    for (const fixture of fixtures) {
      // A cold environment of a real tree (fixture 23: 207 packages) and four tsc builds take minutes on a loaded machine.
      test(`${fixture.name} → ${fixture.meta.expectedStatus}`, { timeout: 600_000 }, async () => {
        const workflowId = `fixture-${fixture.name}-${process.pid}`;
        const { report } = fixture.meta.throughCli
          ? await runThroughCli(fixture, workflowId)
          : await runToReport(server, worker.taskQueue, fixtureInput(fixture), workflowId);
        const requests = worker.fake.requests.filter((request) => repositoryOf(request) === fixture.name);

        // What the run saw, printed when a check fails (CI keeps no history of the run) or when asked.
        const seen = () =>
          JSON.stringify(
            {
              stop: `${report.stopCondition}: ${report.stopDetail}`,
              before: report.testsBefore,
              after: report.testsAfter,
              // Head and tail: a build's error is at the end.
              results: toolResultsSent(requests).map((text) =>
                text.length > 1500 ? `${text.slice(0, 600)} … ${text.slice(-900)}` : text,
              ),
            },
            null,
            1,
          );
        if (process.env.DEBUG_FIXTURE) console.error(seen());
        try {
          assert.equal(report.status, fixture.meta.expectedStatus, `${report.stopCondition}: ${report.stopDetail}`);
          assert.deepEqual(
            requests
              .filter((request) => request.status === 400 && request.fault === null)
              .map((request) => request.error),
            [],
            'a request broke the API’s rules',
          );
          assert.equal(report.environment?.kind, fixture.meta.environment, 'the environment the run used');
          for (const pattern of fixture.meta.environmentMatches ?? [])
            assert.match(
              describeEnvironment(report.environment),
              new RegExp(pattern),
              'the environment’s toolchain and scripts',
            );
          for (const pattern of fixture.meta.environmentDoesNotMatch ?? [])
            assert.doesNotMatch(
              describeEnvironment(report.environment),
              new RegExp(pattern),
              'the environment’s toolchain and scripts',
            );
          for (const pattern of fixture.meta.stopDetailMatches ?? [])
            assert.match(report.stopDetail ?? '', new RegExp(pattern), 'why the run stopped');
          if (fixture.meta.failingBefore) assert.deepEqual(report.testsBefore?.failing, fixture.meta.failingBefore);

          const toolErrors = report.toolCalls.filter((call) => call.isError).map((call) => call.name);
          assert.deepEqual(toolErrors, fixture.meta.toolErrors ?? [], 'tool calls that failed');
          const results = toolResultsSent(requests);
          assert.ok(
            !results.some((result) => /\b(fixture|script)\.json\b/.test(result)),
            'the agent saw the fixture’s hidden files',
          );
          for (const text of fixture.meta.observations ?? []) {
            assert.ok(
              results.some((result) => result.includes(text)),
              `no tool result contained ${JSON.stringify(text)}`,
            );
          }

          if (report.status === 'no_failing_tests') {
            assert.ok((report.testsBefore?.passed ?? 0) > 0, 'tests ran and passed at the baseline');
            assert.equal(requests.length, 0, 'the model was called although the tests pass');
            assert.equal(report.patch, '');
          }
          if (report.status === 'fixed') {
            assert.equal(report.stopCondition, 'finish_verified');
            assert.equal(report.testsAfter?.failed, 0);
            if (!fixture.meta.input?.allowTestEdits) {
              const isTestFile = picomatch(defaultTestFileGlobs, { dot: true });
              const changed = [...report.patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map(
                (match) => match[1] as string,
              );
              assert.deepEqual(
                changed.filter((path) => isTestFile(path) || isTestFile(path.split('/').pop() as string)),
                [],
                'the patch changes tests',
              );
            }
            // Build output (lib/ made by `npm run build`) is ignored by .gitignore: it never enters the patch.
            const gitignore = await readFile(join(fixture.path, '.gitignore'), 'utf8').catch(() => '');
            const patched = [...report.patch.matchAll(/^diff --git a\/(\S+) b\//gm)].map((match) => match[1] as string);
            assert.deepEqual(
              patched.filter((path) => ignore().add(gitignore).ignores(path)),
              [],
              'the patch holds ignored build output',
            );
            assert.deepEqual(
              report.leftOutOfPatch ?? [],
              fixture.meta.leftOutOfPatch ?? [],
              'changes left out of the patch',
            );
            await assertPatchFixesACopy(fixture, report);
          }
        } catch (error) {
          console.error(`${fixture.name}: what the run saw\n${seen()}`);
          throw error;
        }
      });
    }
  });

  test('no request was rejected, model calls did fail, and no container is left once the worker has stopped', async () => {
    assert.deepEqual(
      worker.fake.rejected.map((request) => request.error),
      [],
    );
    const faults = worker.fake.requests.filter((request) => request.fault).length;
    console.log(`${worker.fake.requests.length} model requests, ${faults} failed by injection`);
    assert.ok(faults > 0, 'no model call failed');
    // Sandboxes go with their runs; the build network kept warm between builds (up to two minutes
    // idle) and the builds' last clean-ups go with the worker: counted once it has stopped.
    await worker.stop();
    workerStopped = true;
    assert.equal(await containersOf(server), 0);
  });
}

/** `durable-debugger run <fixture> --json` in a process of its own; the report is the run's result. */
async function runThroughCli(fixture: Fixture, workflowId: string): Promise<{ report: DebugReport }> {
  assert.equal(fixture.meta.input, undefined, `${fixture.name}: a fixture run through the CLI takes no input options`);
  const run = startCli(server, ['run', fixture.path, '--id', workflowId, '--json'], {
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: worker.fake.url,
  });
  const { code, output } = await run.done;
  const handle: WorkflowHandle = server.client.workflow.getHandle(workflowId);
  const report = (await handle.result()) as DebugReport;
  assert.ok(code === 0 || report.status !== 'fixed', `run exited ${code} on a fixed run:\n${output.slice(-3000)}`);
  // Its report, whatever the worker printed as it shut down (another run's activity it held, cancelled).
  assert.ok(
    output.split('\n').some((line) => line.startsWith('{"type":"report"')),
    `the CLI printed no report:\n${output.slice(-3000)}`,
  );
  return { report };
}

/** The repository a request is about, from the "Repository: <name>" line of its task. */
function repositoryOf(request: RecordedRequest): string | null {
  const first = (request.body.messages as Array<{ content: string | Array<{ text?: string }> }> | undefined)?.[0];
  const text =
    typeof first?.content === 'string'
      ? first.content
      : (first?.content ?? []).map((block) => block.text ?? '').join('\n');
  return text.match(/^Repository: (.+)$/m)?.[1]?.trim() ?? null;
}

/** Every tool result text the model was sent in these requests. */
function toolResultsSent(requests: RecordedRequest[]): string[] {
  const texts = new Set<string>();
  for (const request of requests) {
    for (const message of (request.body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
      if (message.role !== 'user' || !Array.isArray(message.content)) continue;
      for (const block of message.content as Array<{ type: string; content?: unknown }>) {
        if (block.type !== 'tool_result') continue;
        const content = block.content;
        texts.add(
          typeof content === 'string'
            ? content
            : Array.isArray(content)
              ? (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n')
              : '',
        );
      }
    }
  }
  return [...texts];
}

/** Applies the report's patch to a fresh copy of the fixture with `git apply`; the copy's tests must then pass on the host. */
async function assertPatchFixesACopy(fixture: Fixture, report: DebugReport): Promise<void> {
  assert.ok(report.patch, 'a fixed run has a patch');
  const copy = await mkdtemp(join(tmpdir(), `patched-${fixture.name}-`));
  const patchFile = `${copy}.patch`;
  const container = `fixture-check-${fixture.name.replace(/_/g, '-')}-${process.pid}-${Date.now()}`;
  try {
    // Symlinks as they are: resolved, a relative link (fixture 72's) would point into the fixture itself.
    await cp(fixture.path, copy, { recursive: true, verbatimSymlinks: true });
    // Beside the copy, not in it: a check of every file (Apache RAT in fixture 70) would read it as the project's.
    await writeFile(patchFile, report.patch);
    execFileSync('git', ['apply', '--verbose', patchFile], { cwd: copy, stdio: 'pipe' });
    await assertExpectedBytes(fixture, report, copy, patchFile);
    // A repository with dependencies runs in its environment image (without network), not on the host.
    const [command, args] = report.environment
      ? [
          'docker',
          [
            'run',
            // Named and removed afterwards (not --rm), so that a failure can say how the container ended.
            '--name',
            container,
            '--network',
            'none',
            // The sandbox's variables (sandboxEnv.ts), with the environment's (a toolchain's PATH, CARGO_HOME):
            // colours as the runner's own detection chooses under CI.
            ...sandboxContainerEnv(report.environment.containerEnv).flatMap((variable) => ['-e', variable]),
            '-v',
            `${copy}:/workspace`,
            // The image's node_modules folders, each a copy of its own, as the sandbox mounts them (nodeModulesMounts.ts).
            ...(report.environment.nodeModules ?? []).flatMap((folder) => [
              '--mount',
              `type=volume,target=/workspace/${folder}`,
            ]),
            // The warm build caches outside the workspace (Rust's target folder), a copy of their own too.
            ...(report.environment.writableCopies ?? []).flatMap((folder) => [
              '--mount',
              `type=volume,target=${folder}`,
            ]),
            '-w',
            '/workspace',
            report.environment.image,
            'sh',
            '-c',
            // Both streams: jest prints its summary on stderr.
            `(${report.testCommand as string}) 2>&1`,
          ],
        ]
      : fixture.meta.language === 'python'
        ? ['python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider']]
        : [process.execPath, ['--test']];
    let output: string;
    try {
      output = (
        await execFileAsync(command, args, {
          cwd: copy,
          // A jest + ts-jest suite (fixture 28) takes minutes on a loaded machine.
          timeout: 300_000,
          maxBuffer: 64 * 1024 * 1024,
          env: hostTestEnv(),
        })
      ).stdout;
    } catch (error) {
      const failure = error as { stdout?: string; stderr?: string; code?: number | string; signal?: string | null };
      // How the container ended (killed for memory, by a signal, or by Docker), when it ran in one.
      const ended = report.environment
        ? await execFileAsync('docker', [
            'inspect',
            '--format',
            'container: exit {{.State.ExitCode}}, OOMKilled {{.State.OOMKilled}}, error "{{.State.Error}}", started {{.State.StartedAt}}, finished {{.State.FinishedAt}}',
            container,
          ]).then(
            (result) => result.stdout.trim(),
            (inspectError: Error) => `container: not inspected (${inspectError.message.split('\n')[0]})`,
          )
        : '';
      assert.fail(
        `the patched copy's tests fail on the host (exit ${failure.code ?? '-'}, signal ${failure.signal ?? '-'}${ended ? `; ${ended}` : ''}):\n${failure.stdout ?? ''}${failure.stderr ?? ''}`,
      );
    }
    // The same tests ran and passed on the host as in the sandbox's verification run.
    const host = summarizeTestOutput(output, 0);
    assert.ok(host.recognized, `no test summary in the host's output:\n${output}`);
    assert.equal(host.failed, 0);
    assert.equal(host.passed, report.testsAfter?.passed, 'the host ran as many tests as the sandbox');
  } finally {
    if (report.environment)
      await execFileAsync('docker', ['rm', '--force', '--volumes', container]).catch(() => undefined);
    await rm(copy, { recursive: true, force: true });
    await rm(patchFile, { force: true });
  }
}

/** A fixture that names its fix byte for byte: the patch changes exactly those files, to exactly those bytes. */
async function assertExpectedBytes(
  fixture: Fixture,
  report: DebugReport,
  copy: string,
  patchFile: string,
): Promise<void> {
  const expected = fixture.meta.expectedChanges;
  if (!expected) return;
  const changed = execFileSync('git', ['apply', '--numstat', '-z', patchFile], { cwd: copy })
    .toString()
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.split('\t')[2]);
  assert.deepEqual(changed.sort(), expected.map((change) => change.path).sort(), 'the files the patch changes');
  for (const change of expected) {
    const original = await readFile(join(fixture.path, change.path));
    const before = iconv.encode(change.before, change.encoding);
    const at = original.indexOf(before);
    assert.ok(at >= 0 && original.indexOf(before, at + 1) === -1, `${change.path} holds the text to change once`);
    const fixed = Buffer.concat([
      original.subarray(0, at),
      iconv.encode(change.after, change.encoding),
      original.subarray(at + before.length),
    ]);
    assert.ok((await readFile(join(copy, change.path))).equals(fixed), `${change.path}: the patched bytes`);
  }
}

/** The host environment without what this test process's own runner sets (a nested `node --test` would report to it). */
function hostTestEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _context, NODE_OPTIONS: _options, ...env } = process.env;
  return { ...env, PYTHONDONTWRITEBYTECODE: '1' };
}
