// 6c. The C and C++ environment (issue 35): for the C/C++ fixtures, the cold build of the
// repository's image (the Debian toolchain image, made once per package list: its time is in cold
// when this run had to make it; then the repository configured and built in /opt/build) against the
// build tool's own time on the host (cmake configure + build, or make check), the cached reuse, and
// the next snapshot, and the first test run after the cold build, in a container as the sandbox makes it (the workspace
// written anew, a copy of the warm /opt/build, the sandbox's user), against a full rebuild.
import { appendFile, chown, cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../src/demo/fixtures.js';
import { sandboxContainerEnv } from '../src/sandbox/container/sandboxEnv.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { preparedAfterChange, preparedColdThenCached, runToEnd as run } from './environmentRuns.js';
import { figure, number, table, type Figure } from './stats.js';

const cppFixtures = ['55_cpp_cmake_gtest_semver', '56_c_makefile_check_strbuf'];

export interface CppEnvironmentCost {
  fixture: string;
  toolchainImageBuilt: boolean;
  coldMs: number;
  hostMs: number;
  cachedMs: Figure;
  /** The next snapshot (one source file changed): its project image, on the previous one's build for CMake. */
  nextSnapshotMs: number;
  firstRunMs: number;
  rebuildRunMs: number;
  imageMb: number;
}

export async function measureCppEnvironments(host: SandboxHost, repetitions: number): Promise<CppEnvironmentCost[]> {
  const { docker } = host.options;
  const costs: CppEnvironmentCost[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-cpp-'));
  try {
    for (const name of cppFixtures) {
      const repo = join(scratch, name);
      await cp((await loadFixture(name)).path, repo, { recursive: true });
      const cmake = (await readdir(repo)).includes('CMakeLists.txt');
      // A comment in the build file is a new snapshot: the repository's own build is made cold.
      await appendFile(join(repo, cmake ? 'CMakeLists.txt' : 'Makefile'), `# bench ${process.pid}-${Date.now()}\n`);
      const snapshot = await host.snapshotRepository(repo, undefined);
      const plan = await host.environments.plan(snapshot.snapshotId, {});
      const toolchainImages = async () =>
        (await docker.listImages({ filters: { label: [`durable-debugger.environment.kind=cpp`] } })).length;
      const before = await toolchainImages();
      const { cold, coldMs, cached } = await preparedColdThenCached(host, snapshot.snapshotId, name, repetitions, repo);
      const testCommand = [...(plan?.build ?? []), plan?.testCommand as string].join(' && ');
      // The sandbox's workspace is written when the sandbox is made, owned by its user.
      const inContainer = async (command: string) => {
        const workspace = join(scratch, `${name}-workspace-${Date.now()}`);
        await cp(repo, workspace, { recursive: true });
        await chownTree(workspace, 1000);
        const at = performance.now();
        await run('docker', [
          'run',
          '--rm',
          '--network',
          'none',
          '-u',
          '1000:1000',
          ...sandboxContainerEnv(cold.containerEnv).flatMap((variable) => ['-e', variable]),
          ...(cold.writableCopies ?? []).flatMap((folder) => ['--mount', `type=volume,target=${folder}`]),
          '-v',
          `${workspace}:/workspace`,
          '-w',
          '/workspace',
          cold.image,
          'sh',
          '-c',
          `${command} >/dev/null 2>&1; true`,
        ]);
        const ms = performance.now() - at;
        await rm(workspace, { recursive: true, force: true });
        return ms;
      };
      const firstRunMs = await inContainer(testCommand);
      const rebuildRunMs = await inContainer(
        cmake
          ? `cmake --build /opt/build --clean-first -j "$(nproc)" && ${plan?.testCommand}`
          : `CCACHE_DISABLE=1 ${testCommand}`,
      );
      const hostMs = await hostBuild(repo, join(scratch, `${name}-host`), cmake);
      const source = (await readdir(join(repo, 'src'))).filter((file) => /\.(c|cc|cpp)$/.test(file)).sort()[0];
      if (!source) throw new Error(`${name}: no source in src/ to change`);
      const nextSnapshotMs = await preparedAfterChange(
        host,
        repo,
        name,
        join('src', source),
        (text) => `${text}\n// bench: the next snapshot\n`,
      );
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      costs.push({
        fixture: name,
        toolchainImageBuilt: (await toolchainImages()) > before + 1,
        coldMs,
        hostMs,
        cachedMs: figure(cached),
        nextSnapshotMs,
        firstRunMs,
        rebuildRunMs,
        imageMb,
      });
      await docker
        .getImage(cold.image)
        .remove()
        .catch(() => undefined);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return costs;
}

async function chownTree(path: string, uid: number): Promise<void> {
  await chown(path, uid, uid).catch(() => undefined);
  if (!(await stat(path)).isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), uid);
}

/** The build tool's own time on the host: cmake configure + build (GoogleTest from Debian's sources, as in the image), or make check. */
async function hostBuild(repo: string, folder: string, cmake: boolean): Promise<number> {
  const copy = join(folder, 'repo');
  await cp(repo, copy, { recursive: true });
  const started = performance.now();
  if (cmake) {
    await run('cmake', [
      '-S',
      copy,
      '-B',
      join(folder, 'build'),
      '-DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=/usr/src/googletest',
    ]);
    await run('cmake', ['--build', join(folder, 'build'), '-j', '2']);
  } else await run('sh', ['-c', 'make check >/dev/null 2>&1; true'], copy);
  return performance.now() - started;
}

export function formatCppEnvironments(costs: CppEnvironmentCost[]): string[] {
  return [
    "6c. C/C++ environments: the repository's image built cold (Debian's toolchain through apt, made once per package list, then configure + build in /opt/build) against the build tool on the host (cmake configure + build, or make check), the cached reuse, the next snapshot (a comment added to one source: its project image, on the previous snapshot's build for CMake), and the first test run after the cold build (a copy of the warm /opt/build or ccache) against a full rebuild",
    ...table(
      [
        'repository',
        'toolchain image',
        'cold s',
        'host build s',
        'cached ms',
        'next snapshot s',
        'first run s',
        'full rebuild s',
        'image MB',
      ],
      costs.map((cost) => [
        cost.fixture,
        cost.toolchainImageBuilt ? 'built (in cold)' : 'reused',
        number(cost.coldMs / 1000),
        number(cost.hostMs / 1000),
        number(cost.cachedMs.median, 0),
        number(cost.nextSnapshotMs / 1000),
        number(cost.firstRunMs / 1000),
        number(cost.rebuildRunMs / 1000),
        number(cost.imageMb, 0),
      ]),
    ),
  ];
}
