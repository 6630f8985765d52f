// `resume <id>`: go on from where a run was interrupted or ended, in a new linked run.
import type { Command } from 'commander';
import { statusQuery } from '../../temporal/definitions.js';
import { budgetOptions, raiseAsked, type BudgetOptions } from '../budgetOptions.js';
import { resumeAttempts, resumeSingleRun } from '../resumeRun.js';
import { exitCodeFor, follow, providerOption, UsageError, withSession } from '../commandSupport.js';
import { foregroundWorkerFlag, workerForCommand } from '../backgroundWorker.js';
import { log } from '../session.js';

export function resumeCommand(program: Command): void {
  budgetOptions(
    providerOption(program.command('resume'))
      .description(
        'go on from where a run was interrupted or ended. An ended run (out of budget, stopped, failed, terminated, timed out) ' +
          'goes on in a new, linked run (<id>-resumed-N) from its saved state: its conversation, workspace and usage. ' +
          'A parent of parallel attempts keeps each finished attempt as it is and resumes each unfinished one from its own saved state. ' +
          "A running run whose worker is gone goes on in this command's worker. " +
          'Whatever budget stopped a single run is raised: by the amount given, else by 10 iterations or by the amount of tokens, ' +
          'dollars or minutes the run started with. Budgets the run never had stay unset. (A run paused on its budget: `raise-budget`.)',
      )
      .argument('<workflow-id>')
      .option('--id <workflow-id>', 'workflow id of the new run')
      .option(...foregroundWorkerFlag),
  ).action(async (workflowId: string, options: BudgetOptions & { id?: string; foregroundWorker?: boolean }) =>
    withSession(async (session) => {
      const asked = raiseAsked(options);
      const handle = session.client.workflow.getHandle(workflowId);
      const description = await handle.describe();
      const worker = await workerForCommand(session, options);
      try {
        // A closed run answers queries by replaying on a worker: this command's, at least.
        const status = await handle.query(statusQuery).catch(() => null);
        if (description.status.name === 'RUNNING') {
          if (status?.phase === 'paused') {
            throw new UsageError(
              `${workflowId} is paused on its budget, not ended: raise it with \`durable-debugger raise-budget ${workflowId}\` (same --more-* options).`,
            );
          }
          log(
            `${workflowId} is still running (phase ${status?.phase ?? 'unknown'}): following it; this command's worker serves it if its own is gone.`,
          );
          process.exitCode = exitCodeFor(await follow(session, workflowId, Boolean(options.json)));
          return;
        }
        const next = status?.attempts
          ? await resumeAttempts(session, workflowId, description.status.name, status.attempts, asked, options.id)
          : await resumeSingleRun(session, workflowId, description, asked, options.id);
        process.exitCode = exitCodeFor(await follow(session, next, Boolean(options.json)));
      } finally {
        await worker.shutdown();
      }
    }),
  );
}
