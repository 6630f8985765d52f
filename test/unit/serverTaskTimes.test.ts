// The bench's reading of the Temporal server's own latency histograms (bench/serverTaskTimes.ts):
// the floor it reports rests on it, so a misread label or unit would misstate whose time is whose.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHistograms, serverTaskTimes } from '../../bench/serverTaskTimes.js';

/** Prometheus text in the server's shape (sums in seconds), `scale` times the counts and sums. */
function metricsPage(scale: number, extra = ''): string {
  const line = (metric: string, labels: string, sum: number, count: number) =>
    [
      `${metric}_bucket{${labels},le="0.001"} ${count}`,
      `${metric}_sum{${labels}} ${sum * scale}`,
      `${metric}_count{${labels}} ${count * scale}`,
    ].join('\n');
  return [
    '# HELP task_latency_queue task_latency_queue histogram',
    '# TYPE task_latency_queue histogram',
    line(
      'task_latency_queue',
      'namespace="default",operation="TransferActiveTaskWorkflowTask",service_name="history",task_type="TransferWorkflowTask"',
      0.4,
      100,
    ),
    line(
      'task_latency_queue',
      'namespace="default",operation="TransferActiveTaskActivity",service_name="history",task_type="TransferActivityTask"',
      0.3,
      100,
    ),
    // The server's own system workflows are not the run's.
    line(
      'task_latency_queue',
      'namespace="temporal_system",operation="TransferActiveTaskActivity",service_name="history",task_type="TransferActivityTask"',
      9,
      1,
    ),
    line(
      'service_latency',
      'namespace="default",operation="RespondWorkflowTaskCompleted",service_name="frontend"',
      0.25,
      100,
    ),
    line(
      'service_latency',
      'namespace="default",operation="RespondActivityTaskCompleted",service_name="frontend"',
      0.2,
      100,
    ),
    // The same operation as the history service serves it is another step.
    line(
      'service_latency',
      'namespace="default",operation="RespondActivityTaskCompleted",service_name="history"',
      5,
      100,
    ),
    extra,
  ].join('\n');
}

test("the server's mean time per task of each step comes from the histograms' sums and counts between two readings", () => {
  const times = serverTaskTimes(parseHistograms(metricsPage(1)), parseHistograms(metricsPage(3)));
  // Between the readings: 200 tasks each, sums in seconds, means in milliseconds.
  assert.ok(Math.abs(times.workflowTaskDispatchMs - 4) < 1e-9);
  assert.ok(Math.abs(times.activityDispatchMs - 3) < 1e-9);
  assert.ok(Math.abs(times.workflowTaskCompletionMs - 2.5) < 1e-9);
  assert.ok(Math.abs(times.activityCompletionMs - 2) < 1e-9);
  assert.ok(Math.abs(times.perIterationMs - 2 * (4 + 3 + 2.5 + 2)) < 1e-9);
});

test('activities handed over eagerly never enter the transfer queue: their dispatch counts as none, not as an error', () => {
  const page = (scale: number) =>
    metricsPage(scale)
      .split('\n')
      .filter((line) => !line.includes('TransferActiveTaskActivity'))
      .join('\n');
  const times = serverTaskTimes(parseHistograms(page(1)), parseHistograms(page(2)));
  assert.equal(times.activityDispatchMs, 0);
  assert.ok(times.workflowTaskDispatchMs > 0);
});

test("a step the server's metrics do not show at all is an error, not a zero", () => {
  const page = (scale: number) =>
    metricsPage(scale)
      .split('\n')
      .filter((line) => !line.includes('RespondWorkflowTaskCompleted'))
      .join('\n');
  assert.throws(
    () => serverTaskTimes(parseHistograms(page(1)), parseHistograms(page(2))),
    /RespondWorkflowTaskCompleted/,
  );
});
