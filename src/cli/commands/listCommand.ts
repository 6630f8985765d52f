// `list`: recent runs with their status, iterations and cost (from search attributes).
import type { Command } from 'commander';
import { positiveInteger, withSession } from '../commandSupport.js';
import { recentRuns } from '../recentRuns.js';

export function listCommand(program: Command): void {
  program
    .command('list')
    .description('recent runs with their status, iterations and cost')
    .option('--limit <n>', 'how many', positiveInteger, 20)
    .option('--json', 'print JSON lines')
    .action(async (options: { limit: number; json?: boolean }) =>
      withSession(async (session) => {
        const rows = await recentRuns(session, options.limit);
        for (const row of rows) {
          if (options.json) console.log(JSON.stringify(row));
          else {
            const cost = row.costUsd === null ? '-' : `$${row.costUsd.toFixed(4)}`;
            console.log(
              `${row.started.slice(0, 19).replace('T', ' ')}  ${row.status.padEnd(16)} ${String(row.iterations).padStart(3)} it  ${cost.padStart(9)}  ${row.workflowId}`,
            );
          }
        }
        if (rows.length === 0 && !options.json)
          console.log('No runs yet. Start one with `durable-debugger run <repo>`.');
      }),
    );
}
