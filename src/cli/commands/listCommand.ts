// `list`: recent runs with their status, iterations and cost (from search attributes).
import type { Command } from 'commander';
import { searchAttributes, workflowType } from '../../temporal/definitions.js';
import { positiveInteger, withSession } from '../commandSupport.js';

export function listCommand(program: Command): void {
  program
    .command('list')
    .description('recent runs with their status, iterations and cost')
    .option('--limit <n>', 'how many', positiveInteger, 20)
    .option('--json', 'print JSON lines')
    .action(async (options: { limit: number; json?: boolean }) =>
      withSession(async (session) => {
        let count = 0;
        for await (const run of session.client.workflow.list({ query: `WorkflowType = "${workflowType}"` })) {
          if (count++ >= options.limit) break;
          const attributes = run.searchAttributes as Record<string, unknown[] | undefined>;
          const first = (key: { name: string }) => attributes[key.name]?.[0];
          const costUsd = first(searchAttributes.costUsd);
          const row = {
            workflowId: run.workflowId,
            status: String(first(searchAttributes.status) ?? run.status.name.toLowerCase()),
            execution: run.status.name.toLowerCase(),
            iterations: Number(first(searchAttributes.iterations) ?? 0),
            costUsd: costUsd === undefined ? null : Number(costUsd),
            started: run.startTime.toISOString(),
          };
          if (options.json) console.log(JSON.stringify(row));
          else {
            const cost = row.costUsd === null ? '-' : `$${row.costUsd.toFixed(4)}`;
            console.log(
              `${row.started.slice(0, 19).replace('T', ' ')}  ${row.status.padEnd(16)} ${String(row.iterations).padStart(3)} it  ${cost.padStart(9)}  ${row.workflowId}`,
            );
          }
        }
        if (count === 0 && !options.json) console.log('No runs yet. Start one with `durable-debugger run <repo>`.');
      }),
    );
}
