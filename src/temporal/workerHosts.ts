// The fleet of a task queue as Temporal knows it: the worker hosts polling it (their identities
// say which sandbox host they are and where their metrics are, src/temporal/workerIdentity.ts),
// each host's figures scraped from its endpoint, and the task queue's sandbox queue.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { admissionCounts } from '../agent/admission.js';
import { sandboxAdmissionIdFor, sandboxClaimQueueFor, sandboxQueueQuery } from './definitions.js';
import { scrapeMetrics, sumBy, sumOf, type Sample } from './prometheusText.js';
import { parseWorkerHostIdentity } from './workerIdentity.js';

export interface HostFigures {
  sandboxes: number;
  capacity: number;
  modelCalls: number;
  /** By model: calls, tokens by kind (input, output, cache_read, cache_write) and cost at listed prices. */
  models: Record<string, { calls: number; tokens: Record<string, number>; costUsd: number }>;
  toolCalls: number;
  /** Mean time of a tool call in its sandbox; null before the first. */
  toolCallMeanMs: number | null;
  /** Environments prepared, by result (built, reused, none). */
  environmentBuilds: Record<string, number>;
}

export interface WorkerHostView {
  /** The sandbox host's id; null for a poller that does not say (an older worker). */
  hostId: string | null;
  /** The poller's identity as Temporal shows it. */
  identity: string;
  /** The machine it runs on (from `pid@machine`), when the identity says. */
  machine: string | null;
  /** When it last polled the task queue (ISO time). */
  lastPoll: string | null;
  metricsUrl: string | null;
  /** Read from its endpoint; null without an endpoint or when it did not answer (see metricsError). */
  metrics: HostFigures | null;
  metricsError: string | null;
}

export interface TaskQueueView {
  taskQueue: string;
  /** Runs holding a sandbox and runs waiting for one (the sandbox queue's own count); null when it did not answer. */
  runs: { holdingSandbox: number; waiting: number } | null;
  runsNote: string | null;
  hosts: WorkerHostView[];
}

/** How long the sandbox queue may take to answer its query (it needs a live worker). */
const queueQueryMs = 5_000;

