// A client connection to Temporal that may be closed while calls are under way. The SDK retries a
// call that failed for a passing reason (UNAVAILABLE, …) from a timer; once the connection is closed,
// that retry calls into the closed gRPC channel, which throws "Channel has been shut down" from the
// timer and kills the process. A query still waiting for a busy worker when a command ends is such
// a call. Here no call is retried once closing has begun, and closing waits for the retries already
// scheduled to go out first (each at most a few seconds away).
import {
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
} from '@temporalio/client';

class RetriesWhileOpen {
  private closing = false;
  /** When the last retry scheduled so far goes out. */
  private lastRetryAt = 0;
  private readonly retry = defaultGrpcRetryOptions();

  readonly interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !this.closing && this.retry.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const delayMs = this.retry.delayFunction(attempt, status);
      this.lastRetryAt = Math.max(this.lastRetryAt, Date.now() + delayMs);
      return delayMs;
    },
  });

  /** No more retries; resolves once those already scheduled have gone out. */
  async stop(): Promise<void> {
    this.closing = true;
    const waitMs = this.lastRetryAt - Date.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs + 10));
  }
}

class ConnectionThatClosesCleanly extends Connection {
  retries?: RetriesWhileOpen;

  override async close(): Promise<void> {
    await this.retries?.stop();
    await super.close();
  }
}

/** `Connection.connect`, with the SDK's retries of failed calls, safe to close with calls under way. */
export async function connectTemporal(options: Omit<ConnectionOptions, 'interceptors'>): Promise<Connection> {
  const retries = new RetriesWhileOpen();
  const connection = (await ConnectionThatClosesCleanly.connect({
    ...options,
    interceptors: [retries.interceptor],
  })) as ConnectionThatClosesCleanly;
  connection.retries = retries;
  return connection;
}
