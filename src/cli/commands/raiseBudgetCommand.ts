// `raise-budget <id>`: raise the budgets of a running run (one paused on its budget goes on).
import type { Command } from 'commander';
import { describeBudgetChange } from '../../agent/budgetRaise.js';
import { raiseBudgetUpdate, statusQuery } from '../../temporal/definitions.js';
import { budgetOptions, noteUnsetBudgets, raiseAsked, type BudgetOptions } from '../budgetOptions.js';
import { exitCodeFor, follow, UsageError, withSession } from '../commandSupport.js';
import { foregroundWorkerFlag, workerForCommand } from '../backgroundWorker.js';
import { log } from '../session.js';

export function raiseBudgetCommand(program: Command): void {
  budgetOptions(
    program
      .command('raise-budget')
      .description(
        'raise the budgets of a running run, and follow it. A run paused on its budget (pauseOnBudgetMinutes) goes on where it stopped: ' +
          'whatever budget paused it is raised, by the amount given, else by 10 iterations or by its first amount. (An ended run: `resume`.)',
      )
      .argument('<workflow-id>')
      .option(...foregroundWorkerFlag),
  ).action(async (workflowId: string, options: BudgetOptions & { foregroundWorker?: boolean }) =>
    withSession(async (session) => {
      const asked = raiseAsked(options);
      const handle = session.client.workflow.getHandle(workflowId);
      const description = await handle.describe();
      const worker = await workerForCommand(session, options);
      try {
        if (description.status.name !== 'RUNNING') {
          throw new UsageError(
            `${workflowId} has ended (${description.status.name.toLowerCase()}): continue it in a new run with \`durable-debugger resume ${workflowId}\` (same --more-* options).`,
          );
        }
        const status = await handle.query(statusQuery);
        if (status.attempts) {
          throw new UsageError(
            `${workflowId} runs ${status.attempts.length} attempts, each with its own budget: raise the budget of one of them (${status.attempts.map((entry) => entry.workflowId).join(', ')}).`,
          );
        }
        const raised = await handle.executeUpdate(raiseBudgetUpdate, { args: [asked] }).catch((error: Error) => {
          // The validator's refusal is the cause; "Workflow Update failed" alone says nothing.
          throw new UsageError(`${workflowId}: ${(error.cause as Error | undefined)?.message ?? error.message}`);
        });
        noteUnsetBudgets(asked, status.budgets);
        log(`Raised the budget of ${workflowId}: ${describeBudgetChange(status.budgets, raised.budgets)}.`);
        process.exitCode = exitCodeFor(await follow(session, workflowId, Boolean(options.json)));
      } finally {
        await worker.shutdown();
      }
    }),
  );
}
