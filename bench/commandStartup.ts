// What a whole `durable-debugger run` command adds to the run itself (issue 25): its wall time
// against the run's own duration (the workflow's start to close, as the server recorded them),
// for the installed package (npm pack, npm install -g into a prefix of its own, run under a fresh
// environment) and for the checkout (src/cli/main.ts through tsx), alternately. The server is the
// bench's, already running (as the embedded one is after a user's first command); each command
// starts its own worker (`--foreground-worker`; bench/backgroundRuns.ts measures the
// background worker `run` uses by default), on a task queue of its own.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkoutCli } from '../harness/checkoutCli.js';
import { freshEnvironment, installGlobally, packTarball } from '../harness/installedPackage.js';
import { loadFixture } from '../src/demo/fixtures.js';
import { formatBackgroundRuns, measureBackgroundRuns, type BackgroundRunsResult } from './backgroundRuns.js';
import type { BenchEnvironment } from './benchStack.js';
import { formatQuickCommands, measureQuickCommands, type QuickCommandsResult } from './quickCommands.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

interface Variant {
  /** Wall time of the whole command, seconds. */
  commandSeconds: Figure;
  /** The run's own duration (workflow start to close), seconds. */
  runSeconds: Figure;
  /** Command minus run: starting, connecting, the worker, shutting down. */
  addedSeconds: Figure;
  /** CPU of the command's process (user + system), seconds. */
  cpuSeconds: Figure;
}

export interface CommandStartupResult {
  installed: Variant;
  checkout: Variant;
  tarballMb: number;
  /** `run` with the background worker, cold and warm (bench/backgroundRuns.ts). */
  background?: BackgroundRunsResult;
  /** `--version`, `--help`, `list`, `status <id>`, now and before (bench/quickCommands.ts). */
  quick?: QuickCommandsResult;
}

export async function measureCommandStartup(env: BenchEnvironment, repetitions: number): Promise<CommandStartupResult> {
  const scratch = await mkdtemp(join(tmpdir(), 'durable-debugger-startup-'));
  try {
    const tarball = await packTarball(scratch);
    const home = join(scratch, 'home');
    const prefix = join(scratch, 'prefix');
    const settings = {
      TEMPORAL_ADDRESS: env.server.address,
      DURABLE_DEBUGGER_HOME: join(scratch, 'data'),
      DURABLE_DEBUGGER_TASK_QUEUE: `bench-startup-${process.pid}`,
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: env.fake.url,
      NO_COLOR: '1',
      // A worker per command, as these rows always measured; backgroundRuns.ts measures the background worker.
      DURABLE_DEBUGGER_FOREGROUND_WORKER: '1',
    };
    const fresh = freshEnvironment(home, prefix, settings);
    const installed = await installGlobally(tarball, prefix, fresh);
    const quick = await measureQuickCommands({
      env,
      scratch,
      installedBin: installed.bin,
      installedEnv: fresh,
      checkoutEnv: { ...process.env, ...settings },
      repetitions,
    });
    const { script } = await loadFixture('01_off_by_one');
    const samples = { installed: [] as Sample[], checkout: [] as Sample[] };
    await repeat(repetitions, async (repetition) => {
      for (const variant of ['installed', 'checkout'] as const) {
        const name = `startup-${variant}-${repetition}`;
        const repo = await env.tinyRepository(name, script);
        const command =
          variant === 'installed'
            ? { args: [installed.bin, 'run', repo, '--id', name], env: fresh }
            : {
                args: [process.execPath, ...checkoutCli, 'run', repo, '--id', name],
                env: { ...process.env, ...settings },
              };
        const { wallMs, cpuMs } = await timedCommand(command.args, command.env);
        const described = await env.server.client.workflow.getHandle(name).describe();
        const runMs = (described.closeTime?.getTime() ?? NaN) - described.startTime.getTime();
        samples[variant].push({ wallMs, runMs, cpuMs });
      }
    });
    const background = await measureBackgroundRuns({
      env,
      scratch,
      installedBin: installed.bin,
      installedEnv: fresh,
      checkoutEnv: { ...process.env, ...settings },
      repetitions,
      timed: timedCommand,
    });
    const tarballMb = (await stat(tarball)).size / 1e6;
    return {
      installed: summarize(samples.installed),
      checkout: summarize(samples.checkout),
      tarballMb,
      quick,
      background,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

interface Sample {
  wallMs: number;
  runMs: number;
  cpuMs: number;
}

function summarize(samples: Sample[]): Variant {
  return {
    commandSeconds: figure(samples.map((sample) => sample.wallMs / 1000)),
    runSeconds: figure(samples.map((sample) => sample.runMs / 1000)),
    addedSeconds: figure(samples.map((sample) => (sample.wallMs - sample.runMs) / 1000)),
    cpuSeconds: figure(samples.map((sample) => sample.cpuMs / 1000)),
  };
}

/** Runs the command to its end: its wall time, and its CPU as the shell's `times` reports its children's. */
function timedCommand(args: string[], env: NodeJS.ProcessEnv): Promise<{ wallMs: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('sh', ['-c', '"$@" >/dev/null 2>&1; status=$?; times; exit $status', 'sh', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.slice(0, 3).join(' ')} … exited ${code}`));
      // `times`: the shell's user and system time, then its children's ("0m2.670s 0m0.210s").
      const children = output.trim().split('\n').pop() ?? '';
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(
        (match) => Number(match[1]) * 60 + Number(match[2]),
      );
      resolve({ wallMs, cpuMs: seconds.reduce((sum, value) => sum + value, 0) * 1000 });
    });
  });
}

export function formatCommandStartup(result: CommandStartupResult): string[] {
  const seconds = (value: number) => `${number(value, 2)} s`;
  const rows = (label: string, variant: Variant) => [
    { label: `${label}: whole command`, figure: variant.commandSeconds, format: seconds },
    { label: `${label}: the run itself`, figure: variant.runSeconds, format: seconds },
    { label: `${label}: added by the command`, figure: variant.addedSeconds, format: seconds },
    { label: `${label}: command's CPU`, figure: variant.cpuSeconds, format: seconds },
  ];
  return [
    'Command startup: a whole `run` command against the run itself (fixtures/01_off_by_one, scripted model, server running)',
    `  installed: npm pack (${number(result.tarballMb)} MB) + npm install -g, bin dist/cli.js; checkout: node --import tsx src/cli/main.ts`,
    ...figureTable([...rows('installed', result.installed), ...rows('checkout', result.checkout)]).map(
      (line) => `  ${line}`,
    ),
    ...(result.quick ? formatQuickCommands(result.quick) : []),
    ...(result.background ? formatBackgroundRuns(result.background) : []),
  ];
}
