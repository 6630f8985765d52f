// What most commands need: the configuration, a Temporal server (the embedded one unless
// TEMPORAL_ADDRESS is set), a client, and, when nobody else serves the task queue, a worker
// of our own for as long as the command runs.
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import pc from 'picocolors';
import { connectClient } from '../client.js';
import { loadConfig, type Config } from '../config.js';
import { ensureTemporalServer, type TemporalServer } from '../temporal/embeddedServer.js';
import { startWorker, type RunningWorker } from '../worker.js';

export interface Session {
  config: Config;
  server: TemporalServer;
  client: Client;
  close(): Promise<void>;
}

export const log = (line: string) => process.stderr.write(`${pc.dim(line)}\n`);

export async function openSession(): Promise<Session> {
  const config = loadConfig();
  const server = await ensureTemporalServer(config, log);
  const client = await connectClient(server.address, config.namespace);
  return { config, server, client, close: () => client.connection.close() };
}

/** True when some worker polls the task queue for workflow tasks. */
export async function hasWorker(session: Session, taskQueue: string): Promise<boolean> {
  const response = await session.client.workflowService.describeTaskQueue({
    namespace: session.config.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (response.pollers ?? []).length > 0;
}

/**
 * A worker in this process, for as long as the command runs. It is started even when other
 * workers serve the task queue: Temporal shares the work among them, and a worker that died a
 * moment ago still looks like a poller, so relying on others could leave the run waiting.
 */
export async function workerForThisCommand(session: Session): Promise<RunningWorker> {
  return startWorker({ config: session.config, address: session.server.address, log });
}

