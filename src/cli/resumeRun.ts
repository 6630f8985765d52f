// Resuming ended runs in new, linked runs: a single run from its saved state with its spent budget
// raised, or a parent of parallel attempts with each unfinished attempt going on. Used by `resume`
// and by the MCP server's resume tool.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import {
  applyRaise,
  budgetUsage,
  completeRaise,
  describeBudgetChange,
  type BudgetRaise,
} from '../agent/budgetRaise.js';
import type { AttemptProgress } from '../agent/runState.js';
import { savedStateQuery } from '../temporal/definitions.js';
import { noteUnsetBudgets } from './budgetOptions.js';
import { UsageError } from './commandSupport.js';
import { endpointOfSession, log, servedBySession, type Session } from './session.js';

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
  const { startResumedRun } = await import('../client.js');
  const next = await startResumedRun(session.client, {
    input: {
      ...original,
      resumeFrom: workflowId,
      continueAsNewEvery: original.continueAsNewEvery,
      budgets,
      // The new run is answered with the settings of whoever resumes it, and served by its worker.
      modelEndpoint: (await endpointOfSession(session)).modelEndpoint,
      ...servedBySession(session).route,
    },
    starting: servedBySession(session).starting,
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
  const { startResumedRun } = await import('../client.js');
  const next = await startResumedRun(session.client, {
    input: {
      ...original,
      resumeFrom: workflowId,
      modelEndpoint: (await endpointOfSession(session)).modelEndpoint,
      ...servedBySession(session).route,
    },
    starting: servedBySession(session).starting,
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
