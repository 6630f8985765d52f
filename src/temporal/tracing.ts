// OpenTelemetry tracing of runs through Temporal's interceptors (@temporalio/interceptors-opentelemetry):
// the workflow (RunWorkflow:debugRepository), every activity it starts (StartActivity:…) and every
// activity run on a worker (RunActivity:callModel, RunActivity:runTool, …) as spans, exported over
// OTLP/HTTP to the configured endpoint. Off unless an endpoint is configured (src/config.ts).
import { createRequire } from 'node:module';
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';

/**
 * The workflow side of the interceptors, bundled into the workflow code when tracing is on.
 * Resolved when asked: the installed package has no node_modules (it runs a prebuilt bundle).
 */
export function workflowTracingModule(): string {
  return createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
}

export interface Tracing {
  /** For every worker's activities. */
  activityInterceptors: ActivityInterceptorsFactory;
  /** For the workflow worker: where the workflow's spans leave its sandbox. */
  sinks: InjectedSinks<Record<string, never>>;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

export function startTracing(endpoint: string, attributes: { hostId: string; taskQueue: string }): Tracing {
  const resource = new Resource({
    'service.name': 'durable-debugger-worker',
    'service.instance.id': attributes.hostId,
    'durable_debugger.task_queue': attributes.taskQueue,
  });
  // A short delay: a run's spans reach the collector within seconds, not at the batch's default 5 s.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint }), {
    scheduledDelayMillis: 1_000,
  });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  const tracer = provider.getTracer('durable-debugger');
  // Activities read their parent (the workflow's StartActivity span) from Temporal headers through
  // the global propagator and make it current through the context manager; both are no-ops until
  // set, and then every activity began a trace of its own.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    activityInterceptors: (activity) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(activity, { tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(activity),
    }),
    sinks: { exporter: makeWorkflowExporter(spanProcessor, resource) } as unknown as InjectedSinks<
      Record<string, never>
    >,
    shutdown: () => provider.shutdown(),
  };
}
