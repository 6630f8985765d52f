// The commands a person waits on without a run (issue 36 item 1): `--version`, `--help`, `list`
// and `status <id>`, installed (npm pack + npm install -g) and from the checkout, each against
// the same command before the command line loaded only what it runs (commit `before`: every
// command read the whole bundle, worker and native core included), measured alternately in one
// run. `before` is built here from git (its dist/ and its sources beside this checkout's
// node_modules); without git it is not measured, and the bench says so.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkoutCli } from '../harness/checkoutCli.js';
import { runCommand } from '../harness/installedPackage.js';
import { projectRoot } from '../src/config.js';
import { loadFixture } from '../src/demo/fixtures.js';
import type { BenchEnvironment } from './benchStack.js';
import { figure, number, repeat, table, type Figure } from './stats.js';

/** The last commit whose every command loaded the whole bundle (one dist/cli.js of 6.4 MB). */
export const beforeCommit = '551504b8f6bdd1f444b7a550d6e0704358e8f289';
/** Issue 36: a command line answers `--version` in well under this, as git, gh or npm do. */
export const versionGoalSeconds = 0.3;

type Where = 'installed' | 'checkout' | 'installedBefore' | 'checkoutBefore';

export interface QuickCommandRow {
  command: string;
  /** Wall seconds of the whole command, by where it ran from (no `…Before` when not measured). */
  seconds: Partial<Record<Where, Figure>>;
}

export interface QuickCommandsResult {
  rows: QuickCommandRow[];
  /** Why `before` was not measured, when it was not. */
  beforeSkipped?: string;
  versionGoalMet: boolean;
}

export interface QuickCommandsSetup {
  env: BenchEnvironment;
  scratch: string;
  /** The installed package's command, and the fresh environment it runs in. */
  installedBin: string;
  installedEnv: NodeJS.ProcessEnv;
  /** The checkout's environment (the same settings). */
  checkoutEnv: NodeJS.ProcessEnv;
  repetitions: number;
}

export async function measureQuickCommands(setup: QuickCommandsSetup): Promise<QuickCommandsResult> {
  const { env } = setup;
  // A closed run for `status`, whose worker (the bench's) still serves its queue.
  const { script } = await loadFixture('01_off_by_one');
  const statusId = `startup-status-${process.pid}`;
  await env.runWorkflow({ repo: await env.tinyRepository(statusId, script) }, statusId);
  const before = await builtBefore(join(setup.scratch, 'before'));
  const programs: Partial<Record<Where, { args: string[]; env: NodeJS.ProcessEnv }>> = {
    installed: { args: [setup.installedBin], env: setup.installedEnv },
    checkout: { args: [process.execPath, ...checkoutCli], env: setup.checkoutEnv },
    ...('folder' in before
      ? {
          // What an install of that tarball runs: its dist/ (the package's folder holds nothing else it reads).
          installedBefore: { args: [process.execPath, join(before.folder, 'dist', 'cli.js')], env: setup.installedEnv },
          checkoutBefore: {
            args: [process.execPath, ...checkoutCli.slice(0, 2), join(before.folder, 'src', 'cli', 'main.ts')],
            env: setup.checkoutEnv,
          },
        }
      : {}),
  };
  const commands = [['--version'], ['--help'], ['list'], ['status', statusId]];
  const samples = commands.map(() => new Map<Where, number[]>());
  // Once each, untimed: files in the page cache, tsx's cache of compiled sources filled.
  for (const command of commands)
    for (const program of Object.values(programs)) await timedToEnd([...program.args, ...command], program.env);
  await repeat(setup.repetitions, async () => {
    for (const [index, command] of commands.entries()) {
      for (const [where, program] of Object.entries(programs) as Array<
        [Where, { args: string[]; env: NodeJS.ProcessEnv }]
      >) {
        const wallMs = await timedToEnd([...program.args, ...command], program.env);
        const taken = samples[index] as Map<Where, number[]>;
        taken.set(where, [...(taken.get(where) ?? []), wallMs / 1000]);
      }
    }
  });
  const rows = commands.map((command, index) => ({
    command: command[0] === 'status' ? 'status <id>' : command.join(' '),
    seconds: Object.fromEntries(
      [...(samples[index] as Map<Where, number[]>)].map(([where, seconds]) => [where, figure(seconds)]),
    ),
  }));
  const version = rows[0]?.seconds.installed?.median ?? Infinity;
  return {
    rows,
    ...('skipped' in before ? { beforeSkipped: before.skipped } : {}),
    versionGoalMet: version <= versionGoalSeconds,
  };
}

/** Runs the command to its end: its wall time; its output when it fails. */
function timedToEnd([command, ...args]: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command as string, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve(performance.now() - started);
      reject(new Error(`${[command, ...args].join(' ')} exited ${code}:\n${output.slice(-2000)}`));
    });
  });
}

/** The package at `beforeCommit`, built (`npm run build` of that commit) in `folder`. */
async function builtBefore(folder: string): Promise<{ folder: string } | { skipped: string }> {
  await mkdir(folder, { recursive: true });
  const exported = await runCommand(
    'sh',
    [
      '-c',
      'git archive "$1" | tar -x -C "$2" && ln -s "$3" "$2/node_modules"',
      'sh',
      beforeCommit,
      folder,
      join(projectRoot, 'node_modules'),
    ],
    { cwd: projectRoot, env: process.env },
  );
  if (exported.code !== 0)
    return { skipped: `git archive ${beforeCommit.slice(0, 7)} failed: ${exported.output.trim()}` };
  const built = await runCommand(process.execPath, ['--import', 'tsx', join('scripts', 'build.ts')], {
    cwd: folder,
    env: process.env,
  });
  if (built.code !== 0) return { skipped: `its build failed: ${built.output.trim().slice(-400)}` };
  return { folder };
}

export function formatQuickCommands(result: QuickCommandsResult): string[] {
  const cell = (value: Figure | undefined) => (value ? `${number(value.median, 2)} s` : '-');
  const ratio = (now: Figure | undefined, before: Figure | undefined) =>
    now && before ? `${number(before.median / now.median, 1)}×` : '-';
  const rows = result.rows.map((row) => [
    row.command,
    cell(row.seconds.installed),
    cell(row.seconds.installedBefore),
    ratio(row.seconds.installed, row.seconds.installedBefore),
    cell(row.seconds.checkout),
    cell(row.seconds.checkoutBefore),
    ratio(row.seconds.checkout, row.seconds.checkoutBefore),
  ]);
  const version = result.rows[0]?.seconds.installed;
  return [
    `Quick commands, whole command's wall time (median): now, before (${beforeCommit.slice(0, 7)}: every command loaded the whole bundle), and how many times faster`,
    ...(result.beforeSkipped ? [`  before: not measured: ${result.beforeSkipped}`] : []),
    ...table(['', 'installed', 'before', 'faster', 'checkout', 'before', 'faster'], rows),
    `  goal: --version ≤ ${versionGoalSeconds} s installed: ${version ? `${number(version.median, 2)} s` : '-'} ${result.versionGoalMet ? '(met)' : '(NOT met)'}`,
  ];
}
