// Recent runs with their status, iterations and cost, from search attributes: `list` and MCP's list_runs.
import { searchAttributes, workflowType } from '../temporal/definitions.js';
import type { Session } from './session.js';

export interface RunRow {
  workflowId: string;
  status: string;
  execution: string;
  iterations: number;
  costUsd: number | null;
  started: string;
}

export async function recentRuns(session: Session, limit: number): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  for await (const run of session.client.workflow.list({ query: `WorkflowType = "${workflowType}"` })) {
    if (rows.length >= limit) break;
    const attributes = run.searchAttributes as Record<string, unknown[] | undefined>;
    const first = (key: { name: string }) => attributes[key.name]?.[0];
    const costUsd = first(searchAttributes.costUsd);
    rows.push({
      workflowId: run.workflowId,
      status: String(first(searchAttributes.status) ?? run.status.name.toLowerCase()),
      execution: run.status.name.toLowerCase(),
      iterations: Number(first(searchAttributes.iterations) ?? 0),
      costUsd: costUsd === undefined ? null : Number(costUsd),
      started: run.startTime.toISOString(),
    });
  }
  return rows;
}