/** The hosts of a task queue, their figures and its queue; a host whose endpoint does not answer is listed with why. */
export async function describeTaskQueueHosts(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<TaskQueueView> {
  const [pollers, runs] = await Promise.all([hostPollers(client, namespace, taskQueue), queueRuns(client, taskQueue)]);
  const hosts = await Promise.all(
    pollers.map(async ({ identity, lastPoll }): Promise<WorkerHostView> => {
      const parsed = parseWorkerHostIdentity(identity);
      const view: WorkerHostView = {
        hostId: parsed.hostId,
        identity,
        machine: /@(\S+)$/.exec(parsed.process)?.[1] ?? null,
        lastPoll: lastPoll === null ? null : new Date(lastPoll).toISOString(),
        metricsUrl: parsed.metricsUrl,
        metrics: null,
        metricsError: null,
      };
      if (parsed.metricsUrl)
        await scrapeMetrics(parsed.metricsUrl).then(
          (samples) => (view.metrics = hostFigures(samples, parsed.hostId)),
          (error: unknown) => (view.metricsError = error instanceof Error ? error.message : String(error)),
        );
      return view;
    }),
  );
  hosts.sort((a, b) => (a.hostId ?? a.identity).localeCompare(b.hostId ?? b.identity));
  return { taskQueue, ...runs, hosts };
}

/**
 * The pollers of the claim queue and of the task queue's activities, one per identity with its
 * latest poll: a full host stops polling for claims (it takes no more), yet still works its runs.
 */
async function hostPollers(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<Array<{ identity: string; lastPoll: number | null }>> {
  const latest = new Map<string, number | null>();
  for (const name of [sandboxClaimQueueFor(taskQueue), taskQueue]) {
    const response = await client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name },
      taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    for (const poller of response.pollers ?? []) {
      if (!poller.identity) continue;
      const seconds = poller.lastAccessTime?.seconds;
      const at = seconds === undefined || seconds === null ? null : Number(seconds) * 1000;
      const known = latest.get(poller.identity);
      latest.set(poller.identity, Math.max(known ?? 0, at ?? 0) || null);
    }
  }
  return [...latest].map(([identity, lastPoll]) => ({ identity, lastPoll }));
}

async function queueRuns(client: Client, taskQueue: string): Promise<Pick<TaskQueueView, 'runs' | 'runsNote'>> {
  const queue = client.workflow.getHandle(sandboxAdmissionIdFor(taskQueue));
  try {
    const state = await client.withDeadline(Date.now() + queueQueryMs, () => queue.query(sandboxQueueQuery));
    return { runs: admissionCounts(state), runsNote: null };
  } catch (error) {
    const notFound = (error as { name?: string }).name === 'WorkflowNotFoundError';
    return {
      runs: null,
      runsNote: notFound
        ? 'no run has asked for a sandbox on this task queue yet'
        : 'the sandbox queue did not answer (it needs a running worker on the task queue)',
    };
  }
}

/** A host's figures from its metrics page (the gauges of its own host id, when it has several). */
export function hostFigures(samples: Sample[], hostId: string | null): HostFigures {
  const ofHost: Record<string, string> = hostId === null ? {} : { host: hostId };
  const models: HostFigures['models'] = {};
  const model = (name: string) => (models[name] ??= { calls: 0, tokens: {}, costUsd: 0 });
  for (const [name, calls] of sumBy(samples, 'durable_debugger_model_calls_total', 'model')) model(name).calls = calls;
  for (const sample of samples) {
    const { model: name, kind } = sample.labels;
    if (sample.name !== 'durable_debugger_model_tokens_total' || !name || !kind) continue;
    const tokens = model(name).tokens;
    tokens[kind] = (tokens[kind] ?? 0) + sample.value;
  }
  for (const [name, micro] of sumBy(samples, 'durable_debugger_model_cost_microusd_total', 'model'))
    model(name).costUsd = micro / 1_000_000;
  const toolCalls = sumOf(samples, 'durable_debugger_tool_call_ms_count');
  return {
    sandboxes: sumOf(samples, 'durable_debugger_sandboxes', ofHost),
    capacity: sumOf(samples, 'durable_debugger_sandbox_capacity', ofHost),
    modelCalls: Object.values(models).reduce((sum, { calls }) => sum + calls, 0),
    models,
    toolCalls,
    toolCallMeanMs: toolCalls > 0 ? sumOf(samples, 'durable_debugger_tool_call_ms_sum') / toolCalls : null,
    environmentBuilds: Object.fromEntries(sumBy(samples, 'durable_debugger_environment_builds_total', 'result')),
  };
}

/**
 * A live worker polls again within about a minute (a long poll); Temporal lists a stopped one for
 * a few minutes more.
 */
const goneAfterMs = 90_000;

/** The view as lines for a person. */
export function formatTaskQueueView(view: TaskQueueView, now = Date.now()): string[] {
  const lines = [
    `Task queue ${view.taskQueue}: ` +
      (view.runs
        ? `${view.runs.holdingSandbox} runs hold a sandbox, ${view.runs.waiting} waiting for one`
        : (view.runsNote ?? '')),
  ];
  if (view.hosts.length === 0) lines.push('  No worker host polls it (start one with `durable-debugger worker`).');
  for (const host of view.hosts) {
    const seconds = host.lastPoll === null ? null : Math.max(0, Math.round((now - Date.parse(host.lastPoll)) / 1000));
    const age =
      seconds === null ? '' : `  last poll ${seconds} s ago${seconds * 1000 > goneAfterMs ? ' (probably gone)' : ''}`;
    lines.push(`  ${host.hostId ?? '(no host id)'}  ${host.identity.split(' ')[0]}${age}`);
    if (!host.metricsUrl) lines.push('    metrics: not served (start the worker with --metrics-port)');
    else if (!host.metrics) lines.push(`    metrics: ${host.metricsUrl} did not answer: ${host.metricsError}`);
    else lines.push(...formatFigures(host.metrics).map((line) => `    ${line}`));
  }
  return lines;
}

/** How each environment result reads (src/temporal/metrics.ts records them). */
const environmentResults: Record<string, string> = { built: 'built', reused: 'reused (cached)', none: 'none needed' };
const tokenKinds = ['input', 'output', 'cache_read', 'cache_write'];

function formatFigures(figures: HostFigures): string[] {
  const environments = Object.entries(figures.environmentBuilds)
    .map(([result, count]) => `${environmentResults[result] ?? result} ${count}`)
    .join(', ');
  const lines = [
    `sandboxes ${figures.sandboxes}/${figures.capacity}; tool calls ${figures.toolCalls}` +
      (figures.toolCallMeanMs === null ? '' : `, mean ${Math.round(figures.toolCallMeanMs)} ms`) +
      `; environments: ${environments || 'none prepared yet'}`,
    `model calls ${figures.modelCalls}`,
  ];
  for (const [name, model] of Object.entries(figures.models)) {
    const kinds = [...tokenKinds, ...Object.keys(model.tokens).filter((kind) => !tokenKinds.includes(kind))];
    const tokens = kinds
      .filter((kind) => model.tokens[kind] !== undefined)
      .map((kind) => `${kind} ${model.tokens[kind]}`)
      .join(', ');
    lines.push(`  ${name}: ${model.calls} calls, tokens ${tokens || 'none'}, $${model.costUsd.toFixed(4)}`);
  }
  return lines;
}
