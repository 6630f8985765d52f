// Where a run's activities go. A run started by our CLI (run, resume, mcp) names the private
// task queue of the CLI process that started it: its snapshot (the path is read on that machine),
// its sandbox and its model calls (that process's key) go there, and only that process polls it.
// Runs without one (`start`, the Temporal CLI, histories recorded before) use the workflow's
// task queue, served by the deployment's workers. Pure: used by the workflow, the worker and the CLI.
import { modelTaskQueueFor, waitingForModelWorker } from './modelEndpoint.js';

/** `durable-debugger-cli-<host>-<user>-<random>`: one per CLI process. */
export const privateQueuePattern = /^durable-debugger-cli-[a-z0-9._-]{1,160}$/;

export function privateQueueName(machine: string, user: string, random: string): string {
  const part = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'unknown';
  return `durable-debugger-cli-${part(machine)}-${part(user)}-${part(random)}`;
}

/** The queue of every activity of the run but the model calls: the starter's private queue, else the workflow's. */
export function activityQueueOf(input: { privateQueue?: string }, workflowQueue: string): string {
  return input.privateQueue ?? workflowQueue;
}

/**
 * The queue of the run's model calls. With a private queue and an endpoint, the starter's own
 * worker answers them there (with its key): no other worker polls it. A run without an endpoint
 * (its starter had no key) is answered by the deployment's workers of the default endpoint.
 */
export function modelQueueOf(input: { privateQueue?: string; modelEndpoint?: string }, workflowQueue: string): string {
  const queue = input.privateQueue && input.modelEndpoint ? input.privateQueue : workflowQueue;
  return modelTaskQueueFor(queue, input.modelEndpoint);
}

/** What the status of a run whose model calls nobody takes says: on a private queue, only its starter can. */
export function waitingForModelWorkerOf(
  input: { privateQueue?: string; modelEndpoint?: string },
  workflowQueue: string,
): string {
  if (!input.privateQueue || !input.modelEndpoint) return waitingForModelWorker(input.modelEndpoint, workflowQueue);
  return (
    `waiting for the durable-debugger command that started this run to answer its model calls (task queue ${modelQueueOf(input, workflowQueue)}): ` +
    'it has stopped; `durable-debugger resume` continues the run in a new one, with your own worker and key'
  );
}
