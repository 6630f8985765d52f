// The Rust environment on a host without rustup (RUSTUP_HOME an empty folder), through the real
// worker, Docker, apt and cargo: a crate that edition 2021 and a version 3 Cargo.lock allow on
// Debian's rustc is built with Debian's cargo (`cargo fetch --locked` in the build, crates.io's
// sparse index through the registry proxy) and its tests run offline in the sandbox, a failing
// one read as failing and passing once fixed; the report says which Rust and why. A crate that
// needs more than Debian has (edition 2024, a version 4 Cargo.lock) ends before any model call
// with what it asks and what there is.
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Script } from '../../src/demo/script.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const fixture = join(import.meta.dirname, 'repositories', 'rust_debian_toolchain');
const savedRustupHome = process.env.RUSTUP_HOME;

/** The scripted fix: zero is plural too. */
const script: Script = {
  description: 'Runs the tests, fixes the plural of zero, runs them again.',
  responses: [
    { thought: 'Let me run the tests.', tool_calls: [{ name: 'run_tests', input: {} }] },
    {
      thought: 'zero_is_plural fails: only counts above one get an "s". Every count but one is plural.',
      tool_calls: [
        {
          name: 'edit_file',
          input: { path: 'src/lib.rs', old_string: '    if count > 1 {', new_string: '    if count != 1 {' },
        },
      ],
    },
    { thought: 'Running the tests again.', tool_calls: [{ name: 'run_tests', input: {} }] },
    {
      thought: 'Both tests pass.',
      tool_calls: [
        {
          name: 'finish',
          input: {
            root_cause: 'counted made only counts above one plural, so 0 was "0 file".',
            summary: 'Plural unless the count is one.',
          },
        },
      ],
    },
  ],
};

let server: TestServer;
let worker: TestWorker;
let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'rust-debian-toolchain-'));
  // A host without rustup: its folder exists and has no toolchain.
  await mkdir(join(scratch, 'rustup', 'toolchains'), { recursive: true });
  process.env.RUSTUP_HOME = join(scratch, 'rustup');
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: script } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  if (savedRustupHome === undefined) delete process.env.RUSTUP_HOME;
  else process.env.RUSTUP_HOME = savedRustupHome;
  await rm(scratch, { recursive: true, force: true });
});

test(
  "without rustup, an edition 2021 crate with a version 3 Cargo.lock is built and tested with Debian's cargo",
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'byte_count');
    await cp(fixture, repo, { recursive: true });
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `rust-debian-${process.pid}`);
    assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);
    assert.deepEqual(report.testsBefore?.failing, ['byte_count::tests::zero_is_plural']);
    assert.equal(report.testsBefore?.passed, 1);
    assert.equal(report.testsAfter?.passed, 2);
    assert.equal(report.testsAfter?.failed, 0);
    assert.ok(
      report.environment?.toolchain?.includes(
        "rust 1.63.0 (Debian bookworm's rustc; the host has no rustup toolchain; rust-version 1.63, edition 2021 needs ≥ 1.56, Cargo.lock version 3 needs cargo ≥ 1.53)",
      ),
      `the toolchain note: ${JSON.stringify(report.environment?.toolchain)}`,
    );
  },
);

test(
  "without rustup, a crate that needs more than Debian's rustc (edition 2024, a version 4 Cargo.lock) ends with what it asks and what there is",
  { timeout: 300_000 },
  async () => {
    const cases = [
      {
        name: 'edition_2024',
        edit: (path: string, text: string) =>
          path === 'Cargo.toml'
            ? text.replace('edition = "2021"', 'edition = "2024"').replace('rust-version = "1.63"\n', '')
            : text,
        says: /^the repository needs rust ≥ 1\.85\.0 \(edition 2024 needs ≥ 1\.85(, Cargo\.lock version 3 needs cargo ≥ 1\.53)?\); nothing here fits: the host has no rustup toolchain, and Debian bookworm's rustc is 1\.63\.0 \(cargo 1\.65\.0\)/,
      },
      {
        name: 'lockfile_4',
        edit: (path: string, text: string) =>
          path === 'Cargo.lock'
            ? text.replace('version = 3', 'version = 4')
            : text.replace('rust-version = "1.63"\n', ''),
        says: /^the repository needs rust ≥ 1\.78\.0 \(edition 2021 needs ≥ 1\.56, Cargo\.lock version 4 needs cargo ≥ 1\.78\); nothing here fits: the host has no rustup toolchain, and Debian bookworm's rustc is 1\.63\.0 \(cargo 1\.65\.0\)/,
      },
    ];
    for (const { name, edit, says } of cases) {
      const repo = join(scratch, name);
      await cp(fixture, repo, { recursive: true });
      for (const path of ['Cargo.toml', 'Cargo.lock'])
        await writeFile(join(repo, path), edit(path, await readFile(join(repo, path), 'utf8')));
      const requests = worker.fake.requests.length;
      const { report } = await runToReport(server, worker.taskQueue, { repo }, `rust-debian-${name}-${process.pid}`);
      assert.equal(report.status, 'environment_error', `${name}: ${report.stopCondition}: ${report.stopDetail}`);
      assert.match(report.stopDetail ?? '', says, name);
      assert.equal(worker.fake.requests.length, requests, `${name}: no model call`);
    }
  },
);
