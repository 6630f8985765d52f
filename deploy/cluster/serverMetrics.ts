// The Temporal server's own metrics (Prometheus text on its metrics port: the cluster's
// clusterAddresses.serverMetrics, a dev server's --metrics-port): its latency histograms by
// service and operation, and the figures `npm run cluster -- metrics` prints. The bench reads the
// same histograms for its account of an iteration (bench/serverTaskTimes.ts).
import { scrapeMetrics, type Sample } from '../../src/temporal/prometheusText.js';

export interface Histogram {
  /** In seconds, as the server records latencies. */
  sum: number;
  count: number;
}
export type Histograms = Map<string, Histogram>;

export const histogramKey = (metric: string, service: string, operation: string) => `${metric} ${service} ${operation}`;

/** The server's page is large (thousands of series) and it answers on its own network: a longer wait than a worker's. */
const serverScrapeMs = 10_000;

/** The server's samples; throws a one-line reason when its endpoint does not answer. */
export async function readServerMetrics(metricsUrl: string): Promise<Sample[]> {
  try {
    return await scrapeMetrics(metricsUrl, serverScrapeMs);
  } catch (error) {
    throw new Error(`the server's metrics (${metricsUrl}) ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

/**
 * Every histogram's sum and count by metric, service and operation (histogramKey), summed over
 * their other labels (namespace, task type); `skip` leaves samples out.
 */
export function histogramsOf(samples: Sample[], skip: (labels: Record<string, string>) => boolean = () => false) {
  const histograms: Histograms = new Map();
  for (const { name, labels, value } of samples) {
    const part = name.endsWith('_sum') ? 'sum' : name.endsWith('_count') ? 'count' : null;
    if (!part || skip(labels)) continue;
    const id = histogramKey(name.slice(0, -part.length - 1), labels.service_name ?? '', labels.operation ?? '');
    const histogram = histograms.get(id) ?? { sum: 0, count: 0 };
    histogram[part] += value;
    histograms.set(id, histogram);
  }
  return histograms;
}

export interface ServerFigures {
  /** Requests to the persistence store (PostgreSQL in the cluster) and their mean latency, since the server started. */
  persistence: OperationFigure;
  /** The persistence operations with the most requests. */
  busiestPersistence: Array<OperationFigure & { operation: string }>;
  /** Requests the frontend served (clients and workers) and their mean latency, long polls left out (longPoll). */
  frontend: OperationFigure;
}
interface OperationFigure {
  requests: number;
  /** null before the first request. */
  meanMs: number | null;
}

export function serverFigures(samples: Sample[]): ServerFigures {
  const persistence = new Map<string, Histogram>();
  const frontend: Histogram = { sum: 0, count: 0 };
  for (const [id, histogram] of histogramsOf(samples)) {
    const [metric, service, operation] = id.split(' ') as [string, string, string];
    if (metric === 'persistence_latency') {
      // The same operation as several services call it is one operation of the store.
      const total = persistence.get(operation) ?? { sum: 0, count: 0 };
      persistence.set(operation, { sum: total.sum + histogram.sum, count: total.count + histogram.count });
    } else if (metric === 'service_latency' && service === 'frontend' && !longPoll(operation)) {
      frontend.sum += histogram.sum;
      frontend.count += histogram.count;
    }
  }
  const all = [...persistence.values()].reduce(
    (total, h) => ({ sum: total.sum + h.sum, count: total.count + h.count }),
    {
      sum: 0,
      count: 0,
    },
  );
  return {
    persistence: figureOf(all),
    busiestPersistence: [...persistence]
      .sort(([, a], [, b]) => b.count - a.count)
      .slice(0, 5)
      .map(([operation, histogram]) => ({ operation, ...figureOf(histogram) })),
    frontend: figureOf(frontend),
  };
}

/** Calls that wait for work or for an event by design (up to a minute): their time is not the server's latency. */
function longPoll(operation: string): boolean {
  return operation.startsWith('Poll') || operation === 'GetWorkflowExecutionHistory';
}

function figureOf(histogram: Histogram): OperationFigure {
  return { requests: histogram.count, meanMs: histogram.count > 0 ? (histogram.sum / histogram.count) * 1000 : null };
}

export function formatServerFigures(figures: ServerFigures): string[] {
  const line = (figure: OperationFigure) =>
    `${figure.requests} requests${figure.meanMs === null ? '' : `, mean ${figure.meanMs.toFixed(2)} ms`}`;
  return [
    `persistence: ${line(figures.persistence)}`,
    ...figures.busiestPersistence.map((figure) => `  ${figure.operation}: ${line(figure)}`),
    `frontend: ${line(figures.frontend)} (long polls left out)`,
  ];
}
