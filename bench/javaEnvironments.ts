// 6e. The Java environment (issue 35): for the two Maven fixtures, the cold build of the repository's
// image (on the toolchain image, which is built once per Maven release: its time is shown when this
// run had to make it) against Maven's own `mvn -B dependency:go-offline` + `mvn -B test-compile` on the
// host with an empty local repository, the cached reuse, and the first test run after the cold build
// (in a container as the sandbox makes it: offline, the image's local repository) against the time
// the suite itself takes (the sum of its Surefire reports' times).
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../src/demo/fixtures.js';
import { sandboxContainerEnv } from '../src/sandbox/container/sandboxEnv.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { preparedColdThenCached, runToEnd as run } from './environmentRuns.js';
import { figure, number, table, type Figure } from './stats.js';

const javaFixtures = ['50_java_maven_junit5_slug', '51_java_maven_reactor_ledger'];

export interface JavaEnvironmentCost {
  fixture: string;
  toolchain: string;
  /** Whether the toolchain image was made by this cold build (its time is then part of cold). */
  toolchainImageBuilt: boolean;
  coldMs: number;
  hostMs: number;
  cachedMs: Figure;
  firstRunMs: number;
  suiteMs: number;
  imageMb: number;
}

// After the test command: the suite's own time from Surefire's reports, then target/ removed (the
// container writes it as root, and the host's run must not find it).
const suiteTime = [
  'python3 -c "import glob, xml.etree.ElementTree as ET;',
  "print('suite', sum(float(ET.parse(p).getroot().get('time') or 0) for p in glob.glob('**/surefire-reports/TEST-*.xml', recursive=True)))\"",
  '; find . -name target -type d -prune -exec rm -rf {} +',
].join(' ');

export async function measureJavaEnvironments(host: SandboxHost, repetitions: number): Promise<JavaEnvironmentCost[]> {
  const { docker } = host.options;
  const costs: JavaEnvironmentCost[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-java-'));
  try {
    for (const name of javaFixtures) {
      const repo = join(scratch, name);
      await cp((await loadFixture(name)).path, repo, { recursive: true });
      // A comment in pom.xml is a new image key: the repository's image is built cold.
      await appendFile(join(repo, 'pom.xml'), `<!-- bench ${process.pid}-${Date.now()} -->\n`);
      const snapshot = await host.snapshotRepository(repo, undefined);
      const plan = await host.environments.plan(snapshot.snapshotId, {});
      const toolchainImages = () =>
        docker.listImages({
          filters: { label: [`durable-debugger.environment.description=${plan?.basePlan?.description ?? ''}`] },
        });
      const toolchainBefore = (await toolchainImages()).length;
      const { cold, coldMs, cached } = await preparedColdThenCached(host, snapshot.snapshotId, name, repetitions);
      const testCommand = plan?.testCommand as string;
      const at = performance.now();
      const output = await run('docker', [
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
        `${testCommand} >/dev/null 2>&1; ${suiteTime}`,
      ]);
      const firstRunMs = performance.now() - at;
      const suiteMs = Number(output.match(/^suite (\S+)/m)?.[1] ?? NaN) * 1000;
      const hostMs = await hostMaven(repo, join(scratch, `${name}-host`));
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      costs.push({
        fixture: name,
        toolchain: cold.toolchain?.[0] ?? '?',
        toolchainImageBuilt: toolchainBefore === 0 && (await toolchainImages()).length > 0,
        coldMs,
        hostMs,
        cachedMs: figure(cached),
        firstRunMs,
        suiteMs,
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

/** Maven's own time on the host: resolve everything, then compile the tests, with an empty local repository. */
async function hostMaven(repo: string, folder: string): Promise<number> {
  const local = `-Dmaven.repo.local=${join(folder, 'repository')}`;
  const copy = join(folder, 'project');
  await cp(repo, copy, { recursive: true });
  const started = performance.now();
  // A reactor's go-offline cannot resolve a sibling module (not installed anywhere, as in a fresh clone):
  // it fails for that module (-fae goes on with the others), and test-compile fetches what is left.
  await run('sh', ['-c', `mvn -B -ntp -fae ${local} dependency:go-offline >/dev/null 2>&1; true`], copy);
  await run('mvn', ['-B', '-ntp', local, 'test-compile'], copy);
  return performance.now() - started;
}

export function formatJavaEnvironments(costs: JavaEnvironmentCost[]): string[] {
  return [
    "6e. Java environments: the repository's image built cold on the toolchain image (built once per Maven release) against `mvn -B dependency:go-offline` + `mvn -B test-compile` on the host (empty local repository), the cached reuse, and the first test run after the cold build (offline, in a container) against the suite's own time (its Surefire reports)",
    ...table(
      [
        'repository',
        'toolchain',
        'toolchain image',
        'cold s',
        'host mvn s',
        'cached ms',
        'first run s',
        'suite s',
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
        number(cost.suiteMs / 1000),
        number(cost.imageMb, 0),
      ]),
    ),
  ];
}
