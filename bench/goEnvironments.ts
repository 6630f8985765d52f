// 6d. The Go environment (issue 34): for the two Go fixtures, the cold build of the repository's
// images on the Go release's toolchain image (the dependencies' image, and the thin image that warms
// the build cache with the snapshot's packages) against Go's own `go mod download` + `go test -run XXX ./...`
// on the host with an empty module and build cache, the cached reuse, and the first test run after
// the cold build (in a container as the sandbox makes it: the image's warm cache copied on first
// use) against the same test command on an empty build cache.
import { appendFile, cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../src/demo/fixtures.js';
import { sandboxContainerEnv } from '../src/sandbox/container/sandboxEnv.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { preparedAfterChange, preparedColdThenCached, runToEnd as run } from './environmentRuns.js';
import { figure, number, table, type Figure } from './stats.js';

const goFixtures = ['40_go_module_gocmp', '41_go_compile_error', '65_go_cgo_sqlite_notes'];

export interface GoEnvironmentCost {
  fixture: string;
  toolchain: string;
  coldMs: number;
  hostMs: number;
  cachedMs: Figure;
  /** The next snapshot (one source file changed, the same go.mod): its project image built on the reused dependencies. */
  nextSnapshotMs: number;
  /** A snapshot after it with one import more (one of Go's own packages): its warm layer made, and its project image. */
  newImportMs: number;
  firstRunMs: number;
  coldCacheRunMs: number;
  imageMb: number;
}

export async function measureGoEnvironments(host: SandboxHost, repetitions: number): Promise<GoEnvironmentCost[]> {
  const { docker } = host.options;
  const costs: GoEnvironmentCost[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-go-'));
  try {
    for (const name of goFixtures) {
      const repo = join(scratch, name);
      await cp((await loadFixture(name)).path, repo, { recursive: true });
      // A comment in go.mod is a new image key: both images are built cold, on the toolchain image (built once per Go release and host).
      await appendFile(join(repo, 'go.mod'), `// bench ${process.pid}-${Date.now()}\n`);
      const snapshot = await host.snapshotRepository(repo, undefined);
      const plan = await host.environments.plan(snapshot.snapshotId, {});
      const { cold, coldMs, cached } = await preparedColdThenCached(host, snapshot.snapshotId, name, repetitions);
      const testCommand = plan?.testCommand as string;
      const inContainer = async (command: string) => {
        const at = performance.now();
        await run('docker', [
          'run',
          '--rm',
          '--network',
          'none',
          '--read-only',
          '--user',
          '65534:65534',
          '--tmpfs',
          '/tmp:rw,exec,nosuid,nodev,size=1024m,mode=1777',
          ...sandboxContainerEnv(cold.containerEnv).flatMap((variable) => ['-e', variable]),
          '-v',
          `${repo}:/workspace:ro`,
          '-w',
          '/workspace',
          cold.image,
          'sh',
          '-c',
          `${command} >/dev/null 2>&1; true`,
        ]);
        return performance.now() - at;
      };
      const firstRunMs = await inContainer(testCommand);
      // The real go, not the image's wrapper: an empty build cache, nothing copied.
      const coldCacheRunMs = await inContainer(`GOCACHE=/tmp/cold-cache /opt/go/bin/${testCommand}`);
      const hostMs = await hostGo(repo, join(scratch, `${name}-host`));
      // After the runs above, which test the cold build's snapshot.
      const source = (await readdir(repo, { recursive: true }))
        .filter((path) => /(?<!_test)\.go$/.test(path))
        .sort()[0];
      if (!source) throw new Error(`${name}: no Go source to change`);
      const nextSnapshotMs = await preparedAfterChange(
        host,
        repo,
        name,
        source,
        (text) => `${text}\n// bench: the next snapshot\n`,
      );
      const newImportMs = await preparedAfterChange(host, repo, name, source, (text) =>
        text.replace(/^package (\w+)\n/m, 'package $1\n\nimport _ "encoding/csv"\n'),
      );
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      costs.push({
        fixture: name,
        toolchain: cold.toolchain?.[0] ?? '?',
        coldMs,
        hostMs,
        cachedMs: figure(cached),
        nextSnapshotMs,
        newImportMs,
        firstRunMs,
        coldCacheRunMs,
        imageMb,
      });
      await docker
        .getImage(cold.image)
        .remove()
        .catch(() => undefined);
    }
  } finally {
    await run('chmod', ['-R', 'u+w', scratch]).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
  return costs;
}

/** Go's own time on the host (its go, GOTOOLCHAIN=local): the modules and the tests compiled, with empty caches. */
async function hostGo(repo: string, folder: string): Promise<number> {
  const env = {
    GOMODCACHE: join(folder, 'mod'),
    GOCACHE: join(folder, 'cache'),
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-modcacherw',
  };
  const started = performance.now();
  await run('go', ['mod', 'download'], repo, env);
  // The compile error of fixture 41 is the tests' business: go test's exit status is not the bench's.
  await run('sh', ['-c', 'go test -run XXX ./... >/dev/null 2>&1; true'], repo, env);
  return performance.now() - started;
}

export function formatGoEnvironments(costs: GoEnvironmentCost[]): string[] {
  return [
    "6d. Go environments: the repository's images built cold on the toolchain image (built once per Go release and host, in the cold time only when it was not there yet; the modules downloaded, the build cache warmed with the snapshot's packages) against `go mod download` + `go test -run XXX ./...` on the host (empty module and build caches), the cached reuse, the next snapshot (one source file changed: its project image on the reused dependencies), the one after it with one import more (encoding/csv: its warm layer too), and the first test run after the cold build (warm cache copy) against the same run on an empty build cache",
    ...table(
      [
        'repository',
        'toolchain',
        'cold s',
        'host go s',
        'cached ms',
        'next snapshot s',
        'new import s',
        'first run s',
        'empty cache s',
        'image MB',
      ],
      costs.map((cost) => [
        cost.fixture,
        cost.toolchain.slice(0, 40),
        number(cost.coldMs / 1000),
        number(cost.hostMs / 1000),
        number(cost.cachedMs.median, 0),
        number(cost.nextSnapshotMs / 1000),
        number(cost.newImportMs / 1000),
        number(cost.firstRunMs / 1000),
        number(cost.coldCacheRunMs / 1000),
        number(cost.imageMb, 0),
      ]),
    ),
  ];
}
