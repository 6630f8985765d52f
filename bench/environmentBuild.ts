// 6. The environment step, for repositories shaped like those of issue 36 (npm without a lockfile,
// a pnpm workspace, Yarn 4, pip with a dependency group, Poetry; and, at the sizes the issue measured,
// npm with a lockfile of hundreds of packages and pip with tens of them): the cold build against the same
// install run by the installer itself on the host, in the same run, with the build's fixed cost
// split into its steps (EnvironmentBuilder's onPhase), and the cached reuse (found, then remembered).
// A cold build is forced by a fresh copy of the repository whose manifest differs by a comment (a new
// cache key). The host's install gets empty caches of its own, as the build does; the tools it needs
// (pnpm, poetry, the npm release the build ran) are installed before it is timed and run directly, as
// the build's toolchain is kept on the host. It runs the dependencies' install scripts, as the
// project's CI does and the build does. Cold builds
// and host installs alternate, three of each (BENCH_COLD_ROUNDS), and the figures are their medians.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFixture } from '../src/demo/fixtures.js';
import type { BuildPhase } from '../src/sandbox/environment/imageBuilder.js';
import { environmentPaths } from '../src/sandbox/environment/planTypes.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { figure, number, repeat, table, type Figure } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));

/** A repository shape: where its files come from and how its users install it on their machine. */
interface EnvironmentShape {
  name: string;
  /** A fixture under fixtures/, or files of bench/environmentProjects (their names there → in the repository). */
  source: { fixture: string } | { files: Record<string, string> };
  /** Files removed from the copy (the lockfile, to install without one). */
  without?: string[];
  /** The installer's own command on the host, in the repository's copy; `caches` is an empty folder of its own. */
  hostInstall(repo: string, caches: string, requirements: string): Promise<Array<{ command: string; args: string[] }>>;
  /** What the host's install needs before it is timed (the package manager itself); `built` is a cold build's image. */
  hostSetup?(built: string): Promise<void>;
  /** Variables the host's install runs with, pointing its caches into `caches`. */
  hostEnv(caches: string): Record<string, string>;
  /** At the size of the issue's larger repositories: stated apart from the goal's median, which is the five small shapes'. */
  larger?: true;
}

const pnpmHome = join(tmpdir(), 'durable-debugger-bench-pnpm-9.15.9');
const pnpm = join(pnpmHome, 'node_modules', '.bin', 'pnpm');
const poetryHome = join(tmpdir(), 'durable-debugger-bench-poetry');
const poetry = join(poetryHome, 'bin', 'poetry');

/**
 * The npm release the build ran (the one the repository's Node ships, as CI's setup-node gives it),
 * installed on the host where it runs with the host's Node, not the host's own npm: npm 11 installs
 * the bench's repository a second faster than npm 10 on this machine. `args`: npm's own command.
 */
function npmOfTheBuild(args: string[]): Pick<EnvironmentShape, 'hostSetup' | 'hostInstall' | 'hostEnv'> {
  let npmCli = '';
  return {
    hostSetup: async (built) => {
      if (npmCli) return; // asked once per shape: every round passes the same first build's image
      const release = (
        await run('docker', ['run', '--rm', '--network', 'none', built, 'npm', '--version'], tmpdir(), {})
      ).trim();
      const npmHome = join(tmpdir(), `durable-debugger-bench-npm-${release}`);
      const cli = join(npmHome, 'node_modules', 'npm', 'bin', 'npm-cli.js');
      if (!existsSync(cli))
        await run('npm', ['install', '--prefix', npmHome, '--no-save', `npm@${release}`], tmpdir(), {});
      npmCli = cli;
    },
    hostInstall: async () => [{ command: process.execPath, args: [npmCli, ...args, '--no-audit', '--no-fund'] }],
    hostEnv: (caches) => ({ npm_config_cache: join(caches, 'npm') }),
  };
}

