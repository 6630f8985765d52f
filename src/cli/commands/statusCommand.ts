// `status <id>`: a run's phase, iteration, budgets and last thought; a closed run's from its report
// when no worker answers.
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { Command } from 'commander';
import pc from 'picocolors';
import { modelTaskQueueFor, waitingForModelWorker } from '../../agent/modelEndpoint.js';
import type { DebugReport } from '../../agent/report.js';
import type { AttemptProgress, RunStatusView } from '../../agent/runState.js';
import { statusQuery } from '../../temporal/definitions.js';
import { withSession } from '../commandSupport.js';
import { awaitingApprovalText } from '../showRun.js';
import { printableAll } from '../terminalText.js';
import { hasWorker, queryClosedRun, type Session } from '../session.js';

/**
 * `status` of a closed run that no worker answers (its status query needs one to replay it): what
 * its report says instead, and how to see the rest.
 */
async function printClosedRunStatus(
  session: Session,
  description: WorkflowExecutionDescription,
  json: boolean,
): Promise<void> {
  const { workflowId, taskQueue } = description;
  const execution = description.status.name;
  // Only a completed run has a report; a failed, terminated or timed-out one ended without one.
  const untrusted =
    execution === 'COMPLETED'
      ? ((await session.client.workflow
          .getHandle(workflowId)
          .result()
          .catch(() => null)) as DebugReport | null)
      : null;
  const note = `the live status needs a running worker on task queue ${taskQueue} (\`durable-debugger worker\`)`;
  if (json) {
    const summary = untrusted && {
      status: untrusted.status,
      stopCondition: untrusted.stopCondition,
      stopDetail: untrusted.stopDetail,
      iterations: untrusted.iterations,
      toolCalls: untrusted.toolCalls.length + (untrusted.earlierToolCalls ?? 0),
      costUsd: untrusted.costUsd,
      costNote: untrusted.costNote,
      durationMs: untrusted.durationMs,
    };
    console.log(JSON.stringify({ workflowStatus: execution, report: summary, statusUnanswered: note }));
    return;
  }
  if (!untrusted) {
    console.log(`${pc.bold(workflowId)} · ${execution.toLowerCase()} · no report`);
    console.log(pc.dim(`No worker answers its status: ${note}.`));
    return;
  }
  const report = printableAll(untrusted);
  const cost = report.costUsd === null ? 'unknown' : `$${report.costUsd.toFixed(4)}`;
  const toolCalls = report.toolCalls.length + (report.earlierToolCalls ?? 0);
  console.log(
    `${pc.bold(workflowId)} · ${execution.toLowerCase()} · status ${report.status} ${pc.dim(`(${report.stopCondition}: ${report.stopDetail})`)}`,
  );
  console.log(
    `${report.iterations} iterations · ${toolCalls} tool calls · cost ${cost} · ${(report.durationMs / 1000).toFixed(0)} s`,
  );
  if (report.costNote) console.log(pc.dim(report.costNote));
  for (const attempt of report.attempts ?? [])
    console.log(
      `  attempt ${attempt.attempt} · ${attempt.status} · ${attempt.iterations} iterations · ${attempt.workflowId}`,
    );
  console.log(pc.dim(`From its report (\`durable-debugger result ${workflowId}\`); ${note}.`));
}

/**
 * The parent of parallel attempts: one line per attempt, live from each child's status query
 * (a closed parent's children are closed too: asked as closed runs).
 */
async function printAttemptsStatus(
  session: Session,
  description: WorkflowExecutionDescription,
  attempts: AttemptProgress[],
): Promise<void> {
  const execution = description.status.name;
  console.log(`${pc.bold(description.workflowId)} · ${execution.toLowerCase()} · ${attempts.length} attempts`);
  for (const attempt of attempts) {
    const query = () => session.client.workflow.getHandle(attempt.workflowId).query(statusQuery);
    const child = await (
      execution === 'RUNNING' ? query() : queryClosedRun(session, description.taskQueue, query)
    ).catch(() => null);
    const cost = child?.costUsd === null || child?.costUsd === undefined ? '' : ` · $${child.costUsd.toFixed(4)}`;
    const detail = child ? ` · phase ${child.phase} · iteration ${child.iteration}/${child.maxIterations}${cost}` : '';
    console.log(`  ${attempt.label} · ${attempt.status}${detail} · ${attempt.workflowId}`);
  }
}

/** What a running run waits for: the workflow's own word, or, at once, a model queue that nobody polls. */
async function modelWaitOf(session: Session, taskQueue: string, status: RunStatusView): Promise<string | null> {
  if (status.waitingFor) return status.waitingFor;
  if (status.phase !== 'thinking') return null;
  const endpoint = status.modelEndpoint;
  if (await hasWorker(session, modelTaskQueueFor(taskQueue, endpoint), 'activities')) return null;
  return waitingForModelWorker(endpoint, taskQueue);
}

export function statusCommand(program: Command): void {
  program
    .command('status')
    .description("a run's phase, iteration, budgets and last thought")
    .argument('<workflow-id>')
    .option('--json', 'print JSON')
    .action(async (workflowId: string, options: { json?: boolean }) =>
      withSession(async (session) => {
        const handle = session.client.workflow.getHandle(workflowId);
        const description = await handle.describe();
        const running = description.status.name === 'RUNNING';
        const untrusted = running
          ? await handle.query(statusQuery)
          : await queryClosedRun(session, description.taskQueue, () => handle.query(statusQuery));
        if (!untrusted) {
          await printClosedRunStatus(session, description, Boolean(options.json));
          return;
        }
        const untrustedWait = running ? await modelWaitOf(session, description.taskQueue, untrusted) : null;
        if (options.json) {
          console.log(
            JSON.stringify({ workflowStatus: description.status.name, ...untrusted, waitingFor: untrustedWait }),
          );
          return;
        }
        // What the run's input, the repository and the model wrote, made printable before our colours.
        const [status, waiting] = printableAll([untrusted, untrustedWait] as const);
        const cost = status.costUsd === null ? 'unknown' : `$${status.costUsd.toFixed(4)}`;
        if (status.attempts) {
          await printAttemptsStatus(session, description, status.attempts);
          return;
        }
        console.log(`${pc.bold(workflowId)} · ${description.status.name.toLowerCase()} · phase ${status.phase}`);
        if (waiting) console.log(pc.yellow(waiting));
        console.log(
          `iteration ${status.iteration}/${status.maxIterations} · ${status.toolCalls} tool calls · cost ${cost} · ${(status.elapsedMs / 1000).toFixed(0)} s`,
        );
        if (status.costNote) console.log(`${pc.dim(status.costNote)}`);
        if (status.lastThought) console.log(`${pc.cyan('last thought')} ${status.lastThought}`);
        if (status.awaitingApproval) console.log(awaitingApprovalText(workflowId, status.awaitingApproval.patch));
      }),
    );
}
