// Connecting to Temporal and starting runs: shared by our CLI, the demo, tests and benchmarks.
import { Client, Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { basename, resolve } from 'node:path';
import type { DebugInputJson } from './agent/input.js';
import type { DebugReport } from './agent/report.js';
import type { Config } from './config.js';
import { workflowType } from './temporal/definitions.js';

export async function connectClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

export function newWorkflowId(repo: string): string {
  const name = basename(resolve(repo)).replace(/[^a-zA-Z0-9_.-]+/g, '-');
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `debug-${name}-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

export async function startDebugRun(
  client: Client,
  options: { input: DebugInputJson; taskQueue: string; workflowId?: string },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const input = { ...options.input, repo: resolve(options.input.repo) };
  const workflowId = options.workflowId ?? newWorkflowId(input.repo);
  return client.workflow.start(workflowType, {
    taskQueue: options.taskQueue,
    workflowId,
    args: [input],
    staticSummary: `Debug ${basename(input.repo)}${input.attempts && input.attempts > 1 ? ` · ${input.attempts} attempts` : ''}`,
    staticDetails: [`Repository: ${input.repo}`, `Goal: ${input.goal ?? 'make the failing tests pass'}`].join('\n'),
  });
}

export function webUiLink(uiUrl: string | null, config: Config, workflowId: string): string | null {
  if (!uiUrl) return null;
  return `${uiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export type { DebugReport };
