// Connecting to Temporal and starting runs: shared by our CLI, the demo, tests and benchmarks.
import {
  Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { basename, resolve } from 'node:path';
import type { DebugInputJson } from './agent/input.js';
import type { DebugReport } from './agent/report.js';
import type { Config } from './config.js';
import { connectTemporal } from './temporal/clientConnection.js';
import { workflowType } from './temporal/definitions.js';

export async function connectClient(address: string, namespace: string): Promise<Client> {
  const connection = await connectTemporal({ address });
  return new Client({ connection, namespace });
}

export function newWorkflowId(repo: string): string {
  const name = basename(resolve(repo)).replace(/[^a-zA-Z0-9_.-]+/g, '-');
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `debug-${name}-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

export async function startDebugRun(
  client: Client,
  options: {
    input: DebugInputJson;
    taskQueue: string;
    workflowId?: string;
    idMustBeNew?: boolean;
    /** Told the id before the start (a worker that serves only its own runs: src/temporal/servedRuns.ts), then its first run id. */
    starting?: (workflowId: string) => (firstRunId: string | null) => void;
  },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const input = { ...options.input, repo: resolve(options.input.repo) };
  const workflowId = options.workflowId ?? newWorkflowId(input.repo);
  const started = options.starting?.(workflowId);
  const handle = client.workflow.start(workflowType, {
    taskQueue: options.taskQueue,
    workflowId,
    // Otherwise Temporal lets a new run take the id of a closed one, which then hides behind it.
    ...(options.idMustBeNew ? { workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE } : {}),
    args: [input],
    // The run's tasks wait in this order where they queue (sandbox claims above all).
    ...(input.priority ? { priority: { priorityKey: input.priority } } : {}),
    staticSummary: `Debug ${basename(input.repo)}${input.attempts && input.attempts > 1 ? ` · ${input.attempts} attempts` : ''}${input.resumeFrom ? ` · resumes ${input.resumeFrom}` : ''}`,
    staticDetails: [`Repository: ${input.repo}`, `Goal: ${input.goal ?? 'make the failing tests pass'}`].join('\n'),
  });
  handle.then(
    (result) => started?.(result.firstExecutionRunId),
    () => started?.(null),
  );
  return handle;
}

/**
 * Starts the run that continues `resumeFrom`, under `workflowId` if given, else under the first
 * `<id>-resumed-N` (N from `firstNumber`) that no run has used, closed runs included: the
 * server's id-conflict answer moves on to the next number, so two resumes never collide.
 */
export async function startResumedRun(
  client: Client,
  options: {
    input: DebugInputJson;
    taskQueue: string;
    resumeFrom: string;
    firstNumber: number;
    workflowId?: string;
    starting?: (workflowId: string) => (firstRunId: string | null) => void;
  },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const start = (workflowId: string) =>
    startDebugRun(client, {
      input: options.input,
      taskQueue: options.taskQueue,
      workflowId,
      idMustBeNew: true,
      starting: options.starting,
    });
  if (options.workflowId) {
    return start(options.workflowId).catch((error: unknown) => {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw new Error(
          `The workflow id "${options.workflowId}" is already used by another run; choose another --id, or leave it out.`,
        );
      }
      throw error;
    });
  }
  const base = options.resumeFrom.replace(/-resumed-\d+$/, '');
  for (let number = options.firstNumber; ; number++) {
    try {
      return await start(`${base}-resumed-${number}`);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError) || number >= options.firstNumber + 1000) throw error;
    }
  }
}

export function webUiLink(uiUrl: string | null, config: Config, workflowId: string): string | null {
  if (!uiUrl) return null;
  return `${uiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export type { DebugReport };
