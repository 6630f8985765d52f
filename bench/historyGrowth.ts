// 3. History growth: the Temporal history of scripted runs whose every iteration reads a 4 KB
// file, after 10, 25 and 50 iterations, against the size of the conversation itself. History
// that grows linearly keeps the ratio flat; a conversation resent in every activity input
// would make it grow with the number of iterations.
import { conversationBytes } from '../src/agent/conversation.js';
import { transcriptQuery } from '../src/temporal/definitions.js';
import { repeatedStep, type BenchEnvironment } from './benchStack.js';
import { figure, figureTable, number, repeat, type Figure } from './stats.js';

export const historyIterations = [10, 25, 50];
/** The ratio may rise by this factor from the shortest to the longest run and still count as flat. */
export const flatTolerance = 1.25;

export interface HistoryPoint {
  iterations: number;
  historyBytes: Figure;
  historyEvents: Figure;
  conversationBytes: Figure;
  /** History bytes per conversation byte. */
  ratio: Figure;
}

export interface HistoryGrowthResult {
  points: HistoryPoint[];
  /** Median ratio of the longest run divided by that of the shortest. */
  ratioGrowth: number;
  flat: boolean;
}

export async function measureHistoryGrowth(env: BenchEnvironment, repetitions: number): Promise<HistoryGrowthResult> {
  // About 4 KB: 100 lines of 42 characters.
  const notes = Array.from(
    { length: 100 },
    (_, index) => `note ${String(index).padStart(3, '0')}: ${'x'.repeat(32)}`,
  ).join('\n');
  const readNotes = {
    thought: 'Reading the notes again.',
    tool_calls: [{ name: 'read_file', input: { path: 'notes.txt' } }],
  };
  const repo = await env.tinyRepository('bench_history', repeatedStep(readNotes, Math.max(...historyIterations) + 5), {
    'notes.txt': notes,
  });

  const points: HistoryPoint[] = [];
  for (const iterations of historyIterations) {
    const samples = await repeat(repetitions, async () => {
      const { report, handle } = await env.runWorkflow({ repo, budgets: { maxIterations: iterations } });
      env.takeRequests();
      if (report.iterations !== iterations)
        throw new Error(`expected ${iterations} iterations, got ${report.iterations} (${report.stopDetail})`);
      // The server's own figures for the history it stores.
      const description = await handle.describe();
      const transcript = await handle.query(transcriptQuery);
      const historyBytes = description.historySize ?? NaN;
      const conversation = conversationBytes(transcript.messages);
      return { historyBytes, events: description.historyLength, conversation, ratio: historyBytes / conversation };
    });
    points.push({
      iterations,
      historyBytes: figure(samples.map((sample) => sample.historyBytes)),
      historyEvents: figure(samples.map((sample) => sample.events)),
      conversationBytes: figure(samples.map((sample) => sample.conversation)),
      ratio: figure(samples.map((sample) => sample.ratio)),
    });
  }
  const first = points[0] as HistoryPoint;
  const last = points[points.length - 1] as HistoryPoint;
  const ratioGrowth = last.ratio.median / first.ratio.median;
  return { points, ratioGrowth, flat: ratioGrowth <= flatTolerance };
}

export function formatHistoryGrowth(result: HistoryGrowthResult): string[] {
  const bytes = (value: number) => `${number(value / 1024)} KB`;
  const plain = (value: number) => number(value, 0);
  const ratios = result.points.map((point) => `${number(point.ratio.median, 2)} at ${point.iterations}`).join(', ');
  return [
    '3. History growth (scripted runs reading a 4 KB file every iteration; history size and length as the server reports them)',
    `  history bytes per conversation byte (medians): ${ratios} iterations`,
    `  goal: the ratio stays flat (rises at most ${flatTolerance}× from ${result.points[0]?.iterations} to ${result.points.at(-1)?.iterations} iterations): ` +
      `${result.flat ? 'met' : 'NOT met'} (${number(result.ratioGrowth, 2)}×)`,
    ...figureTable(
      result.points.flatMap((point) => [
        {
          label: `${point.iterations} iterations: history bytes / conversation bytes`,
          figure: point.ratio,
          format: (value: number) => number(value, 2),
        },
        { label: `${point.iterations} iterations: history`, figure: point.historyBytes, format: bytes },
        { label: `${point.iterations} iterations: history events`, figure: point.historyEvents, format: plain },
        { label: `${point.iterations} iterations: conversation`, figure: point.conversationBytes, format: bytes },
      ]),
    ),
  ];
}
