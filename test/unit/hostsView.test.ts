// The fleet view's reading of a worker host's metrics page and its lines for a person (issue 26):
// the `hosts` command and `npm run cluster -- metrics` print these.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePrometheusText } from '../../src/temporal/prometheusText.js';
import { formatTaskQueueView, hostFigures, type WorkerHostView } from '../../src/temporal/workerHosts.js';

test("a host's figures: its own gauges, model calls, tokens and cost by model, tool calls' mean, environments", () => {
  const samples = parsePrometheusText(
    [
      'durable_debugger_sandboxes{host="a",task_queue="q"} 2',
      'durable_debugger_sandbox_capacity{host="a",task_queue="q"} 4',
      'durable_debugger_sandboxes{host="other",task_queue="q"} 9',
      'durable_debugger_model_calls_total{model="m1"} 3',
      'durable_debugger_model_calls_total{model="m2"} 1',
      'durable_debugger_model_tokens_total{kind="input",model="m1"} 100',
      'durable_debugger_model_tokens_total{kind="output",model="m1"} 20',
      'durable_debugger_model_cost_microusd_total{model="m1"} 1500',
      'durable_debugger_tool_call_ms_sum{tool="run_tests"} 900',
      'durable_debugger_tool_call_ms_count{tool="run_tests"} 2',
      'durable_debugger_tool_call_ms_sum{tool="read_file"} 10',
      'durable_debugger_tool_call_ms_count{tool="read_file"} 3',
      'durable_debugger_environment_builds_total{result="built"} 1',
      'durable_debugger_environment_builds_total{result="reused"} 2',
    ].join('\n'),
  );
  assert.deepEqual(hostFigures(samples, 'a'), {
    sandboxes: 2,
    capacity: 4,
    modelCalls: 4,
    models: {
      m1: { calls: 3, tokens: { input: 100, output: 20 }, costUsd: 0.0015 },
      m2: { calls: 1, tokens: {}, costUsd: 0 },
    },
    toolCalls: 5,
    toolCallMeanMs: 182,
    environmentBuilds: { built: 1, reused: 2 },
  });
});

test("the lines say each host's figures, a host without metrics or not answering, and a host probably gone", () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  const host = (hostId: string, seconds: number, extra: Partial<WorkerHostView>): WorkerHostView => ({
    hostId,
    identity: `1@m-${hostId} host:${hostId}`,
    machine: `m-${hostId}`,
    lastPoll: new Date(now - seconds * 1000).toISOString(),
    metricsUrl: null,
    metrics: null,
    metricsError: null,
    ...extra,
  });
  const lines = formatTaskQueueView(
    {
      taskQueue: 'q',
      runs: { holdingSandbox: 3, waiting: 1 },
      runsNote: null,
      hosts: [
        host('a', 2, {
          metricsUrl: 'http://m-a:9464/metrics',
          metrics: {
            sandboxes: 2,
            capacity: 2,
            modelCalls: 4,
            models: { m1: { calls: 4, tokens: { output: 20, input: 100 }, costUsd: 0.0015 } },
            toolCalls: 5,
            toolCallMeanMs: 182.4,
            environmentBuilds: { reused: 2, none: 1 },
          },
        }),
        host('b', 10, { metricsUrl: 'http://m-b:9464/metrics', metricsError: 'no answer within 3 s' }),
        host('c', 200, {}),
      ],
    },
    now,
  );
  assert.deepEqual(lines, [
    'Task queue q: 3 runs hold a sandbox, 1 waiting for one',
    '  a  1@m-a  last poll 2 s ago',
    '    sandboxes 2/2; tool calls 5, mean 182 ms; environments: reused (cached) 2, none needed 1',
    '    model calls 4',
    '      m1: 4 calls, tokens input 100, output 20, $0.0015',
    '  b  1@m-b  last poll 10 s ago',
    '    metrics: http://m-b:9464/metrics did not answer: no answer within 3 s',
    '  c  1@m-c  last poll 200 s ago (probably gone)',
    '    metrics: not served (start the worker with --metrics-port)',
  ]);
  assert.deepEqual(formatTaskQueueView({ taskQueue: 'q', runs: null, runsNote: 'no run yet', hosts: [] }), [
    'Task queue q: no run yet',
    '  No worker host polls it (start one with `durable-debugger worker`).',
  ]);
});