export const environmentShapes: EnvironmentShape[] = [
  {
    name: 'npm, no lockfile',
    source: { fixture: '18_ts_vitest' },
    without: ['package-lock.json'],
    ...npmOfTheBuild(['install']),
  },
  {
    name: 'pnpm workspace',
    source: { fixture: '32_pnpm_workspace_vitest' },
    hostSetup: async () => {
      if (!existsSync(pnpm))
        await run('npm', ['install', '--prefix', pnpmHome, '--no-save', 'pnpm@9.15.9'], tmpdir(), {});
    },
    hostInstall: async () => [{ command: pnpm, args: ['install', '--frozen-lockfile'] }],
    hostEnv: (caches) => ({ npm_config_store_dir: join(caches, 'pnpm-store'), XDG_CACHE_HOME: join(caches, 'xdg') }),
  },
  {
    name: 'yarn 4 (own release)',
    source: { fixture: '22_js_yarn4_release' },
    hostInstall: async () => [{ command: 'node', args: ['.yarn/releases/yarn-4.4.1.cjs', 'install', '--immutable'] }],
    hostEnv: (caches) => ({ YARN_GLOBAL_FOLDER: join(caches, 'yarn'), YARN_ENABLE_TELEMETRY: '0' }),
  },
  {
    name: 'pip, dependency group',
    source: { fixture: '27_py_own_package_from_index' },
    ...pipOfTheBuild(),
  },
  {
    name: 'poetry',
    source: {
      files: {
        'poetry-pyproject.toml': 'pyproject.toml',
        'poetry-project.lock': 'poetry.lock',
        'poetry-ledger-report.py': 'src/ledger_report/__init__.py',
      },
    },
    hostSetup: async () => {
      if (existsSync(poetry)) return;
      await run('python3', ['-m', 'venv', poetryHome], tmpdir(), {});
      await run(join(poetryHome, 'bin', 'pip'), ['install', '--quiet', 'poetry'], tmpdir(), {});
    },
    hostInstall: async () => [{ command: poetry, args: ['install', '--no-interaction', '--with', 'test'] }],
    hostEnv: (caches) => ({ POETRY_CACHE_DIR: join(caches, 'poetry'), POETRY_VIRTUALENVS_IN_PROJECT: 'true' }),
  },
  {
    // The issue's 357 and 454 npm packages: jest with ts-jest, its lockfile installed by `npm ci`.
    name: 'npm ci, jest (larger)',
    source: { fixture: '28_ts_jest_projects' },
    ...npmOfTheBuild(['ci']),
    larger: true,
  },
  {
    // The issue's 62 Python packages in a dependency group: a service library's dependencies and its tests'.
    name: 'pip, dependency group (larger)',
    source: {
      files: {
        'pip-group-pyproject.toml': 'pyproject.toml',
        'pip-group-package.py': 'src/invoice_sync/__init__.py',
      },
    },
    ...pipOfTheBuild(),
    larger: true,
  },
];

const venvPython = `${environmentPaths.venv}/bin/python3`;

/**
 * pip into a venv as the build does it (the same pip release, unpacked from its wheel into a venv made
 * without one), not the host's own pip (23.2 here, where the build fetches the newest): the requirements
 * the plan chose (the test group), then the project editable, as CI does. It keeps the release's
 * wheel, downloaded once per shape before the first host install is timed.
 */
