// What streaming the model's replies costs (so that `watch` shows them as they are written): the
// same scripted run with replies streamed (the product) and whole (DURABLE_DEBUGGER_STREAM_REPLIES
// =off), one server and worker each, alternating, with a model that takes seconds per reply as
// real ones do. Per iteration: the time, the worker process's CPU, and the Temporal server's
// persistence requests and heartbeats (from its own metrics); then the ratios.
//   node --import tsx bench/streamedReplies.ts [repetitions]
// With `requests`, one model request at a time instead, with no Temporal: the fake API answering at
// once, the same request asked whole, streamed as the model client reads it, and streamed through
// the SDK's stream helper (what the client used before), alternating; wall time and this process's
// CPU per request (the fake API runs in it too), for a short reply and a 70-word one. With
// `overhead`, the runs of the first kind are the overhead bench's (30 iterations of a short reply
// answered at once), with the model request's time in the activity.
//   node --import tsx bench/streamedReplies.ts requests [requests per sample]
//   node --import tsx bench/streamedReplies.ts overhead [repetitions]
import { readServerMetrics } from '../deploy/cluster/serverMetrics.js';
import type { Message } from '../src/agent/conversation.js';
import { systemPrompt } from '../src/agent/prompts.js';
import { writingSoFar } from '../src/agent/replySoFar.js';
import { apiTools } from '../src/agent/tools.js';
import { FakeAnthropicApi } from '../src/demo/fakeAnthropicApi.js';
import { buildRequestBody, createModelClient, requestModelTurn, type ModelRequest } from '../src/model/anthropic.js';
import { sumOf } from '../src/temporal/prometheusText.js';
import type { ScriptStep } from '../src/demo/script.js';
import {
  benchModel,
  listFilesStep,
  msPerIteration,
  openBenchEnvironment,
  repeatedStep,
  type BenchEnvironment,
} from './benchStack.js';
import { alternately, figure, figureTable, number } from './stats.js';

/** The run of the default mode: a model that takes seconds per reply; `overhead`: the overhead bench's run. */
const runShapes = {
  slowModel: { iterations: 8, latencyMs: 3_000 },
  overhead: { iterations: 30, latencyMs: 0 },
};
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
  /** The model request within the callModel activity (the worker's own timing). */
  requestMs: number;
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

/**
 * The same scripted run with replies streamed and whole, each on its own server and worker: a
 * model that takes seconds (the 70-word step), or (`overhead`) the overhead bench's run, a short
 * reply answered at once.
 */
