// The Go environment's probe, through the real worker, Docker and Go: a repository that carries a
// module of its own (cmp/, github.com/google/go-cmp) while its go.mod replaces that module by a
// registry's copy (v0.5.9) would have its tests compile the registry's code, not the workspace's.
// The environment step must refuse it before any model call, saying which module came from where.
// And the build cache: what the sources import is compiled once, in a layer the next snapshot reuses.
import assert from 'node:assert/strict';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { BuildPhase } from '../../src/sandbox/environment/imageBuilder.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let worker: TestWorker;
let scratch: string;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'go-environment-'));
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
});

test(
  "a module of the repository replaced by a registry's copy is caught by the environment's probe",
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'go_registry_copy');
    await cp(join(import.meta.dirname, 'repositories', 'go_registry_copy'), repo, { recursive: true });
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `go-registry-copy-${process.pid}`);
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(
      report.stopDetail ?? '',
      /go module github\.com\/google\/go-cmp \(the repository's cmp go\.mod\) is compiled from \/opt\/go-mod\/github\.com\/google\/go-cmp@v0\.5\.9 \(replaced by github\.com\/google\/go-cmp\), not \/workspace\/cmp/,
    );
    // Go's advice, not Python's or Node's.
    assert.match(report.stopDetail ?? '', /replace it by its folder \(replace example\.com\/m => \.\/m\)/);
    assert.doesNotMatch(report.stopDetail ?? '', /pip install|node_modules/);
    assert.equal(worker.fake.requests.length, 0, 'no model call');
  },
);

test(
  "what the sources import is compiled in a layer of its own, which the next snapshot's project image reuses and does not copy",
  { timeout: 900_000 },
  async () => {
    const docker = connectDocker();
    const { host } = worker.worker;
    const repo = join(scratch, 'go_next_snapshot');
    await cp((await loadFixture('40_go_module_gocmp')).path, repo, { recursive: true });
    // A go.mod of this test's own: the dependencies' image too is built here.
    await appendFile(join(repo, 'go.mod'), `// ${process.pid}-${Date.now()}\n`);
    const prepare = async () => {
      const phases: BuildPhase[] = [];
      const { snapshotId } = await host.snapshotRepository(repo, undefined);
      const owner = {
        workflowId: 'go-next-snapshot',
        runId: 'test',
        host: host.options.hostId,
        scope: host.options.scope,
      };
      const prepared = await host.environments.prepare(
        { snapshotId, choice: {}, owner },
        { onPhase: (phase) => phases.push(phase) },
      );
      assert.ok(prepared);
      return { image: prepared.image, phases };
    };
    const first = await prepare();
    assert.ok(first.phases.includes('project warm-up install'), first.phases.join(', '));
    assert.ok(first.phases.includes('project install'));
    await appendFile(join(repo, 'datasize.go'), '\n// the next commit\n');
    const next = await prepare();
    assert.notEqual(next.image, first.image);
    // The warm layer is found again; only the project's own install is built.
    assert.ok(!next.phases.includes('project warm-up install'), next.phases.join(', '));
    assert.ok(next.phases.includes('project install'));
    const layers = (await docker.getImage(next.image).history()) as Array<{ Size: number; Comment: string }>;
    const warm = layers.find((layer) => /the \d+ packages the sources import, compiled/.test(layer.Comment));
    assert.ok(warm, layers.map((layer) => layer.Comment).join(' | '));
    // The project's layer holds its own packages, not a copy of the warm cache it reads.
    const own = layers[0] as { Size: number };
    assert.ok(own.Size * 4 < warm.Size, `project layer ${own.Size} bytes, warm layer ${warm.Size} bytes`);
    for (const image of [first.image, next.image])
      await docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
  },
);