function pipOfTheBuild(): Pick<EnvironmentShape, 'hostSetup' | 'hostInstall' | 'hostEnv'> {
  let wheel = '';
  return {
    hostSetup: async (built) => {
      if (wheel) return;
      const version = (
        await run(
          'docker',
          ['run', '--rm', '--network', 'none', built, venvPython, '-m', 'pip', '--version'],
          tmpdir(),
          {},
        )
      ).split(' ')[1];
      const folder = join(tmpdir(), `durable-debugger-bench-pip-${version}`);
      const name = `pip-${version}-py3-none-any.whl`;
      if (!existsSync(join(folder, name)))
        await run(
          'python3',
          ['-m', 'pip', 'download', `pip==${version}`, '--no-deps', '--only-binary', ':all:', '-d', folder],
          tmpdir(),
          {},
        );
      wheel = join(folder, name);
    },
    hostInstall: async (repo, _caches, requirements) => {
      const python = join(repo, '.venv', 'bin', 'python');
      const pip = (args: string[]) => ({ command: python, args: ['-m', 'pip', 'install', '--no-input', ...args] });
      return [
        { command: 'python3', args: ['-m', 'venv', '--without-pip', join(repo, '.venv')] },
        {
          command: 'sh',
          args: [
            '-c',
            `"$0" -m zipfile -e "$1" "$("$0" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`,
            python,
            wheel,
          ],
        },
        pip(['-r', requirements]),
        pip(['--no-deps', '--editable', '.']),
      ];
    },
    hostEnv: (caches) => ({ PIP_CACHE_DIR: join(caches, 'pip') }),
  };
}

/** Milliseconds per step of a preparation, summed over the step's occurrences. */
export type PhaseTimes = Partial<Record<BuildPhase, number>>;

export interface EnvironmentBuildCost {
  shape: string;
  description: string;
  packages: number | null;
  /** The whole preparation, cold: plan, build, the project's own install, probes (median of coldRounds). */
  coldMs: number;
  coldRounds: number[];
  /** When this run made the shape's toolchain image: how long that took (in a build not counted in coldMs). */
  toolchainImageMs?: number;
  phases: PhaseTimes;
  /** The same install by the installer itself on the host, from empty caches (median of hostRounds, alternating with the cold builds). */
  hostInstallMs: number;
  hostRounds: number[];
  /** The first preparation after the build: found by planning and asking Docker about each image. */
  foundMs: number;
  foundPhases: PhaseTimes;
  /** The later ones: remembered by the worker. */
  cachedMs: Figure;
  imageMb: number;
  addedMb: number;
  /** A shape at the issue's larger sizes (EnvironmentShape's larger). */
  larger?: true;
}

export interface EnvironmentBuildResult {
  baseImageMb: number;
  /** The machine's load average (1 minute) when the section started and ended. */
  load: [number, number];
  fixtures: EnvironmentBuildCost[];
}

/** Cold builds and host installs per repository, alternating (BENCH_COLD_ROUNDS, an odd number: the median is one of them). */
const coldRounds = Number(process.env.BENCH_COLD_ROUNDS ?? 3);