async function measureRuns(repetitions: number, shape: 'slowModel' | 'overhead'): Promise<void> {
  const { iterations, latencyMs } = runShapes[shape];
  const runStep = shape === 'overhead' ? listFilesStep : step;
  const environments: Array<{ name: string; env: BenchEnvironment; repo: string }> = [];
  try {
    for (const variant of variants) {
      const env = await openBenchEnvironment({ latencyMs, configOverrides: variant.configOverrides });
      environments.push({
        name: variant.name,
        env,
        repo: await env.tinyRepository('bench_streaming', repeatedStep(runStep, iterations + 5)),
      });
    }
    const once = async ({ env, repo }: (typeof environments)[number]): Promise<Sample> => {
      const before = await serverCounts(env);
      env.takeWorkerTimings();
      const cpu = process.cpuUsage();
      const { report } = await env.runWorkflow({ repo, budgets: { maxIterations: iterations } });
      const used = process.cpuUsage(cpu);
      const after = await serverCounts(env);
      if (report.iterations !== iterations)
        throw new Error(`expected ${iterations} iterations, got ${report.iterations}`);
      return {
        ms: msPerIteration(env.takeRequests()),
        cpuMs: (used.user + used.system) / 1000 / iterations,
        requestMs: env.takeWorkerTimings().modelCalls.reduce((sum, call) => sum + call.requestMs, 0) / iterations,
        persistence: (after.persistence - before.persistence) / iterations,
        heartbeats: (after.heartbeats - before.heartbeats) / iterations,
      };
    };
    const samplesOf = await alternately(repetitions, environments, once);
    const of = (index: number, key: keyof Sample) =>
      figure((samplesOf[index] as Sample[]).map((sample) => sample[key]));
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
          {
            label: 'model request in the activity, per iteration',
            figure: of(index, 'requestMs'),
            format: (value) => `${number(value)} ms`,
          },
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
}

/** A conversation of `turns` iterations of the overhead bench's step, as its model calls send it. */
function conversationOf(turns: number): Message[] {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Repository: bench_requests\nFix the failing test.' }] },
  ];
  for (let turn = 0; turn < turns; turn++) {
    const id = `toolu_bench_${turn}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Listing the files again.' },
        { type: 'tool_use', id, name: 'list_files', input: {} },
      ],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: 'src/find_max.py\ntests/test_find_max.py\n' }],
    });
  }
  return messages;
}

/**
 * One request at a time, with no Temporal around it: whole (the plain loop's), streamed as the
 * model client reads it (the product's), and streamed through the SDK's stream helper, its text
 * told to a listener that cuts the heartbeat's tail at every piece (the model client before).
 */
async function measureRequests(requestsPerSample: number, repetitions = 5): Promise<void> {
  const turns = 15;
  const replies: Array<{ name: string; step: ScriptStep }> = [
    { name: "the overhead bench's reply (a short thought, one tool call)", step: listFilesStep },
    { name: 'a 70-word thought and one tool call', step },
  ];
  for (const reply of replies) {
    const fake = new FakeAnthropicApi({ scripts: repeatedStep(reply.step, turns + 5) });
    await fake.start();
    try {
      const client = createModelClient({ apiKey: 'bench', baseURL: fake.url, timeoutMs: 30_000 });
      const request: ModelRequest = {
        model: benchModel,
        maxOutputTokens: 8_192,
        system: systemPrompt,
        tools: apiTools({ allowCommands: true }),
        messages: conversationOf(turns),
      };
      const variants: Array<{ name: string; ask: () => Promise<unknown> }> = [
        { name: 'whole (messages.create, as the plain loop asks)', ask: () => requestModelTurn(client, request) },
        {
          name: 'streamed: the raw event stream (the model client)',
          ask: () => requestModelTurn(client, request, { onWriting: () => undefined }),
        },
        {
          name: "streamed: the SDK's stream helper (messages.stream, before)",
          ask: async () => {
            const stream = client.messages.stream(buildRequestBody(request));
            stream.on('text', (_delta, soFar) => writingSoFar(soFar, false));
            await stream.finalMessage();
            return (await stream.withResponse()).response.headers.get('request-id');
          },
        },
      ];
      const sampleOf = async (variant: (typeof variants)[number]) => {
        const cpu = process.cpuUsage();
        const started = performance.now();
        for (let index = 0; index < requestsPerSample; index++) await variant.ask();
        const ms = (performance.now() - started) / requestsPerSample;
        const used = process.cpuUsage(cpu);
        fake.requests.splice(0);
        return { ms, cpuMs: (used.user + used.system) / 1000 / requestsPerSample };
      };
      const samplesOf = await alternately(repetitions, variants, sampleOf);
      console.log(`${reply.name}: ${requestsPerSample} requests a sample, ${repetitions} samples, per request`);
      console.log(
        figureTable(
          variants.flatMap((variant, index) => {
            const samples = samplesOf[index] ?? [];
            const ms = (value: number) => `${number(value, 2)} ms`;
            return [
              { label: `${variant.name}: wall`, figure: figure(samples.map((sample) => sample.ms)), format: ms },
              {
                label: '  CPU (client and fake API)',
                figure: figure(samples.map((sample) => sample.cpuMs)),
                format: ms,
              },
            ];
          }),
        ).join('\n'),
      );
    } finally {
      await fake.stop();
    }
  }
}

if (process.argv[2] === 'requests') await measureRequests(Number(process.argv[3] ?? 200));
else if (process.argv[2] === 'overhead') await measureRuns(Number(process.argv[3] ?? 5), 'overhead');
else await measureRuns(Number(process.argv[2] ?? 3), 'slowModel');
