// `resume <id>`: go on from where a run was interrupted or ended, in a new linked run.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { Command } from 'commander';
import {
  applyRaise,
  budgetUsage,
  completeRaise,
  describeBudgetChange,
  type BudgetRaise,
} from '../../agent/budgetRaise.js';
import type { AttemptProgress } from '../../agent/runState.js';
import { startResumedRun } from '../../client.js';
import { savedStateQuery, statusQuery } from '../../temporal/definitions.js';
import { budgetOptions, noteUnsetBudgets, raiseAsked, type BudgetOptions } from '../budgetOptions.js';
import { exitCodeFor, follow, providerOption, UsageError, withSession } from '../commandSupport.js';
import { endpointOfSession, log, workerForThisCommand, type Session } from '../session.js';

/** Starts the run that resumes an ended single run, its spent budget raised; returns its id. */
export async function resumeSingleRun(
  session: Session,
  workflowId: string,
  description: WorkflowExecutionDescription,
  asked: BudgetRaise,
  id: string | undefined,
): Promise<string> {
  const handle = session.client.workflow.getHandle(workflowId);
  const { input: original, state: earlier } = await handle.query(savedStateQuery);
  if (!earlier) throw new UsageError(`${workflowId} has no saved state to resume.`);
  await noteParentStillRunning(session, description);
  // The new run goes on counting time from where this one stopped (see resumeEarlierRun).
  const usage = budgetUsage(earlier, (description.closeTime?.getTime() ?? Date.now()) - earlier.startedAt);
  const { budgets } = applyRaise(
    earlier.budgets,
    usage,
    completeRaise(asked, earlier.budgets, usage, original.budgets),
  );
  noteUnsetBudgets(asked, earlier.budgets);
  const next = await startResumedRun(session.client, {
    input: {
      ...original,
      resumeFrom: workflowId,
      continueAsNewEvery: original.continueAsNewEvery,
      budgets,
      // The new run is answered with the settings of whoever resumes it.
      modelEndpoint: (await endpointOfSession(session)).modelEndpoint,
    },
    taskQueue: session.config.taskQueue,
    resumeFrom: workflowId,
    firstNumber: earlier.workflowRuns + 1,
    workflowId: id,
  });
  log(`Continuing ${workflowId} in a new run, ${next.workflowId}: ${describeBudgetChange(earlier.budgets, budgets)}.`);
  return next.workflowId;
}

/**
 * Starts the parent that resumes an interrupted parent of parallel attempts (each attempt keeps
 * its own budget share: a raise is for one attempt, resumed on its own); returns its id.
 */
export async function resumeAttempts(
  session: Session,
  workflowId: string,
  execution: string,
  attempts: AttemptProgress[],
  asked: BudgetRaise,
  id: string | undefined,
): Promise<string> {
  const ids = attempts.map((entry) => entry.workflowId).join(', ');
  if (Object.keys(asked).length > 0) {
    throw new UsageError(
      `${workflowId} ran ${attempts.length} attempts, each with its own share of the budgets: to give one more, resume that attempt with the --more-* options (${ids}).`,
    );
  }
  if (execution === 'COMPLETED') {
    throw new UsageError(
      `${workflowId} ended with a report: every attempt finished, so nothing is left to resume. To give one attempt more budget, resume that attempt (${ids}).`,
    );
  }
  const { input: original } = await session.client.workflow.getHandle(workflowId).query(savedStateQuery);
  const next = await startResumedRun(session.client, {
    input: { ...original, resumeFrom: workflowId, modelEndpoint: (await endpointOfSession(session)).modelEndpoint },
    taskQueue: session.config.taskQueue,
    resumeFrom: workflowId,
    firstNumber: 2,
    workflowId: id,
  });
  log(
    `Resuming ${workflowId} (${execution.toLowerCase()}) in a new run, ${next.workflowId}: its finished attempts are kept, its unfinished ones go on from where they were.`,
  );
  return next.workflowId;
}

/** Resuming an attempt on its own while its parent runs: the parent has counted it as ended already. */
async function noteParentStillRunning(session: Session, description: WorkflowExecutionDescription): Promise<void> {
  const parent = description.parentExecution?.workflowId;
  if (!parent) return;
  const running =
    (
      await session.client.workflow
        .getHandle(parent)
        .describe()
        .catch(() => null)
    )?.status.name === 'RUNNING';
  if (running)
    log(
      `Note: ${description.workflowId} is an attempt of ${parent}, which is still running and has counted this attempt as ended: the new run goes on by itself, outside ${parent}'s report.`,
    );
}

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
      .option('--id <workflow-id>', 'workflow id of the new run'),
  ).action(async (workflowId: string, options: BudgetOptions & { id?: string }) =>
    withSession(async (session) => {
      const asked = raiseAsked(options);
      const handle = session.client.workflow.getHandle(workflowId);
      const description = await handle.describe();
      const worker = await workerForThisCommand(session);
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
