// 5. Throughput: several scripted runs started at once on the one worker (list_files every
// iteration, the fake API answering at once). Two rates: over whole runs (from starting them to
// the last report, sandbox setup and test runs included), and over the loop alone (from the
// first model request of the batch to its last).
import { listFilesStep, repeatedStep, type BenchEnvironment } from './benchStack.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

export const concurrencyLevels = [1, 5, 20];
export const iterationsPerRun = 10;

export interface ThroughputPoint {
  concurrentRuns: number;
  /** Iterations per second over whole runs. */
  wholeRuns: Figure;
  /** Model calls per second between the batch's first and last model request. */
  loopOnly: Figure;
}

export interface ThroughputResult {
  iterationsPerRun: number;
  points: ThroughputPoint[];
}

export async function measureThroughput(env: BenchEnvironment, repetitions: number): Promise<ThroughputResult> {
  const repo = await env.tinyRepository('bench_throughput', repeatedStep(listFilesStep, iterationsPerRun + 5));
  const points: ThroughputPoint[] = [];
  for (const concurrentRuns of concurrencyLevels) {
    const batches = await repeat(repetitions, async () => {
      const started = Date.now();
      const reports = await Promise.all(
        Array.from({ length: concurrentRuns }, () =>
          env.runWorkflow({ repo, budgets: { maxIterations: iterationsPerRun } }),
        ),
      );
      const seconds = (Date.now() - started) / 1000;
      const requests = env.takeRequests().filter((request) => request.status === 200);
      const iterations = reports.reduce((sum, { report }) => sum + report.iterations, 0);
      if (iterations !== concurrentRuns * iterationsPerRun || requests.length !== iterations) {
        throw new Error(
          `expected ${concurrentRuns * iterationsPerRun} iterations, got ${iterations} (${requests.length} model requests)`,
        );
      }
      const times = requests.map((request) => request.receivedAt);
      const loopSeconds = (Math.max(...times) - Math.min(...times)) / 1000;
      return { wholeRuns: iterations / seconds, loopOnly: (requests.length - 1) / loopSeconds };
    });
    points.push({
      concurrentRuns,
      wholeRuns: figure(batches.map((batch) => batch.wholeRuns)),
      loopOnly: figure(batches.map((batch) => batch.loopOnly)),
    });
  }
  return { iterationsPerRun, points };
}

export function formatThroughput(result: ThroughputResult): string[] {
  const rate = (value: number) => `${number(value)}/s`;
  const single = result.points[0] as ThroughputPoint;
  const scaling = result.points
    .slice(1)
    .map((point) => `${number(point.wholeRuns.median / single.wholeRuns.median)}× with ${point.concurrentRuns}`)
    .join(', ');
  return [
    `5. Throughput (runs of ${result.iterationsPerRun} list_files iterations started together on one worker, fake API answering at once)`,
    `  iterations per second relative to one run at a time, whole runs (medians): ${scaling}`,
    ...figureTable(
      result.points.flatMap((point) => [
        {
          label: `${point.concurrentRuns} concurrent: iterations/s over whole runs`,
          figure: point.wholeRuns,
          format: rate,
        },
        {
          label: `${point.concurrentRuns} concurrent: iterations/s while looping`,
          figure: point.loopOnly,
          format: rate,
        },
      ]),
    ),
    '  Whole runs include each run\'s sandbox setup, baseline test run and cleanup; "while looping" counts model calls between',
    '  the first and the last model request of the batch.',
  ];
}
