// The server's own account of an iteration. The Temporal server keeps a latency histogram for
// every request it serves and every queue task it processes (Prometheus text on its metrics
// port). Read before and after a run, their sums and counts give the server's mean time per task
// for the two steps each of an iteration's four tasks (two workflow tasks, two activity tasks)
// goes through in the server:
//   dispatch: the task, once written, waits for the history service's transfer queue to load it,
//     then matching hands it to a waiting poller and history records it started
//     (task_latency_queue of TransferActiveTaskWorkflowTask / TransferActiveTaskActivity);
//   completion: the worker's RespondWorkflowTaskCompleted / RespondActivityTaskCompleted call, as
//     the frontend serves it (service_latency), which writes what the next task needs.
// What an iteration takes beyond these is the network and the worker. The two steps can overlap
// a little: the next task is written, and its dispatch clock starts, inside the completion call.
import { parsePrometheusText } from '../src/temporal/prometheusText.js';
import { histogramKey, histogramsOf, readServerMetrics, type Histograms } from '../deploy/cluster/serverMetrics.js';
import { figure, type Figure } from './stats.js';

/** Mean milliseconds per task of each step, and the server's own time per iteration (2 × each). */
export interface ServerTaskTimes {
  workflowTaskDispatchMs: number;
  activityDispatchMs: number;
  workflowTaskCompletionMs: number;
  activityCompletionMs: number;
  /** 2 × (the four above): the server's own handling of one iteration's four tasks. */
  perIterationMs: number;
}

const steps: Record<
  Exclude<keyof ServerTaskTimes, 'perIterationMs'>,
  { metric: string; service: string; operation: string }
> = {
  workflowTaskDispatchMs: {
    metric: 'task_latency_queue',
    service: 'history',
    operation: 'TransferActiveTaskWorkflowTask',
  },
  activityDispatchMs: { metric: 'task_latency_queue', service: 'history', operation: 'TransferActiveTaskActivity' },
  workflowTaskCompletionMs: {
    metric: 'service_latency',
    service: 'frontend',
    operation: 'RespondWorkflowTaskCompleted',
  },
  activityCompletionMs: { metric: 'service_latency', service: 'frontend', operation: 'RespondActivityTaskCompleted' },
};

const wanted = new Set(Object.values(steps).map((step) => histogramKey(step.metric, step.service, step.operation)));

/** The histograms the steps read, from the server's metrics page. */
export async function readHistograms(metricsUrl: string): Promise<Histograms> {
  return stepHistograms(histogramsOf(await readServerMetrics(metricsUrl), systemNamespace));
}

/** The histograms the steps read, from Prometheus text, summed over their other labels (namespace, task type). */
export function parseHistograms(text: string): Histograms {
  return stepHistograms(histogramsOf(parsePrometheusText(text), systemNamespace));
}

/** The server's own system workflows are not the run's. */
const systemNamespace = (labels: Record<string, string>) => labels.namespace === 'temporal_system';

function stepHistograms(histograms: Histograms): Histograms {
  return new Map([...histograms].filter(([id]) => wanted.has(id)));
}

/** The server's mean time per task of each step between two readings (histogram sums are in seconds). */
export function serverTaskTimes(before: Histograms, after: Histograms): ServerTaskTimes {
  const meanMs = (step: keyof typeof steps) => {
    const { metric, service, operation } = steps[step];
    const id = histogramKey(metric, service, operation);
    const [start, end] = [before.get(id) ?? { sum: 0, count: 0 }, after.get(id) ?? { sum: 0, count: 0 }];
    const count = end.count - start.count;
    if (count > 0) return ((end.sum - start.sum) / count) * 1000;
    // An activity handed to the worker eagerly, with the workflow task's completion, never enters
    // the transfer queue; every other step has tasks in any run (none: the metric is not there).
    if (step === 'activityDispatchMs') return 0;
    throw new Error(`the server's metrics show no ${metric} of ${service} ${operation} between the two readings`);
  };
  const times = Object.fromEntries(
    Object.keys(steps).map((step) => [step, meanMs(step as keyof typeof steps)]),
  ) as Record<keyof typeof steps, number>;
  return { ...times, perIterationMs: 2 * Object.values(times).reduce((sum, ms) => sum + ms, 0) };
}

/** Runs `run` between two readings of the server's histograms: its result, and the server's times (null without metrics). */
export async function withServerTimes<T>(
  metricsUrl: string | null,
  run: () => Promise<T>,
): Promise<{ result: T; server: ServerTaskTimes | null }> {
  if (!metricsUrl) return { result: await run(), server: null };
  const before = await readHistograms(metricsUrl);
  const result = await run();
  return { result, server: serverTaskTimes(before, await readHistograms(metricsUrl)) };
}

/** Each step's figure over several runs' times; null unless every run has them (a server without metrics). */
export function serverTaskTimeFigures(
  times: Array<ServerTaskTimes | null>,
): Record<keyof ServerTaskTimes, Figure> | null {
  const measured = times.filter((time) => time !== null);
  if (measured.length === 0 || measured.length < times.length) return null;
  return Object.fromEntries(
    serverTaskTimeRows.map(([, key]) => [key, figure(measured.map((time) => time[key]))]),
  ) as Record<keyof ServerTaskTimes, Figure>;
}

export const serverTaskTimeRows: Array<[string, keyof ServerTaskTimes]> = [
  ['server: one workflow task dispatched (written → at a poller)', 'workflowTaskDispatchMs'],
  ['server: one activity task dispatched (written → at a poller)', 'activityDispatchMs'],
  ['server: one workflow task completion call', 'workflowTaskCompletionMs'],
  ['server: one activity completion call', 'activityCompletionMs'],
  ['server: its own handling of one iteration (2 × each of the four)', 'perIterationMs'],
];
