// The Go environment's probe, through the real worker, Docker and Go: a repository that carries a
// module of its own (cmp/, github.com/google/go-cmp) while its go.mod replaces that module by a
// registry's copy (v0.5.9) would have its tests compile the registry's code, not the workspace's.
// The environment step must refuse it before any model call, saying which module came from where.
// And the build cache: what the sources import is compiled once, in a layer the next snapshot reuses
// and the one with an import more builds on.
import assert from 'node:assert/strict';
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import type { BuildPhase } from '../../src/sandbox/environment/imageBuilder.js';
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
  "what the sources import is compiled in a layer of its own, which the next snapshot's project image reuses and does not copy, and one more import builds on",
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
    const layers = (await docker.getImage(next.image).history()) as Array<{
      Id: string;
      Size: number;
      Comment: string;
    }>;
    const warm = layers.find((layer) => /the \d+ packages the sources import, compiled/.test(layer.Comment));
    assert.ok(warm, layers.map((layer) => layer.Comment).join(' | '));
    // The project's layer holds its own packages, not a copy of the warm cache it reads.
    const own = layers[0] as { Size: number };
    assert.ok(own.Size * 4 < warm.Size, `project layer ${own.Size} bytes, warm layer ${warm.Size} bytes`);
    // Nor will it a day later: go re-dates an entry it uses when its time is over an hour old (a
    // copy of the file in the new layer), and the warm entries are dated ahead.
    const dated = await inImage(
      warm.Id,
      `find /opt/go-cache -type f | wc -l; find /opt/go-cache -type f ! -newermt 2099-01-01 | wc -l`,
    );
    assert.match(dated, /^[1-9]\d*\n0\n$/, `cache files, then those dated before 2099:\n${dated}`);

    // One import more: its layer is made on the first warm layer and holds only what that lacks.
    const source = join(repo, 'datasize.go');
    await writeFile(
      source,
      (await readFile(source, 'utf8')).replace('package datasize\n', 'package datasize\n\nimport _ "encoding/csv"\n'),
    );
    const more = await prepare();
    assert.ok(more.phases.includes('project warm-up install'), more.phases.join(', '));
    const stacked = (await docker.getImage(more.image).history()) as Array<{
      Id: string;
      Size: number;
      Comment: string;
    }>;
    const warmLayers = stacked.filter((layer) => /the \d+ packages the sources import, compiled/.test(layer.Comment));
    assert.equal(warmLayers.length, 2, stacked.map((layer) => layer.Comment).join(' | '));
    const [added, beneath] = warmLayers as Array<{ Id: string; Size: number }>;
    assert.ok(added && beneath);
    assert.equal(beneath.Id, warm.Id, 'the first warm layer is the base');
    assert.ok(added.Size * 4 < beneath.Size, `added warm layer ${added.Size} bytes, first ${beneath.Size} bytes`);
    for (const image of [first.image, next.image, more.image])
      await docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
  },
);
