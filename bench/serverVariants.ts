// Dev server flags and the model activity's conversation cache, measured on the agent's own
// workflow: one server per variant (each with its worker and the fake API), the overhead section's
// scripted run on each, alternating, so that a slow moment of the machine lands on every variant
// alike. Prints a workflow iteration's breakdown per variant (from each run's history).
//   node --import tsx bench/serverVariants.ts [repetitions] [server|cache|partitions]
import { devServerFlags } from '../src/temporal/serverSettings.js';
import {
  listFilesStep,
  msPerIteration,
  openBenchEnvironment,
  repeatedStep,
  type BenchEnvironment,
} from './benchStack.js';
import { overheadIterations } from './overhead.js';
import { alternately, figure, figureTable, number } from './stats.js';
import { iterationTimeline, type IterationTimeline } from './workflowTimeline.js';

const flag = (setting: string) => ['--dynamic-config-value', setting];
const pragma = (setting: string) => ['--sqlite-pragma', setting];
const fasterTransfer = flag('history.transferProcessorMaxPollRPS=1000');
const wal = pragma('journal_mode=WAL');
const normalSync = pragma('synchronous=NORMAL');
/** Each variant changes one thing from its neighbour; `serverArgs: []` is the CLI dev server as it comes. */
type Variant = { name: string; args?: string[]; persistent?: false; cacheConversations?: boolean };
export const serverVariants: Variant[] = [
  { name: 'dev server defaults (SQLite file)', args: [] },
  { name: 'history.transferProcessorMaxPollRPS=1000', args: fasterTransfer },
  { name: 'SQLite journal_mode=WAL', args: wal },
  { name: 'SQLite journal_mode=WAL + synchronous=NORMAL', args: [...wal, ...normalSync] },
  {
    name: 'WAL + synchronous=NORMAL + transferProcessorMaxPollRPS=1000',
    args: [...wal, ...normalSync, ...fasterTransfer],
  },
  { name: 'in memory (no database file) + transferProcessorMaxPollRPS=1000', args: fasterTransfer, persistent: false },
];
/** The product's settings (args undefined), with and without the model activity's conversation cache. */
export const cacheVariants: Variant[] = [
  { name: 'conversation cache (the product)' },
  { name: 'transcript query on every model call', cacheConversations: false },
];

/** The product's settings, and two changes to them that could shorten a task's way to a poller. */
const product = devServerFlags({ databaseFile: true });
export const partitionVariants: Variant[] = [
  { name: "the product's settings", args: product },
  {
    name: '+ one task queue partition (matching.numTaskqueueReadPartitions=1, WritePartitions=1)',
    args: [
      ...product,
      ...flag('matching.numTaskqueueReadPartitions=1'),
      ...flag('matching.numTaskqueueWritePartitions=1'),
    ],
  },
  {
    name: 'history.transferProcessorMaxPollRPS=10000 instead of 1000',
    args: product.map((arg) =>
      arg === 'history.transferProcessorMaxPollRPS=1000' ? 'history.transferProcessorMaxPollRPS=10000' : arg,
    ),
  },
];

const groups: Record<string, Variant[]> = {
  server: serverVariants,
  cache: cacheVariants,
  partitions: partitionVariants,
};
const repetitions = Number(process.argv[2] ?? 3);
const variants = groups[process.argv[3] ?? 'server'];
if (!variants) throw new Error(`Unknown group ${process.argv[3]}; choose from ${Object.keys(groups).join(', ')}`);
const environments: Array<{ name: string; env: BenchEnvironment; repo: string }> = [];
try {
  for (const variant of variants) {
    const env = await openBenchEnvironment({
      serverArgs: variant.args,
      persistent: variant.persistent,
      cacheConversations: variant.cacheConversations,
    });
    environments.push({
      name: variant.name,
      env,
      repo: await env.tinyRepository('bench_variants', repeatedStep(listFilesStep, overheadIterations + 5)),
    });
  }
  const once = async ({ env, repo }: (typeof environments)[number]) => {
    const { report, handle } = await env.runWorkflow({ repo, budgets: { maxIterations: overheadIterations } });
    if (report.iterations !== overheadIterations)
      throw new Error(`expected ${overheadIterations} iterations, got ${report.iterations}`);
    const transcripts = env.takeWorkerTimings().transcripts;
    const transcriptMs = transcripts.reduce((sum, transcript) => sum + transcript.ms, 0) / report.iterations;
    return { ms: msPerIteration(env.takeRequests()), timeline: await iterationTimeline(handle), transcriptMs };
  };
  const samplesOf = await alternately(repetitions, environments, once);
  const ms = (value: number) => `${number(value)} ms`;
  environments.forEach(({ name }, index) => {
    const samples = samplesOf[index] as Array<{ ms: number; timeline: IterationTimeline; transcriptMs: number }>;
    const of = (key: keyof IterationTimeline) => figure(samples.map((sample) => sample.timeline[key]));
    console.log(`${name}`);
    console.log(
      figureTable([
        { label: 'workflow iteration', figure: figure(samples.map((sample) => sample.ms)), format: ms },
        { label: 'workflow tasks waiting', figure: of('workflowTaskWaitMs'), format: ms },
        { label: 'workflow tasks running', figure: of('workflowTaskMs'), format: ms },
        { label: 'callModel waiting', figure: of('callModelWaitMs'), format: ms },
        { label: 'callModel running', figure: of('callModelMs'), format: ms },
        { label: 'runTool waiting', figure: of('runToolWaitMs'), format: ms },
        { label: 'runTool running', figure: of('runToolMs'), format: ms },
        { label: 'between tasks', figure: of('otherMs'), format: ms },
        {
          label: 'conversation for the model call (worker)',
          figure: figure(samples.map((sample) => sample.transcriptMs)),
          format: ms,
        },
      ]).join('\n'),
    );
  });
} finally {
  for (const { env } of environments) await env.close();
}
