// The worker's own Prometheus metrics, recorded on the Temporal SDK's metric meter so that they
// are served on the same endpoint as the SDK's runtime metrics (Runtime.install, src/worker.ts).
// Names and labels are listed in docs/operations.md; keep the two in step.
import type { MetricMeter, MetricTags } from '@temporalio/common';
import type { TokenUsage } from '../agent/budgets.js';

/** Duration histograms take whole milliseconds. */
const ms = (value: number) => Math.max(0, Math.round(value));

export class WorkerMetrics {
  private readonly runsActive;
  private readonly runsWaiting;
  private readonly sandboxes;
  private readonly sandboxCapacity;
  private readonly environmentBuilds;
  private readonly environmentBuildMs;
  private readonly modelCalls;
  private readonly modelTokens;
  private readonly modelCost;
  private readonly toolCallMs;
  private readonly testRunMs;

  constructor(meter: MetricMeter) {
    this.runsActive = meter.createGauge(
      'durable_debugger_runs_active',
      'int',
      'runs',
      'runs of the task queue that hold a sandbox',
    );
    this.runsWaiting = meter.createGauge(
      'durable_debugger_runs_waiting',
      'int',
      'runs',
      'runs of the task queue waiting for a sandbox host',
    );
    this.sandboxes = meter.createGauge('durable_debugger_sandboxes', 'int', 'sandboxes', 'sandboxes this host holds');
    this.sandboxCapacity = meter.createGauge(
      'durable_debugger_sandbox_capacity',
      'int',
      'sandboxes',
      'sandboxes this host may hold at once',
    );
    this.environmentBuilds = meter.createCounter(
      'durable_debugger_environment_builds',
      'builds',
      'environments prepared, by result (built; reused from the image cache; none needed)',
    );
    this.environmentBuildMs = meter.createHistogram(
      'durable_debugger_environment_build_ms',
      'int',
      'ms',
      'time to build an environment image',
    );
    this.modelCalls = meter.createCounter('durable_debugger_model_calls', 'calls', 'model calls answered, by model');
    this.modelTokens = meter.createCounter(
      'durable_debugger_model_tokens',
      'tokens',
      'tokens of model calls, by model and kind (input, output, cache_read, cache_write)',
    );
    this.modelCost = meter.createCounter(
      'durable_debugger_model_cost_microusd',
      'microusd',
      'cost of model calls at listed prices, in millionths of a US dollar, by model',
    );
    this.toolCallMs = meter.createHistogram(
      'durable_debugger_tool_call_ms',
      'int',
      'ms',
      'time of a tool call in its sandbox, by tool',
    );
    this.testRunMs = meter.createHistogram(
      'durable_debugger_test_run_ms',
      'int',
      'ms',
      "time of a run of the repository's test suite",
    );
  }

  queue(counts: { active: number; waiting: number }, tags: MetricTags): void {
    this.runsActive.set(counts.active, tags);
    this.runsWaiting.set(counts.waiting, tags);
  }

  host(counts: { sandboxes: number; capacity: number }, tags: MetricTags): void {
    this.sandboxes.set(counts.sandboxes, tags);
    this.sandboxCapacity.set(counts.capacity, tags);
  }

  /** An environment prepared for a sandbox; null: the repository needs none (the sandbox image as it is). */
  environment(result: { reused: boolean; buildMs: number } | null): void {
    this.environmentBuilds.add(1, { result: result === null ? 'none' : result.reused ? 'reused' : 'built' });
    if (result && !result.reused) this.environmentBuildMs.record(ms(result.buildMs));
  }

  modelCall(model: string, usage: TokenUsage, costUsd: number | null): void {
    this.modelCalls.add(1, { model });
    const kinds = {
      input: usage.inputTokens,
      output: usage.outputTokens,
      cache_read: usage.cacheReadTokens,
      cache_write: usage.cacheWriteTokens,
    };
    for (const [kind, tokens] of Object.entries(kinds)) if (tokens > 0) this.modelTokens.add(tokens, { model, kind });
    if (costUsd !== null) this.modelCost.add(Math.round(costUsd * 1_000_000), { model });
  }

  toolCall(tool: string, durationMs: number): void {
    this.toolCallMs.record(ms(durationMs), { tool });
  }

  testRun(durationMs: number): void {
    this.testRunMs.record(ms(durationMs));
  }
}
