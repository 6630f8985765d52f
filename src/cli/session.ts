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

/** Starts a worker in this process unless one already serves the task queue. */
export async function workerIfNeeded(session: Session): Promise<RunningWorker | null> {
  if (await hasWorker(session, session.config.taskQueue)) return null;
  log('No worker serves the task queue: starting one in this process (keep `durable-debugger worker` running to survive this command).');
  return startWorker({ config: session.config, address: session.server.address, log });
}

export { loadConfig };