export async function measureEnvironmentBuild(host: SandboxHost, repetitions: number): Promise<EnvironmentBuildResult> {
  if (!Number.isInteger(coldRounds) || coldRounds < 1 || coldRounds % 2 === 0)
    throw new Error(`BENCH_COLD_ROUNDS must be an odd number (${coldRounds})`);
  const { docker } = host.options;
  const loadBefore = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0];
  const baseImageMb = ((await docker.getImage(host.options.image).inspect()).Size ?? 0) / 1e6;
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-bench-env-'));
  const built: string[] = [];
  const fixtures: EnvironmentBuildCost[] = [];
  try {
    for (const shape of environmentShapes) {
      const coldBuild = async () => {
        const repo = await copyShape(shape, join(scratch, 'build'));
        await saltManifest(repo, `${process.pid}-${Date.now()}`);
        const snapshot = await host.snapshotRepository(repo, undefined);
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
        const phases: PhaseTimes = {};
        const onPhase = (phase: BuildPhase, ms: number) => (phases[phase] = (phases[phase] ?? 0) + ms);
        const coldStarted = performance.now();
        const cold = await host.environments.prepare(request, { onPhase });
        const coldMs = performance.now() - coldStarted;
        if (!cold || cold.reused)
          throw new Error(`${shape.name}: the cold build was ${cold ? 'found in the cache' : 'not needed'}`);
        built.push(cold.image);
        return { snapshot, request, phases, cold, coldMs };
      };
      // A toolchain image (node with its package manager, a lock's export tool) is made once per
      // machine and shared by every repository asking the same toolchain: when this build made it, it
      // is stated apart, and the figure is a second cold build, as a repository's first build is once
      // the machine has one.
      let first = await coldBuild();
      const toolchainImageMs =
        first.phases['toolchain image install'] !== undefined
          ? summedPhases(first.phases, 'toolchain image ')
          : undefined;
      if (toolchainImageMs !== undefined) first = await coldBuild();
      // The host's own time of one install moves by 30 to 100 % from one try to the next (the
      // registry's answers): cold builds and host installs alternate, and each figure is a median.
      const builds = [first];
      const hostInstalls = [
        await timeHostInstall(shape, host, first.snapshot.snapshotId, first.cold.image, join(scratch, 'host')),
      ];
      while (builds.length < coldRounds) {
        builds.push(await coldBuild());
        hostInstalls.push(
          await timeHostInstall(shape, host, first.snapshot.snapshotId, first.cold.image, join(scratch, 'host')),
        );
      }
      const coldMs = medianOf(builds.map((build) => build.coldMs));
      const hostInstallMs = medianOf(hostInstalls);
      // The breakdown is the median build's.
      const { request, phases, cold } = builds.find((build) => build.coldMs === coldMs) ?? first;
      // Found again: the first time by looking (the plan, an inspection per image of its chain), as a
      // worker that has not seen the request does; then as this worker remembers it.
      const cachedPreparation = async () => {
        const phases: PhaseTimes = {};
        const started = performance.now();
        const again = await host.environments.prepare(request, {
          onPhase: (phase, ms) => (phases[phase] = (phases[phase] ?? 0) + ms),
        });
        const ms = performance.now() - started;
        if (!again?.reused) throw new Error(`${shape.name}: the second preparation built again`);
        return { ms, phases };
      };
      const found = await cachedPreparation();
      const remembered = await repeat(repetitions, cachedPreparation);
      if (remembered.some((again) => again.phases.remembered === undefined))
        throw new Error(`${shape.name}: a preparation found again was not remembered`);
      process.stderr.write(
        `bench:   ${shape.name}: cold ${builds.map((build) => seconds(build.coldMs)).join(', ')} s, the installer on the host ${hostInstalls.map(seconds).join(', ')} s\n`,
      );
      const imageMb = ((await docker.getImage(cold.image).inspect()).Size ?? 0) / 1e6;
      fixtures.push({
        shape: shape.name,
        description: cold.description,
        packages: cold.packages,
        coldMs,
        coldRounds: builds.map((build) => build.coldMs),
        ...(toolchainImageMs !== undefined ? { toolchainImageMs } : {}),
        phases,
        hostInstallMs,
        hostRounds: hostInstalls,
        foundMs: found.ms,
        foundPhases: found.phases,
        cachedMs: figure(remembered.map((again) => again.ms)),
        imageMb,
        addedMb: imageMb - baseImageMb,
        ...(shape.larger ? { larger: true as const } : {}),
      });
    }
  } finally {
    await host.environments.close();
    for (const image of built)
      await docker
        .getImage(image)
        .remove()
        .catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
  const loadAfter = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0];
  return { baseImageMb, load: [Number(loadBefore), Number(loadAfter)], fixtures };
}

/** A fresh copy of the shape's repository under `folder`. */
async function copyShape(shape: EnvironmentShape, folder: string): Promise<string> {
  const repo = await mkdtemp(join(await mkdir(folder, { recursive: true }).then(() => folder), 'repo-'));
  if ('fixture' in shape.source) await cp((await loadFixture(shape.source.fixture)).path, repo, { recursive: true });
  else
    for (const [from, to] of Object.entries(shape.source.files)) {
      await mkdir(dirname(join(repo, to)), { recursive: true });
      await cp(join(here, 'environmentProjects', from), join(repo, to));
    }
  for (const file of shape.without ?? []) await rm(join(repo, file), { force: true });
  return repo;
}

