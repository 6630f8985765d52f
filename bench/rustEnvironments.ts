// 6b. The Rust environment (issue 34): for the two Rust fixtures, the cold build of the repository's
// image (on the toolchain image, which is built once per Rust release: its time is shown when this
// run had to make it) against cargo's own `cargo fetch --locked` + `cargo test --no-run` on the host
// with an empty CARGO_HOME and target folder, the cached reuse, and the first test run after the
// cold build (in a container as the sandbox makes it: the workspace, a copy of the warm target
// folder) against the same test command with an empty target folder (no warm cache).
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../src/demo/fixtures.js';
import { sandboxContainerEnv } from '../src/sandbox/container/sandboxEnv.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { preparedColdThenCached, runToEnd as run } from './environmentRuns.js';
import { figure, number, table, type Figure } from './stats.js';

const rustFixtures = ['45_rust_workspace_semver', '46_rust_doctest_slug'];

export interface RustEnvironmentCost {
  fixture: string;
  toolchain: string;
  /** Whether the toolchain image was made by this cold build (its time is then part of cold). */
  toolchainImageBuilt: boolean;
  coldMs: number;
  hostMs: number;
  cachedMs: Figure;
  firstRunMs: number;
  coldTargetRunMs: number;
  imageMb: number;
}

export async function measureRustEnvironments(host: SandboxHost, repetitions: number): Promise<RustEnvironmentCost[]> {
  const { docker } = host.options;
  const costs: RustEnvironmentCost[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-rust-'));
  try {
    for (const name of rustFixtures) {
      const repo = join(scratch, name);
      await cp((await loadFixture(name)).path, repo, { recursive: true });
      // A comment in Cargo.toml is a new image key: the repository's image is built cold.
      await appendFile(join(repo, 'Cargo.toml'), `# bench ${process.pid}-${Date.now()}\n`);
      const snapshot = await host.snapshotRepository(repo, undefined);
      const plan = await host.environments.plan(snapshot.snapshotId, {});
      const toolchainImages = () =>
        docker.listImages({
          filters: { label: [`durable-debugger.environment.description=${plan?.basePlan?.description ?? ''}`] },
        });
      const toolchainBefore = (await toolchainImages()).length;
      const { cold, coldMs, cached } = await preparedColdThenCached(host, snapshot.snapshotId, name, repetitions);
      const testCommand = plan?.testCommand as string;
      const inContainer = async (command: string) => {
        const at = performance.now();
        await run('docker', [
          'run',
          '--rm',
          '--network',
          'none',
          ...sandboxContainerEnv(cold.containerEnv).flatMap((variable) => ['-e', variable]),
          ...(cold.writableCopies ?? []).flatMap((folder) => ['--mount', `type=volume,target=${folder}`]),
          '-v',
          `${repo}:/workspace`,
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
      const coldTargetRunMs = await inContainer(`CARGO_TARGET_DIR=/tmp/cold-target ${testCommand}`);
      const hostMs = await hostCargo(repo, join(scratch, `${name}-host`));
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      costs.push({
        fixture: name,
        toolchain: cold.toolchain?.[0] ?? '?',
        toolchainImageBuilt: toolchainBefore === 0 && (await toolchainImages()).length > 0,
        coldMs,
        hostMs,
        cachedMs: figure(cached),
        firstRunMs,
        coldTargetRunMs,
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

/** cargo's own time on the host: fetch and compile the tests, with an empty CARGO_HOME and target folder. */
async function hostCargo(repo: string, folder: string): Promise<number> {
  const env = { CARGO_HOME: join(folder, 'cargo-home'), CARGO_TARGET_DIR: join(folder, 'target') };
  // The host's toolchain the build copied: rustup's `stable` (a toolchain file's pin needs rustup's own name for it).
  const rustup = { RUSTUP_TOOLCHAIN: process.env.RUSTUP_TOOLCHAIN ?? 'stable' };
  const started = performance.now();
  await run('cargo', ['fetch', '--locked'], repo, { ...env, ...rustup });
  await run('cargo', ['test', '--workspace', '--no-run', '--offline', '--locked'], repo, { ...env, ...rustup });
  return performance.now() - started;
}

export function formatRustEnvironments(costs: RustEnvironmentCost[]): string[] {
  return [
    "6b. Rust environments: the repository's image built cold on the toolchain image (built once per Rust release) against `cargo fetch --locked` + `cargo test --no-run` on the host (empty CARGO_HOME and target), the cached reuse, and the first test run after the cold build (warm target copy) against the same run with an empty target folder",
    ...table(
      [
        'repository',
        'toolchain',
        'toolchain image',
        'cold s',
        'host cargo s',
        'cached ms',
        'first run s',
        'empty target s',
        'image MB',
      ],
      costs.map((cost) => [
        cost.fixture,
        cost.toolchain.slice(0, 40),
        cost.toolchainImageBuilt ? 'built (in cold)' : 'reused',
        number(cost.coldMs / 1000),
        number(cost.hostMs / 1000),
        number(cost.cachedMs.median, 0),
        number(cost.firstRunMs / 1000),
        number(cost.coldTargetRunMs / 1000),
        number(cost.imageMb, 0),
      ]),
    ),
  ];
}
