// The C/C++ environment's next snapshot, through the real worker, Docker, CMake and GoogleTest: a
// snapshot's project image configures and builds the repository in /opt/build, which took the whole
// tree each time (GoogleTest included). The next snapshot of the same repository builds on that one's
// build and compiles only what changed; another repository never builds on it.
import assert from 'node:assert/strict';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { PreparedEnvironment } from '../../src/agent/environment.js';
import {
  inImage,
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let worker: TestWorker;
let scratch: string;

/** A new snapshot of `repo`'s environment, prepared as a run on that path would; it must be built. */
async function preparedBuilt(repo: string, label: string): Promise<PreparedEnvironment> {
  const { host } = worker.worker;
  const { snapshotId } = await host.snapshotRepository(repo, undefined);
  const owner = { workflowId: label, runId: 'test', host: host.options.hostId, scope: host.options.scope };
  const prepared = await host.environments.prepare({ snapshotId, choice: {}, owner, repository: repo }, {});
  assert.ok(prepared && !prepared.reused);
  return prepared;
}

/** The environment line of the project's own build. */
function projectLine(prepared: PreparedEnvironment, start: string): string {
  return (prepared.toolchain ?? []).find((line) => line.startsWith(start)) ?? '';
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'cpp-environment-'));
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
});

test(
  "the next snapshot of a CMake repository builds on its previous build; another repository's does not",
  { timeout: 900_000 },
  async () => {
    const docker = connectDocker();
    const fixture = (await loadFixture('55_cpp_cmake_gtest_semver')).path;
    const prepare = async (repo: string) => {
      const prepared = await preparedBuilt(repo, 'cpp-next-snapshot');
      return { image: prepared.image, project: projectLine(prepared, 'configured with CMake') };
    };
    /** The times of GoogleTest's library and of the object of src/version.cpp in an image's build. */
    const times = async (image: string) =>
      (
        await inImage(
          image,
          "find /opt/build -name 'libgtest.a' -printf '%T@ '; find /opt/build -name 'version.cpp.o' -printf '%T@'",
        )
      )
        .trim()
        .split(' ')
        .map(Number);

    const repo = join(scratch, 'semver');
    await cp(fixture, repo, { recursive: true });
    await appendFile(join(repo, 'README.md'), `\n<!-- ${process.pid}-${Date.now()} -->\n`);
    const first = await prepare(repo);
    assert.match(first.project, /built from \/workspace$/);

    await appendFile(join(repo, 'src', 'version.cpp'), '\n// the next commit\n');
    const next = await prepare(repo);
    assert.match(next.project, /built on the previous snapshot's build \(1 of its files differ\)$/);
    const [gtestBefore, versionBefore] = await times(first.image);
    const [gtestAfter, versionAfter] = await times(next.image);
    assert.ok(gtestBefore && versionBefore && gtestAfter && versionAfter, 'both files in both builds');
    assert.equal(gtestAfter, gtestBefore, 'GoogleTest is not compiled again');
    assert.ok(versionAfter > versionBefore, 'the changed file is');
    // The tests built on it pass and fail as the sources say: ctest runs the new build.
    assert.match(
      (await inImage(next.image, "ctest --test-dir /opt/build 2>&1 | grep -E 'tests passed' || true")).trim(),
      /\d+% tests passed, \d+ tests failed out of \d+/,
    );

    // The same files at another path are another repository: built from its own sources.
    const other = join(scratch, 'semver-copy');
    await cp(repo, other, { recursive: true });
    await appendFile(join(other, 'README.md'), '\n<!-- another repository -->\n');
    const copied = await prepare(other);
    assert.match(copied.project, /built from \/workspace$/);

    for (const image of [first.image, next.image, copied.image])
      await docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
  },
);

test(
  "the next snapshot of a Makefile repository compiles through the previous snapshot's ccache",
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'strbuf');
    await cp((await loadFixture('56_c_makefile_check_strbuf')).path, repo, { recursive: true });
    await appendFile(join(repo, 'README.md'), `\n<!-- ${process.pid}-${Date.now()} -->\n`);
    const prepare = async () => {
      const prepared = await preparedBuilt(repo, 'make-next-snapshot');
      const project = projectLine(prepared, 'make ');
      const hits = await inImage(
        prepared.image,
        "CCACHE_DIR=/opt/ccache ccache --print-stats | awk '/^(direct|preprocessed)_cache_hit[[:space:]]/ { n += $2 } END { print n + 0 }'",
      );
      return { image: prepared.image, project, hits: Number(hits.trim()) };
    };
    const first = await prepare();
    assert.doesNotMatch(first.project, /previous snapshot/);
    assert.equal(first.hits, 0, 'a cold cache');
    await appendFile(join(repo, 'src', 'strbuf.c'), '\n/* the next commit */\n');
    const next = await prepare();
    assert.match(next.project, /once on the previous snapshot's cache,/);
    assert.ok(next.hits > 0, `ccache hits in the next snapshot's build: ${next.hits}`);
    for (const image of [first.image, next.image])
      await connectDocker()
        .getImage(image)
        .remove()
        .catch(() => undefined);
  },
);

test(
  'a run on the next commit finds the previous build by the path its input names',
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'semver-runs');
    await cp((await loadFixture('55_cpp_cmake_gtest_semver')).path, repo, { recursive: true });
    await appendFile(join(repo, 'README.md'), `\n<!-- ${process.pid}-${Date.now()} runs -->\n`);
    const projectLine = async (workflowId: string) => {
      const { report } = await runToReport(
        server,
        worker.taskQueue,
        { repo, budgets: { maxIterations: 1 } },
        workflowId,
      );
      return (report.environment?.toolchain ?? []).find((line) => line.startsWith('configured with CMake')) ?? '';
    };
    assert.match(await projectLine(`cpp-first-${process.pid}`), /built from \/workspace$/);
    await appendFile(join(repo, 'include', 'semver', 'version.hpp'), '\n// the next commit\n');
    assert.match(
      await projectLine(`cpp-next-${process.pid}`),
      /built on the previous snapshot's build \(1 of its files differ\)$/,
    );
  },
);
