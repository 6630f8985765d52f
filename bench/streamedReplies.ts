// What streaming the model's replies costs (so that `watch` shows them as they are written): the
// same scripted run with replies streamed (the product) and whole (DURABLE_DEBUGGER_STREAM_REPLIES
// =off), one server and worker each, alternating, with a model that takes seconds per reply as
// real ones do. Per iteration: the time, the worker process's CPU, and the Temporal server's
// persistence requests and heartbeats (from its own metrics); then the ratios.
//   node --import tsx bench/streamedReplies.ts [repetitions]
import { readServerMetrics } from '../deploy/cluster/serverMetrics.js';
import { sumOf } from '../src/temporal/prometheusText.js';
import type { ScriptStep } from '../src/demo/script.js';
import { msPerIteration, openBenchEnvironment, repeatedStep, type BenchEnvironment } from './benchStack.js';
import { alternately, figure, figureTable, number } from './stats.js';

const iterations = 8;
const latencyMs = 3_000;
/** A thought of a real reply's length (about 70 words), so that it streams in many pieces. */
const step: ScriptStep = {
  thought:
    'The failing test expects the maximum of the list, and the function returns the largest of all but the last ' +
    'item: the loop runs over range(len(items) - 1), which stops one index short. Before editing, I will list the ' +
    'files again to make sure no other module defines find_max or wraps it, because a second definition would ' +
    'explain the failure just as well and the fix would then belong there instead.',
  tool_calls: [{ name: 'list_files', input: {} }],
};

const variants: Array<{ name: string; configOverrides: Record<string, string> }> = [
  { name: 'replies streamed (the product)', configOverrides: {} },
  {
    name: 'replies whole (DURABLE_DEBUGGER_STREAM_REPLIES=off)',
    configOverrides: { DURABLE_DEBUGGER_STREAM_REPLIES: 'off' },
  },
];

interface Sample {
  ms: number;
  cpuMs: number;
  persistence: number;
  heartbeats: number;
}

async function serverCounts(env: BenchEnvironment): Promise<{ persistence: number; heartbeats: number }> {
  const samples = await readServerMetrics(env.server.metricsUrl as string);
  return {
    persistence: sumOf(samples, 'persistence_requests'),
    heartbeats: sumOf(samples, 'service_requests', { operation: 'RecordActivityTaskHeartbeat' }),
  };
}

const repetitions = Number(process.argv[2] ?? 3);
const environments: Array<{ name: string; env: BenchEnvironment; repo: string }> = [];
try {
  for (const variant of variants) {
    const env = await openBenchEnvironment({ latencyMs, configOverrides: variant.configOverrides });
    environments.push({
      name: variant.name,
      env,
      repo: await env.tinyRepository('bench_streaming', repeatedStep(step, iterations + 5)),
    });
  }
  const once = async ({ env, repo }: (typeof environments)[number]): Promise<Sample> => {
    const before = await serverCounts(env);
    const cpu = process.cpuUsage();
    const { report } = await env.runWorkflow({ repo, budgets: { maxIterations: iterations } });
    const used = process.cpuUsage(cpu);
    const after = await serverCounts(env);
    if (report.iterations !== iterations)
      throw new Error(`expected ${iterations} iterations, got ${report.iterations}`);
    return {
      ms: msPerIteration(env.takeRequests()),
      cpuMs: (used.user + used.system) / 1000 / iterations,
      persistence: (after.persistence - before.persistence) / iterations,
      heartbeats: (after.heartbeats - before.heartbeats) / iterations,
    };
  };
  const samplesOf = await alternately(repetitions, environments, once);
  const of = (index: number, key: keyof Sample) => figure((samplesOf[index] as Sample[]).map((sample) => sample[key]));
  console.log(
    `${iterations} iterations a run, the model answering after ${latencyMs / 1000} s, ${repetitions} repetitions; ` +
      'the worker runs in this process (its CPU is this process’s, both variants alike idle between runs)',
  );
  for (const [index, { name }] of environments.entries()) {
    console.log(name);
    console.log(
      figureTable([
        { label: 'ms per iteration', figure: of(index, 'ms'), format: (value) => `${number(value)} ms` },
        { label: 'worker CPU per iteration', figure: of(index, 'cpuMs'), format: (value) => `${number(value)} ms` },
        { label: 'server persistence requests per iteration', figure: of(index, 'persistence'), format: number },
        { label: 'heartbeats per iteration', figure: of(index, 'heartbeats'), format: number },
      ]).join('\n'),
    );
  }
  const ratio = (key: keyof Sample) => `${number(of(0, key).median / Math.max(1e-9, of(1, key).median), 2)}×`;
  console.log(
    `streamed against whole, medians: time ${ratio('ms')}, worker CPU ${ratio('cpuMs')}, ` +
      `persistence requests ${ratio('persistence')}, heartbeats ${number(of(0, 'heartbeats').median)} against ${number(of(1, 'heartbeats').median)} per iteration`,
  );
} finally {
  for (const { env } of environments) await env.close();
}