/** The installer's own time on the host: the same repository, the same lockfile, empty caches. */
async function timeHostInstall(
  shape: EnvironmentShape,
  host: SandboxHost,
  snapshotId: string,
  built: string,
  folder: string,
): Promise<number> {
  await shape.hostSetup?.(built);
  const repo = await copyShape(shape, folder);
  const caches = await mkdtemp(join(folder, 'caches-'));
  // Python: the requirements the plan chose (the test group, pytest), as the build installs them.
  const plan = await host.environments.plan(snapshotId, {});
  const requirements = join(caches, 'requirements.txt');
  await writeFile(requirements, plan?.files['durable-debugger-requirements.txt'] ?? '');
  const env = shape.hostEnv(caches);
  const started = performance.now();
  for (const step of await shape.hostInstall(repo, caches, requirements)) await run(step.command, step.args, repo, env);
  return performance.now() - started;
}

/** Runs a command to its end; what it printed on stdout. */
function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      command,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${command} ${args.join(' ')} failed: ${stderr.slice(-2000)}`)) : resolve(stdout),
    ),
  );
}

/** Changes a manifest without changing what it installs, so that its environment is not cached yet. */
async function saltManifest(repo: string, salt: string): Promise<void> {
  const exists = (path: string) =>
    readFile(path).then(
      () => true,
      () => false,
    );
  const requirements = join(repo, 'requirements.txt');
  const pyproject = join(repo, 'pyproject.toml');
  const packageJson = join(repo, 'package.json');
  if (await exists(requirements)) return appendFile(requirements, `# bench ${salt}\n`);
  if (await exists(pyproject)) {
    const text = await readFile(pyproject, 'utf8');
    // A locked project's pyproject.toml is an input of the build as it is: a comment is a new key.
    if (await exists(join(repo, 'poetry.lock'))) return appendFile(pyproject, `# bench ${salt}\n`);
    // Otherwise the key covers the requirements read from it, not its text: add one that never applies.
    return writeFile(
      pyproject,
      text.replace('dependencies = [', `dependencies = [\n    "bench-salt-${salt} ; python_version < '3'",`),
    );
  }
  const manifest = JSON.parse(await readFile(packageJson, 'utf8')) as Record<string, unknown>;
  await writeFile(packageJson, JSON.stringify({ ...manifest, description: `bench ${salt}` }, null, 2));
}

/** The steps of the breakdown, in the order they run; the project's own install (Python) after them. */
const shownPhases: BuildPhase[] = [
  'plan',
  'lookup',
  'toolchain',
  'inputs',
  'network',
  'container start',
  'install',
  'commit',
  'clean-up',
];

function seconds(ms: number | undefined): string {
  return ms === undefined ? '–' : number(ms / 1000);
}

/** A median in seconds, with its rounds' range when there were several. */
function withRange(median: number, rounds: number[]): string {
  return rounds.length > 1
    ? `${seconds(median)} (${seconds(Math.min(...rounds))}–${seconds(Math.max(...rounds))})`
    : seconds(median);
}

/** The time of the steps whose names start with `prefix` (the project's install, the toolchain image). */
function summedPhases(phases: PhaseTimes, prefix: string): number {
  return Object.entries(phases)
    .filter(([phase]) => phase.startsWith(prefix))
    .reduce((sum, [, ms]) => sum + (ms ?? 0), 0);
}

/** Cold − the host's install: what the build adds to the installer's own time. */
export function fixedCostMs(cost: EnvironmentBuildCost): number {
  return cost.coldMs - cost.hostInstallMs;
}

export function medianOf(values: number[]): number {
  return figure(values).median;
}

