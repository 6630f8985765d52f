// A whole `run` with the user's background worker (issue 36 item 2): the first run of a data folder
// (cold: the command starts the worker, as the first run after a boot does) and the runs after it
// (warm: the worker is there), each against the run's own duration (workflow start to close, as the
// server recorded them), installed (npm pack + npm install -g) and from the checkout. Goal: a warm
// `run` adds at most a second to its run. Each variant has a data folder, so a worker of its own.
import { join } from 'node:path';
import { checkoutCli } from '../harness/checkoutCli.js';
import { runCommand } from '../harness/installedPackage.js';
import { loadFixture } from '../src/demo/fixtures.js';
import type { BenchEnvironment } from './benchStack.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

/** Issue 36: with a warm worker, `run` takes at most its run and this much. */
export const warmRunGoalSeconds = 1;

interface RunSample {
  wallMs: number;
  runMs: number;
}

export interface BackgroundRunsVariant {
  /** The first run: the command starts the background worker. */
  cold: RunSample;
  /** Whole command, the run itself, and their difference, seconds, with the worker running. */
  warmCommand: Figure;
  warmRun: Figure;
  warmAdded: Figure;
}

export interface BackgroundRunsResult {
  installed: BackgroundRunsVariant;
  checkout: BackgroundRunsVariant;
  goalMet: boolean;
}

export interface BackgroundRunsSetup {
  env: BenchEnvironment;
  scratch: string;
  installedBin: string;
  installedEnv: NodeJS.ProcessEnv;
  checkoutEnv: NodeJS.ProcessEnv;
  repetitions: number;
  timed: (args: string[], env: NodeJS.ProcessEnv) => Promise<{ wallMs: number }>;
}

export async function measureBackgroundRuns(setup: BackgroundRunsSetup): Promise<BackgroundRunsResult> {
  const { script } = await loadFixture('01_off_by_one');
  const measure = async (variant: 'installed' | 'checkout'): Promise<BackgroundRunsVariant> => {
    const program = variant === 'installed' ? [setup.installedBin] : [process.execPath, ...checkoutCli];
    const env = {
      ...(variant === 'installed' ? setup.installedEnv : setup.checkoutEnv),
      DURABLE_DEBUGGER_HOME: join(setup.scratch, `background-${variant}`),
      DURABLE_DEBUGGER_FOREGROUND_WORKER: '',
    };
    const run = async (name: string): Promise<RunSample> => {
      const repo = await setup.env.tinyRepository(name, script);
      const { wallMs } = await setup.timed([...program, 'run', repo, '--id', name], env);
      const described = await setup.env.server.client.workflow.getHandle(name).describe();
      return { wallMs, runMs: (described.closeTime?.getTime() ?? NaN) - described.startTime.getTime() };
    };
    try {
      const cold = await run(`background-${variant}-cold-${process.pid}`);
      const warm: RunSample[] = [];
      await repeat(setup.repetitions, async (repetition) => {
        warm.push(await run(`background-${variant}-warm-${process.pid}-${repetition}`));
      });
      return {
        cold,
        warmCommand: figure(warm.map((sample) => sample.wallMs / 1000)),
        warmRun: figure(warm.map((sample) => sample.runMs / 1000)),
        warmAdded: figure(warm.map((sample) => (sample.wallMs - sample.runMs) / 1000)),
      };
    } finally {
      const [command, ...args] = program as [string, ...string[]];
      await runCommand(command, [...args, 'worker', 'stop'], { cwd: setup.scratch, env }).catch(() => undefined);
    }
  };
  const installed = await measure('installed');
  const checkout = await measure('checkout');
  return {
    installed,
    checkout,
    goalMet: Math.max(installed.warmAdded.median, checkout.warmAdded.median) <= warmRunGoalSeconds,
  };
}

export function formatBackgroundRuns(result: BackgroundRunsResult): string[] {
  const seconds = (value: number) => `${number(value, 2)} s`;
  const rows = (label: string, variant: BackgroundRunsVariant) => [
    { label: `${label}, warm: whole command`, figure: variant.warmCommand, format: seconds },
    { label: `${label}, warm: the run itself`, figure: variant.warmRun, format: seconds },
    { label: `${label}, warm: added by the command`, figure: variant.warmAdded, format: seconds },
  ];
  const cold = (label: string, { cold: sample }: BackgroundRunsVariant) =>
    `  ${label}, cold (first run: starts the worker): whole command ${seconds(sample.wallMs / 1000)}, ` +
    `the run itself ${seconds(sample.runMs / 1000)}, added ${seconds((sample.wallMs - sample.runMs) / 1000)}`;
  return [
    `A whole \`run\` with the background worker (the rows above: --foreground-worker, a worker per command); goal: warm ≤ the run + ${warmRunGoalSeconds} s: ${result.goalMet ? 'met' : 'NOT met'}`,
    ...figureTable([...rows('installed', result.installed), ...rows('checkout', result.checkout)]).map(
      (line) => `  ${line}`,
    ),
    cold('installed', result.installed),
    cold('checkout', result.checkout),
  ];
}
