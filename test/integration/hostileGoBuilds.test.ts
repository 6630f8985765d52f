// A hostile Go module, through the real worker, Docker, Go and the registry proxy: its tests
// (TestMain) and the program its `//go:generate` line runs try the Temporal server's port and a
// host that is no registry, look for the host's Go settings (a canary in GONOSUMDB) in their
// variables, and leave a mark at / where only a build's root could. The environment build runs
// neither (go mod download runs no module's code; the build cache is warmed with `go test -exec
// /bin/true`, which compiles and never runs), so the image has no mark; in the sandbox the model's
// `go generate ./...` and the tests run without network: every attempt is refused, which the
// tests assert, and the run is fixed. No image holds the host's settings.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { connectDocker } from '../../src/sandbox/container/container.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { hostSettingsInImage } from '../support/imageInspection.js';

const run = promisify(execFile);
const docker = connectDocker();
const sandboxImage = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';
const repositories = join(import.meta.dirname, 'repositories', 'hostile_go_builds');
// Fixed, not random: the Go toolchain image's key holds the host's Go settings, so a new canary
// each run built a new 208 MB toolchain image each run (3 to 4 minutes). The repository's own
// image is new each run anyway: the server's port is written into its files.
const canary = 'hostile-go-canary-5c1f0e9a';
const savedEnvironment = { ...process.env };

let server: TestServer;
let worker: TestWorker;
let scratch: string;

const script = {
  responses: [
    {
      thought: 'The package does not build: Generated is defined by generated code. Let me run go generate.',
      tool_calls: [{ name: 'run_command', input: { command: 'go generate ./...' } }],
    },
    { thought: 'Running the tests again.', tool_calls: [{ name: 'run_tests', input: {} }] },
    {
      thought: 'They pass.',
      tool_calls: [
        {
          name: 'finish',
          input: { root_cause: 'zz_generated.go had not been generated.', summary: 'Ran go generate.' },
        },
      ],
    },
  ],
};

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hostile-go-builds-'));
  // The host's Go settings carry a canary: they reach the build's shell, never the image or the sandbox.
  process.env.GONOSUMDB = `${canary}.example.com`;
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: { temporal_probe: script } } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  process.env = savedEnvironment;
  await rm(scratch, { recursive: true, force: true });
});

test(
  "a module's tests and its go generate program reach nothing, in the build (they never run there) or the sandbox",
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'temporal_probe');
    await cp(join(repositories, 'temporal_probe'), repo, { recursive: true });
    const temporal = `127.0.0.1:${new URL(`http://${server.address}`).port}`;
    for (const file of ['probe_test.go', join('internal', 'gen', 'main.go')]) {
      const text = await readFile(join(repo, file), 'utf8');
      await writeFile(join(repo, file), text.replaceAll('@TEMPORAL@', temporal).replaceAll('@CANARY@', canary));
    }
    const { report } = await runToReport(
      server,
      worker.taskQueue,
      { repo, allowCommands: true },
      `hostile-go-${process.pid}`,
    );
    assert.equal(report.environment?.kind, 'go');
    // Before: the package did not compile (its generated code was missing), named as a failed build.
    assert.deepEqual(report.testsBefore?.failing, ['example.com/temporalprobe [build failed]']);
    // After go generate in the sandbox, TestNothingReached and TestGenerated (which assert that neither
    // the tests nor the generator reached anything or saw the canary) pass.
    assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsAfter?.passed, 2);
    const image = report.environment?.image as string;
    // A mark at / would be there had the build run the tests or go generate (it runs as root).
    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      image,
      'sh',
      '-c',
      'for mark in /go-test-ran /go-generate-ran; do [ -e $mark ] && echo $mark; done; echo checked',
    ]);
    assert.equal(stdout, 'checked\n', 'the environment build ran the tests or go generate');
    const problems = await hostSettingsInImage(docker, image, sandboxImage, [canary]);
    assert.deepEqual(problems, []);
  },
);
