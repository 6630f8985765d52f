// A deadline for the Docker API calls a sandbox makes on every tool call (listing its container,
// creating and starting an exec, inspecting it, removing a container). Each answers within
// milliseconds, seconds under load; one the engine never answers (a hijacked exec it never
// upgrades) would otherwise hold the sandbox's work queue for good, and with it every retried
// activity waiting behind it. Past the deadline the call is aborted and fails, so the activity
// fails and is retried on a prepared sandbox. Creating the container has a longer one
// (container.ts); the environment build's long calls (a commit, an image) have none.

/** Far above what these calls take on a loaded machine, far below any activity's own limits. */
export const dockerCallDeadlineMs = 120_000;

export class DockerCallTimeoutError extends Error {}

/** Runs `call` with an abort signal that fires after `ms`; dockerode passes it on as `abortSignal`. */
export async function withinDeadline<T>(
  what: string,
  call: (abortSignal: AbortSignal) => Promise<T>,
  ms = dockerCallDeadlineMs,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () =>
      controller.abort(new DockerCallTimeoutError(`${what}: the Docker engine did not answer within ${ms / 1000} s`)),
    ms,
  );
  try {
    return await call(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
