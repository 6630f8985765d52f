// The runs a CLI process's worker serves: those it started, and their attempts. Its private task
// queue's name is visible to every Temporal user (in each run's input), so anyone could start a
// run that names it; the worker's activities check the run first and refuse any other (its path
// is never read here, its sandbox never built here, this process's key never pays for it).
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { privateQueueName } from '../agent/runQueues.js';
import { sandboxAdmissionIdFor } from './definitions.js';

export const notServedType = 'RunNotServedHere';

export class ServedRuns {
  /** Each run this process started (or adopted): its first run id, once its start has answered (null: it failed). */
  private readonly started = new Map<string, Promise<string | null>>();
  /** Workflow runs already checked, by `workflowId/runId`. */
  private readonly checked = new Map<string, Promise<boolean>>();

  constructor(readonly queue: string) {}

  /** A private queue for this process: its machine, its user, and 96 random bits. */
  static forThisProcess(): ServedRuns {
    const user = (() => {
      try {
        return userInfo().username;
      } catch {
        return process.env.USER ?? 'unknown';
      }
    })();
    return new ServedRuns(privateQueueName(hostname(), user, randomBytes(12).toString('hex')));
  }

  /**
   * The runs of `workflowId`'s private queue when the run is running and was started by this user
   * on this machine, by a command that is gone (`resume`, `raise-budget`): this process serves it
   * from now on. Null for any other run (another user's or machine's, or a run of the shared queue).
   */
  static async adopting(client: Client, workflowId: string): Promise<ServedRuns | null> {
    const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId },
    });
    if (!info?.execution?.runId || info.closeTime) return null;
    const history = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId: info.execution.runId },
      maximumPageSize: 1,
    });
    const payload = history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = payload ? client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : null;
    const queue = (input as { privateQueue?: unknown } | null)?.privateQueue;
    const own = ServedRuns.forThisProcess().queue.replace(/-[^-]+$/, '-');
    if (typeof queue !== 'string' || !queue.startsWith(own)) return null;
    const served = new ServedRuns(queue);
    served.started.set(workflowId, Promise.resolve(info.firstRunId || info.execution.runId));
    return served;
  }

  /**
   * Serves the run this process is about to start as `workflowId`: call before the start (its first
   * activity may come before the start answers), then settle with its first run id, or null.
   */
  starting(workflowId: string): (firstRunId: string | null) => void {
    let settle: (firstRunId: string | null) => void = () => undefined;
    this.started.set(workflowId, new Promise((resolve) => (settle = resolve)));
    return settle;
  }

  /** Whether the run `workflowId` (at `runId`, else its latest run) is one this process serves. */
  serves(client: Client, workflowId: string, runId?: string): Promise<boolean> {
    const key = `${workflowId}/${runId ?? ''}`;
    let answer = this.checked.get(key);
    if (!answer) {
      answer = this.check(client, workflowId, runId).catch(() => false);
      // A run id names one run for good; a latest run may change (a run id reused by another start).
      if (runId) this.checked.set(key, answer);
    }
    return answer;
  }

  private async check(client: Client, workflowId: string, runId?: string): Promise<boolean> {
    const started = this.started.get(workflowId);
    const firstRunId = started ? await started : undefined;
    if (started && firstRunId === null) return false;
    if (firstRunId && runId === firstRunId) return true;
    // Continued as new, or an attempt: the server says which run began this chain, and whose child it is.
    const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
    });
    if (firstRunId) return info?.firstRunId === firstRunId;
    const parent = info?.parentExecution;
    return parent?.workflowId ? this.serves(client, parent.workflowId, parent.runId ?? undefined) : false;
  }

  /**
   * The activity interceptor of this process's workers: an activity of a run this process does
   * not serve fails at once, saying why. The sandbox queue of this private queue serves only
   * these runs too (a claim names its run).
   */
  interceptor(client: Client): ActivityInterceptorsFactory {
    const admissionId = sandboxAdmissionIdFor(this.queue);
    return (context) => {
      const inbound: ActivityInboundCallsInterceptor = {
        execute: async (input, next) => {
          const { workflowId, runId } = context.info.workflowExecution ?? { workflowId: '', runId: '' };
          const named = (input.args[0] as { workflowId?: unknown } | undefined)?.workflowId;
          const served =
            workflowId === admissionId
              ? typeof named !== 'string' || context.info.activityType !== 'claimSandbox'
                ? true
                : await this.serves(client, named)
              : await this.serves(client, workflowId, runId);
          if (!served) {
            throw ApplicationFailure.nonRetryable(
              `${context.info.activityType} of ${typeof named === 'string' && workflowId === admissionId ? named : workflowId} refused: ` +
                `task queue ${this.queue} belongs to the durable-debugger command that started its own runs, and serves no other run ` +
                '(its machine reads no other path, its key pays for no other run). Start the run with your own durable-debugger command.',
              notServedType,
            );
          }
          return next(input);
        },
      };
      return { inbound };
    };
  }
}
