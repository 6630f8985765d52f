// The Go environment's probe, through the real worker, Docker and Go: a repository that carries a
// module of its own (cmp/, github.com/google/go-cmp) while its go.mod replaces that module by a
// registry's copy (v0.5.9) would have its tests compile the registry's code, not the workspace's.
// The environment step must refuse it before any model call, saying which module came from where.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
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
