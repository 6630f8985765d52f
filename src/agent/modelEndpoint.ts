// Model endpoints: runs are routed to workers by their model settings. Each worker serves the
// endpoint of its own settings (a name made of the base URL's host and a fingerprint of base URL
// plus key, never the key; for Bedrock and Vertex, of provider, region, project and whose
// credentials: src/model/endpoint.ts), on a task queue of its own, so a run is answered only by workers
// with the settings it was started with. Pure: used by the workflow, the worker and the CLI.

/** Runs that name no endpoint (started with the Temporal CLI, or without a key): the deployment's workers. */
export const defaultModelEndpoint = 'default';
/** The scripted model of `durable-debugger dev --scripted` (fixture scripts played by a local fake API). */
export const scriptedModelEndpoint = 'scripted';

export const modelEndpointPattern = /^[a-z0-9][a-z0-9.-]{0,99}$/;

/** The task queue on which the workers of one endpoint take the model calls of runs on `taskQueue`. */
export function modelTaskQueueFor(taskQueue: string, endpoint: string | undefined): string {
  return `${taskQueue}/model/${endpoint ?? defaultModelEndpoint}`;
}

export function describeModelEndpoint(endpoint: string | undefined): string {
  if (endpoint === undefined || endpoint === defaultModelEndpoint) return 'the default model endpoint';
  if (endpoint === scriptedModelEndpoint) return 'the scripted model';
  return `model endpoint ${endpoint}`;
}

/** What the status of a run whose model calls nobody takes says, and what to do about it. */
export function waitingForModelWorker(endpoint: string | undefined, taskQueue: string): string {
  const queue = modelTaskQueueFor(taskQueue, endpoint);
  const remedy =
    endpoint === undefined || endpoint === defaultModelEndpoint
      ? '`durable-debugger worker` with ANTHROPIC_API_KEY set, or `durable-debugger dev --scripted` for the fixtures'
      : endpoint === scriptedModelEndpoint
        ? '`durable-debugger dev --scripted`'
        : endpoint.startsWith('bedrock.')
          ? '`durable-debugger worker --provider bedrock` with the AWS credentials and region this run was started with'
          : endpoint.startsWith('vertex.')
            ? '`durable-debugger worker --provider vertex` with the Google credentials, project and region this run was started with'
            : '`durable-debugger worker` with the ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY this run was started with';
  return `waiting for a worker serving ${describeModelEndpoint(endpoint)} (task queue ${queue}): start ${remedy}`;
}

/**
 * How long the `waits`-th renewed wait (from 1) for a model worker lasts: the first wait doubled
 * each time, at most `maxSeconds`, and never past what is left of the run's time (at least a second).
 */
export function modelWorkerWaitMs(
  wait: { firstSeconds: number; maxSeconds: number },
  waits: number,
  remainingMs: number = Infinity,
): number {
  const doubled = wait.firstSeconds * 1000 * 2 ** Math.min(waits, 30);
  return Math.max(1000, Math.min(doubled, Math.max(wait.firstSeconds, wait.maxSeconds) * 1000, remainingMs));
}
