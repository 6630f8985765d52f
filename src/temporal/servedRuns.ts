// The runs a CLI's worker serves: those this user's commands started from this data folder, and
// their attempts. Every command of this user on this machine (run, resume, raise-budget, mcp) polls
// the same private task queue, so a run goes on when the command that started it is gone and
// another one runs. The queue's name is visible to every Temporal user (in each run's input), so
// anyone could start a run that names it: the worker's activities check the run first, against
// the runs recorded in the data folder (0600) and the server's record of the run, and refuse any
// other (its path is never read here, its sandbox never built here, this user's key never pays).
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { dataFolderQueue } from './dataFolderQueue.js';
import { sandboxAdmissionIdFor } from './definitions.js';

export const notServedType = 'RunNotServedHere';

/** How long a check waits for a start recorded as under way by another command of this user. */
const pendingStartMs = 30_000;

export class ServedRuns {
  /** Each run started by this process: its first run id, once its start has answered (null: it failed). */
  private readonly started = new Map<string, Promise<string | null>>();
  /** Workflow runs already checked, by `workflowId/runId`. */
  private readonly checked = new Map<string, Promise<boolean>>();

  /** `registry`: the file where this user's commands record the runs they start (one line each: id, first run id). */
  constructor(
    readonly queue: string,
    private readonly registry: string,
  ) {}

  /** The private queue of this user's commands on this machine with this data folder. */
  static forDataFolder(home: string): ServedRuns {
    return new ServedRuns(dataFolderQueue(home), join(home, 'served-runs'));
  }

  /**
   * Serves the run this process is about to start as `workflowId`: call before the start (its first
   * activity may come before the start answers), then settle with its first run id, or null.
   */
  starting(workflowId: string): (firstRunId: string | null) => void {
    let settle: (firstRunId: string | null) => void = () => undefined;
    this.started.set(workflowId, new Promise((resolve) => (settle = resolve)));
    this.record(workflowId, 'pending');
    return (firstRunId) => {
      this.record(workflowId, firstRunId ?? 'failed');
      settle(firstRunId);
    };
  }

  private record(workflowId: string, state: string): void {
    mkdirSync(dirname(this.registry), { recursive: true, mode: 0o700 });
    appendFileSync(this.registry, `${JSON.stringify([workflowId, state])}\n`, { mode: 0o600 });
  }

  /** The first run id this user's commands recorded for `workflowId` (waiting out a start under way), or null. */
  private async recorded(workflowId: string): Promise<string | null> {
    for (const deadline = Date.now() + pendingStartMs; ;) {
      let state: string | null = null;
      for (const line of readRegistry(this.registry).split('\n')) {
        try {
          const [id, value] = JSON.parse(line) as [string, string];
          if (id === workflowId) state = value;
        } catch {
          // A line being written, or damaged: not a record.
        }
      }
      if (state !== 'pending') return state === null || state === 'failed' ? null : state;
      if (Date.now() > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
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
    const firstRunId = started ? await started : await this.recorded(workflowId);
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
   * The activity interceptor of this process's workers: an activity of a run this user's
   * commands did not start fails at once, saying why. The sandbox queue of this private queue serves only
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
                `task queue ${this.queue} belongs to the durable-debugger commands of the user who started their own runs, and serves no other run ` +
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

function readRegistry(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
