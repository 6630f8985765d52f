// What real test suites need of the sandbox's memory: each suite runs in its environment image,
// in a sandbox container as a run makes it, at several memory limits; for each limit, whether the
// run finished with its summary or ran out of memory (the OOM killer, or V8's heap limit), its peak
// use (the cgroup's, page cache included) and its time. The sandbox's default limits come from here.
//   node --import tsx bench/suiteMemory.ts [limits in MB, e.g. 256,512,768,1024,2048]
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxLimitsSchema } from '../src/agent/input.js';
import { loadConfig } from '../src/config.js';
import { loadFixture } from '../src/demo/fixtures.js';
import { connectDocker, findSandboxContainer } from '../src/sandbox/container/container.js';
import { readMemoryCounters } from '../src/sandbox/container/memoryCounters.js';
import { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { FolderStore } from '../src/sandbox/store/folderStore.js';

/**
 * The suites: jest + ts-jest (two projects, coverage) as this machine runs it and with 4 workers (as
 * jest runs on a 5-core machine: it starts one worker per core but one), vitest, pytest with plugins.
 */
const suites: Array<{ fixture: string; testCommand?: string }> = [
  { fixture: '28_ts_jest_projects' },
  { fixture: '28_ts_jest_projects', testCommand: 'npx jest --maxWorkers=4' },
  { fixture: '18_ts_vitest' },
  { fixture: '17_requirements_pytest_asyncio' },
  { fixture: '27_py_own_package_from_index' },
];
const limits = (process.argv[2] ?? '256,384,512,768,1024,2048').split(',').map(Number);
const only = process.argv[3]?.split(',');

const config = loadConfig();
const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-suite-memory-'));
const host = new SandboxHost({
  docker: connectDocker(),
  store: new FolderStore(join(scratch, 'store')),
  workspaceRoot: join(scratch, 'workspaces'),
  hostId: 'suite-memory',
  image: config.sandboxImage,
  scope: `suite-memory/${process.pid}`,
});
const rows: string[] = [];
try {
  console.log(`host: ${availableParallelism()} CPUs visible to the sandbox; sandbox cpus 1`);
  for (const suite of suites) {
    const name = suite.fixture;
    if (only && !only.includes(suite.testCommand ?? name)) continue;
    const fixture = await loadFixture(name);
    const repo = join(scratch, name);
    await cp(fixture.path, repo, { recursive: true });
    const snapshot = await host.snapshotRepository(repo, undefined);
    const owner = {
      workflowId: 'suite-memory',
      runId: name,
      host: 'suite-memory',
      scope: `suite-memory/${process.pid}`,
    };
    const environment = await host.environments.prepare({ snapshotId: snapshot.snapshotId, choice: {}, owner });
    for (const memoryMb of limits) {
      const sandboxId = `suite-memory-${process.pid}-${name.slice(0, 2)}-${suites.indexOf(suite)}-${memoryMb}`;
      // One CPU: the worst case, and how the figures in docs/environments.md were taken.
      const limitsHere = sandboxLimitsSchema.parse({
        memoryMb,
        cpus: 1,
        pids: 4096,
        tmpMb: 512,
        commandTimeoutSeconds: 600,
      });
      await host.prepare({
        sandboxId,
        workflowId: 'suite-memory',
        runId: name,
        log: { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId },
        limits: limitsHere,
        environment: environment ? { image: environment.image, containerEnv: environment.containerEnv } : undefined,
      });
      const started = performance.now();
      const summary = await host.runTestSuite(sandboxId, snapshot.snapshotId, {
        testCommand: suite.testCommand ?? snapshot.testCommand,
        allowTestEdits: false,
        limits: limitsHere,
        observation: { maxBytes: 16_000, maxLines: 400 },
      });
      const seconds = (performance.now() - started) / 1000;
      const info = await findSandboxContainer(host.options.docker, sandboxId);
      const counters = info
        ? await readMemoryCounters(host.options.docker.getContainer(info.Id), host.user).catch(() => null)
        : null;
      const peak = counters?.peakBytes;
      const ended = summary.outOfMemory
        ? `out of memory (${summary.outOfMemory.how})`
        : summary.recognized
          ? `${summary.passed} passed, ${summary.failed} failed`
          : `exit ${summary.exitCode}, no summary`;
      const row = `${(suite.testCommand ? `${name} (${suite.testCommand})` : name).padEnd(32)} ${String(memoryMb).padStart(5)} MB  ${ended.padEnd(30)} peak ${peak ? `${Math.round(peak / 1e6)} MB` : '?'}  ${seconds.toFixed(1)} s`;
      console.log(row);
      rows.push(row);
      await host.destroy(sandboxId);
    }
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
