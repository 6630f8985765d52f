// 6. The environment step: installing a repository's dependencies into an image (cold, from the
// registries) next to finding that image again (cached), per fixture kind, with the image's size.
// A cold build is forced by a fresh copy of the fixture whose manifest differs by a comment (a
// new cache key); it runs once per fixture, since it downloads from the registries. The cached
// lookup runs `repetitions` times. What confinement costs: the same cold build once more on the
// host's network (as builds ran before the registry proxy), right after the proxied one, so any
// cache warmed on the way favours the host's network (the proxy's cost is not understated).
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../src/demo/fixtures.js';
import { EnvironmentBuilder } from '../src/sandbox/environment/imageBuilder.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { figure, figureTable, number, repeat, table, type Figure } from './stats.js';

export const environmentFixtures = [
  '16_pyproject_dependencies',
  '17_requirements_pytest_asyncio',
  '18_ts_vitest',
  '19_js_node_test_semver',
];

export interface EnvironmentBuildCost {
  fixture: string;
  description: string;
  packages: number | null;
  /** Through the registry proxy, as every build runs. */
  coldMs: number;
  /** The same build on the host's network, for comparison only. */
  coldHostNetworkMs: number;
  cachedMs: Figure;
  imageMb: number;
  addedMb: number;
}

export interface EnvironmentBuildResult {
  baseImageMb: number;
  fixtures: EnvironmentBuildCost[];
}

export async function measureEnvironmentBuild(host: SandboxHost, repetitions: number): Promise<EnvironmentBuildResult> {
  const { docker } = host.options;
  const baseImageMb = ((await docker.getImage(host.options.image).inspect()).Size ?? 0) / 1e6;
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-env-'));
  const built: string[] = [];
  const fixtures: EnvironmentBuildCost[] = [];
  const hostNetwork = new EnvironmentBuilder({ ...host.environments.options, network: 'host' });
  const snapshotOf = async (name: string, copy: string) => {
    const repo = join(scratch, copy, name);
    await cp((await loadFixture(name)).path, repo, { recursive: true });
    await saltManifest(repo, `${copy}-${process.pid}-${Date.now()}`);
    return host.snapshotRepository(repo, undefined);
  };
  try {
    for (const name of environmentFixtures) {
      const snapshot = await snapshotOf(name, 'proxy');
      const request = {
        snapshotId: snapshot.snapshotId,
        choice: {},
        owner: {
          workflowId: 'bench-environment',
          runId: 'bench',
          host: host.options.hostId,
          scope: `bench-environment/${process.pid}`,
        },
      };
      const coldStarted = performance.now();
      const cold = await host.environments.prepare(request);
      const coldMs = performance.now() - coldStarted;
      if (!cold || cold.reused)
        throw new Error(`${name}: the cold build was ${cold ? 'found in the cache' : 'not needed'}`);
      built.push(cold.image);
      const unconfinedRequest = { ...request, snapshotId: (await snapshotOf(name, 'host-network')).snapshotId };
      const unconfinedStarted = performance.now();
      const unconfined = await hostNetwork.prepare(unconfinedRequest);
      const coldHostNetworkMs = performance.now() - unconfinedStarted;
      if (!unconfined || unconfined.reused) throw new Error(`${name}: the host-network build was found in the cache`);
      built.push(unconfined.image);
      const cached = await repeat(repetitions, async () => {
        const started = performance.now();
        const again = await host.environments.prepare(request);
        if (!again?.reused) throw new Error(`${name}: the second preparation built again`);
        return performance.now() - started;
      });
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      fixtures.push({
        fixture: name,
        description: cold.description,
        packages: cold.packages,
        coldMs,
        coldHostNetworkMs,
        cachedMs: figure(cached),
        imageMb,
        addedMb: imageMb - baseImageMb,
      });
    }
  } finally {
    for (const image of built)
      await docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
  return { baseImageMb, fixtures };
}

/** Changes a manifest without changing what it installs, so that its environment is not cached yet. */
async function saltManifest(repo: string, salt: string): Promise<void> {
  const requirements = join(repo, 'requirements.txt');
  const pyproject = join(repo, 'pyproject.toml');
  const packageJson = join(repo, 'package.json');
  if (
    await readFile(requirements).then(
      () => true,
      () => false,
    )
  )
    return appendFile(requirements, `# bench ${salt}\n`);
  // The key covers the requirements read from pyproject.toml, not its text: add one that never applies.
  if (
    await readFile(pyproject).then(
      () => true,
      () => false,
    )
  ) {
    const text = await readFile(pyproject, 'utf8');
    return writeFile(
      pyproject,
      text.replace('dependencies = [', `dependencies = [\n    "bench-salt-${salt} ; python_version < '3'",`),
    );
  }
  const manifest = JSON.parse(await readFile(packageJson, 'utf8')) as Record<string, unknown>;
  await writeFile(packageJson, JSON.stringify({ ...manifest, description: `bench ${salt}` }, null, 2));
}

export function formatEnvironmentBuild(result: EnvironmentBuildResult): string[] {
  return [
    `6. Environment step: cold build (once per fixture, from the registries, through the registry proxy) vs the same cold build on the host's network (what the proxy costs) vs cached (the image found again); base image ${number(result.baseImageMb, 0)} MB`,
    ...table(
      [
        'fixture',
        'installs',
        'packages',
        'cold s',
        'host network s',
        'proxy costs s',
        'cached ms (median)',
        'image MB',
        'added MB',
      ],
      result.fixtures.map((cost) => [
        cost.fixture,
        cost.description,
        String(cost.packages ?? '?'),
        number(cost.coldMs / 1000),
        number(cost.coldHostNetworkMs / 1000),
        number((cost.coldMs - cost.coldHostNetworkMs) / 1000),
        number(cost.cachedMs.median),
        number(cost.imageMb, 0),
        number(cost.addedMb, 0),
      ]),
    ),
    ...result.fixtures.flatMap((cost) =>
      figureTable([
        { label: `${cost.fixture} cached`, figure: cost.cachedMs, format: (value) => `${number(value)} ms` },
      ]).slice(1),
    ),
  ];
}
