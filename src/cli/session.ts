// What most commands need: the configuration, a Temporal server (the embedded one unless
// TEMPORAL_ADDRESS is set), a client, and, when nobody else serves the task queue, a worker
// of our own for as long as the command runs.
import type { Client } from '@temporalio/client';
import pc from 'picocolors';
import { loadConfig, type Config } from '../config.js';
import type { TemporalServer } from '../temporal/embeddedServer.js';
import type { ServedRuns } from '../temporal/servedRuns.js';
import type { RunningWorker } from '../worker.js';

export interface Session {
  config: Config;
  server: TemporalServer;
  client: Client;
  /** With this command's worker: the runs it serves, on its private task queue. */
  served?: ServedRuns;
  close(): Promise<void>;
}

export const log = (line: string) => process.stderr.write(`${pc.dim(line)}\n`);

export async function openSession(): Promise<Session> {
  const config = loadConfig();
  // Loaded here, not at start: a command that refuses its input answers without them.
  const [{ ensureTemporalServer }, { connectClient }] = await Promise.all([
    import('../temporal/embeddedServer.js'),
    import('../client.js'),
  ]);
  const server = await ensureTemporalServer(config, log);
  const client = await connectClient(server.address, config.namespace);
  return { config, server, client, close: () => client.connection.close() };
}

/** True when some worker polls the task queue for workflow tasks (or, with `activities`, for activity tasks). */
export async function hasWorker(
  session: Session,
  taskQueue: string,
  kind: 'workflows' | 'activities' = 'workflows',
): Promise<boolean> {
  const types = (await import('@temporalio/proto')).default.temporal.api.enums.v1.TaskQueueType;
  const response = await session.client.workflowService.describeTaskQueue({
    namespace: session.config.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: kind === 'workflows' ? types.TASK_QUEUE_TYPE_WORKFLOW : types.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (response.pollers ?? []).length > 0;
}

/** How long a query of a closed run may wait for a worker's replay: a live worker answers a closed run in well under that. */
const closedRunQueryMs = 4_000;

/**
 * Asks `query` of a closed run, which only a worker's replay of the run can answer; null when no
 * worker answers. With no worker on the run's task queue the server holds a query until its own
 * timeout (about 30 s), so it is not asked; and since a worker stopped a moment ago is still
 * listed as a poller (the server keeps pollers for minutes), it is given a few seconds only.
 */
export async function queryClosedRun<T>(
  session: Session,
  taskQueue: string,
  query: () => Promise<T>,
): Promise<T | null> {
  if (!(await hasWorker(session, taskQueue))) return null;
  return session.client.withDeadline(Date.now() + closedRunQueryMs, query).catch(() => null);
}

/**
 * The model endpoint of this command's settings, for the runs it starts (none for the Anthropic
 * API without a key: the default endpoint). Bedrock and Vertex learn here whose credentials these are.
 */
export async function endpointOfSession(session: Session): Promise<{ modelEndpoint?: string }> {
  const { modelEndpointOf } = await import('../model/providers.js');
  const endpointId = await modelEndpointOf(session.config.anthropic);
  return endpointId ? { modelEndpoint: endpointId } : {};
}

/**
 * A worker in this process, for as long as the command runs: it serves the runs this user's
 * commands start from this data folder, and no other (src/temporal/servedRuns.ts). Their snapshot, sandbox and model calls go
 * to its private task queue (the run's input names it), so a path is read on this machine and
 * this user's key answers only this user's runs; on the shared queue it takes workflow tasks only.
 */
export async function workerForThisCommand(session: Session): Promise<RunningWorker> {
  const [{ startWorker }, { ServedRuns }] = await Promise.all([
    import('../worker.js'),
    import('../temporal/servedRuns.js'),
  ]);
  const served = ServedRuns.forDataFolder(session.config.home);
  const worker = await startWorker({
    config: session.config,
    address: session.server.address,
    log,
    serveDefaultEndpoint: false,
    servedRuns: served,
  });
  session.served = served;
  log(`This command's worker serves only the runs your commands start, on task queue ${served.queue}.`);
  return worker;
}

/**
 * What a run started by this command adds to its input and its start: the private queue of this
 * command's worker, which serves it (nothing without a worker: `start` leaves runs to the deployment).
 */
export function servedBySession(session: Session): {
  route: { privateQueue?: string };
  starting?: (workflowId: string) => (firstRunId: string | null) => void;
} {
  const served = session.served;
  if (!served) return { route: { privateQueue: undefined } };
  return { route: { privateQueue: served.queue }, starting: (workflowId) => served.starting(workflowId) };
}