export function formatEnvironmentBuild(result: EnvironmentBuildResult): string[] {
  const project = (cost: EnvironmentBuildCost) => summedPhases(cost.phases, 'project ');
  const madeToolchains = result.fixtures.filter((cost) => cost.toolchainImageMs !== undefined);
  const ratio = (cost: EnvironmentBuildCost) => cost.coldMs / cost.hostInstallMs;
  const goalShapes = result.fixtures.filter((cost) => !cost.larger);
  const larger = result.fixtures.filter((cost) => cost.larger);
  return [
    `6. Environment step: the cold build (through the registry proxy, as every build runs) against the installer's own time on the host (same lockfile, empty caches), medians of ${coldRounds} alternating rounds, and cached (the image found again, then remembered by the worker); base image ${number(result.baseImageMb, 0)} MB; load average ${number(result.load[0], 2)} before, ${number(result.load[1], 2)} after`,
    ...table(
      [
        'repository',
        'installs',
        'packages',
        'cold s (min–max)',
        'host install s (min–max)',
        'cold ÷ host',
        'added s',
        'cached ms (found, remembered)',
        'added MB',
      ],
      result.fixtures.map((cost) => [
        cost.shape,
        cost.description.slice(0, 60),
        String(cost.packages ?? '?'),
        withRange(cost.coldMs, cost.coldRounds),
        withRange(cost.hostInstallMs, cost.hostRounds),
        `${number(ratio(cost), 2)}×`,
        seconds(fixedCostMs(cost)),
        `${number(cost.foundMs)}, ${number(cost.cachedMs.median)}`,
        number(cost.addedMb, 0),
      ]),
    ),
    `  median cold ÷ host ${number(medianOf(goalShapes.map(ratio)), 2)}× (goal ≤ 1.3×); median added ${seconds(medianOf(goalShapes.map(fixedCostMs)))} s (goal ≤ 5 s)${larger.length ? ` (the first ${goalShapes.length} repositories)` : ''}`,
    ...(larger.length
      ? [
          `  at the sizes of the issue's larger repositories: ${larger.map((cost) => `${cost.shape} ${number(ratio(cost), 2)}× (added ${seconds(fixedCostMs(cost))} s)`).join(', ')}`,
        ]
      : []),
    madeToolchains.length
      ? `  toolchain images made in this run (once per machine and toolchain; the cold figures above are a second repository's build, on it): ${madeToolchains.map((cost) => `${cost.shape} ${seconds(cost.toolchainImageMs)} s`).join(', ')}`
      : '  toolchain images: every one was on the machine already (made once per machine and toolchain)',
    '  the median cold build step by step, s (toolchain image: finding it; install: the build container running the plan’s script; project: the project’s own install, Python):',
    ...table(
      ['repository', 'toolchain image', ...shownPhases, 'project', 'probes'],
      result.fixtures.map((cost) => [
        cost.shape,
        seconds(summedPhases(cost.phases, 'toolchain image ') || undefined),
        ...shownPhases.map((phase) => seconds(cost.phases[phase])),
        seconds(project(cost) || undefined),
        seconds(cost.phases.probes),
      ]),
    ),
    '  cached, ms: found (the first preparation after the build: planned, each image of its chain asked about, step by step) and remembered (the later ones in this worker):',
    ...table(
      ['repository', 'found', 'plan', 'lookup', 'probes', 'remembered min', 'median', 'max'],
      result.fixtures.map((cost) => [
        cost.shape,
        number(cost.foundMs),
        number(cost.foundPhases.plan ?? 0),
        number(
          (cost.foundPhases.lookup ?? 0) +
            (cost.foundPhases['project lookup'] ?? 0) +
            (cost.foundPhases['toolchain image lookup'] ?? 0),
        ),
        number(cost.foundPhases.probes ?? 0),
        number(cost.cachedMs.min),
        number(cost.cachedMs.median),
        number(cost.cachedMs.max),
      ]),
    ),
  ];
}
