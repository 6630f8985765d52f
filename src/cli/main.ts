// The durable-debugger command.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { Command, InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import { applyRaise, budgetUsage, completeRaise, describeBudgetChange, type BudgetRaise } from '../agent/budgetRaise.js';
import type { Budgets, DebugInputJson } from '../agent/input.js';
import type { DebugReport } from '../agent/report.js';
import { startDebugRun, startResumedRun, webUiLink } from '../client.js';
import { loadConfig } from '../config.js';
import { conservativePriceNote, hasListedPrice } from '../model/pricing.js';
import { reapOrphans } from '../reaper.js';
import { listEnvironmentImages, pruneEnvironmentImages } from '../sandbox/environmentImages.js';
import { connectDocker } from '../sandbox/container.js';
import { ensureTemporalServer, type TemporalServer } from '../temporal/embeddedServer.js';
import { startWorker, type RunningWorker, type WorkerOptions } from '../worker.js';
import { modelTaskQueueFor, scriptedModelEndpoint, waitingForModelWorker } from '../agent/modelEndpoint.js';
import type { AttemptProgress, RunStatusView } from '../agent/runState.js';
import { startScriptedModel, type ScriptedModel } from '../demo/scriptedModel.js';
import {
  approveUpdate,
  hintSignal,
  raiseBudgetUpdate,
  rejectUpdate,
  savedStateQuery,
  searchAttributes,
  statusQuery,
  stopSignal,
  workflowType,
  type ApprovalAnswer,
} from '../temporal/definitions.js';
import { runDemo } from './demo.js';
import { createFixBranch, FixBranchRefused } from './fixBranch.js';
import { awaitingApprovalText, followRun } from './follow.js';
import { formatReport, printFinalReport, wholePatch } from './printReport.js';
import { endpointOfSession, hasWorker, log, openSession, queryClosedRun, workerForThisCommand, type Session } from './session.js';

class UsageError extends Error {}

function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a positive number');
  return number;
}

function positiveInteger(value: string): number {
  const number = positiveNumber(value);
  if (!Number.isInteger(number)) throw new InvalidArgumentError('expected a positive whole number');
  return number;
}

interface RunOptions {
  goal?: string;
  testCommand?: string;
  model?: string;
  maxIterations?: number;
  maxTokens?: number;
  maxCost?: number;
  maxMinutes?: number;
  commandTimeout?: number;
  allowTestEdits?: boolean;
  allowCommands?: boolean;
  envImage?: string;
  setup?: string[];
  id?: string;
  json?: boolean;
  apply?: boolean;
  attempts?: number;
  firstWins?: boolean;
  approve?: boolean;
  approvalTimeout?: number;
}

function runOptions(command: Command): Command {
  return command
    .option('--goal <text>', 'what to achieve, in words (default: make the failing tests pass)')
    .option('--test-command <command>', 'the command that runs the tests (default: detected)')
    .option('--model <id>', 'Claude model id (default: ANTHROPIC_MODEL or claude-sonnet-4-6)')
    .option('--max-iterations <n>', 'iteration budget (default 30)', positiveInteger)
    .option('--max-tokens <n>', 'token budget, input plus output', positiveInteger)
    .option('--max-cost <usd>', 'cost budget in USD (a model without a listed price counts at the highest listed price)', positiveNumber)
    .option('--max-minutes <n>', 'wall-clock budget', positiveNumber)
    .option('--command-timeout <seconds>', 'timeout of each command in the sandbox (default 120)', positiveInteger)
    .option('--allow-test-edits', 'let the agent change test files')
    .option('--allow-commands', 'give the agent the run_command tool (any shell command in the sandbox)')
    .option('--attempts <n>', 'parallel attempts, each a child run with a share of the budgets; the smallest verified fix is kept (default 1)', positiveInteger)
    .option('--first-wins', 'with --attempts: cancel the other attempts as soon as one fix is verified')
    .option('--approve', 'after a verified fix, wait for `approve <id>` or `reject <id> "feedback"` before ending')
    .option('--approval-timeout <minutes>', 'with --approve: end as not_approved after this long without an answer', positiveNumber)
    .option('--id <workflow-id>', 'the workflow id (default: debug-<repo>-<time>)')
    .option('--env-image <image>', 'the image the sandbox runs (instead of building one from the repository’s manifests)')
    .option('--setup <command>', 'a setup command run once with network to make the environment (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--json', 'print JSON lines instead of text');
}

/** Puts a fixed run's patch on the branch durable-debugger/<id> of its git repository. */
function applyFix(report: DebugReport, repo: string, json: boolean): void {
  try {
    const created = createFixBranch(repo, report);
    if (json) console.log(JSON.stringify({ applied: created }));
    else log(`Committed the fix as ${created.commit.slice(0, 12)} on the new branch ${pc.bold(created.branch)} (your checkout is unchanged): git switch ${created.branch}`);
  } catch (error) {
    if (error instanceof FixBranchRefused) throw new UsageError(`Not applied, nothing changed. ${error.message}`);
    throw error;
  }
}

function inputFrom(repo: string, options: RunOptions): DebugInputJson {
  if (!existsSync(repo)) throw new UsageError(`The repository "${repo}" does not exist.`);
  const budgets = {
    ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}),
    ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
    ...(options.maxCost ? { maxCostUsd: options.maxCost } : {}),
    ...(options.maxMinutes ? { maxMinutes: options.maxMinutes } : {}),
  };
  return {
    repo,
    ...(options.goal ? { goal: options.goal } : {}),
    ...(options.testCommand ? { testCommand: options.testCommand } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(Object.keys(budgets).length ? { budgets } : {}),
    ...(options.commandTimeout ? { sandbox: { commandTimeoutSeconds: options.commandTimeout } } : {}),
    ...(options.allowTestEdits ? { allowTestEdits: true } : {}),
    ...(options.allowCommands ? { allowCommands: true } : {}),
    ...(options.attempts ? { attempts: options.attempts } : {}),
    ...(options.firstWins ? { firstWins: true } : {}),
    ...(options.approve ? { approve: true } : {}),
    ...(options.approvalTimeout ? { approvalTimeoutMinutes: options.approvalTimeout } : {}),
    ...(options.envImage || options.setup?.length
      ? { environment: { ...(options.envImage ? { image: options.envImage } : {}), ...(options.setup?.length ? { setup: options.setup } : {}) } }
      : {}),
  };
}

/** A cost budget counts a model without a listed price at a conservative price: say so before the run starts. */
function noteConservativePrice(input: DebugInputJson, session: Session): void {
  const model = input.model ?? session.config.anthropic.model;
  if (input.budgets?.maxCostUsd !== undefined && !hasListedPrice(model)) {
    log(`Note: ${conservativePriceNote(model)}, unless the API answers as a model with a listed price.`);
  }
}

async function follow(session: Session, workflowId: string, json: boolean): Promise<DebugReport> {
  const handle = session.client.workflow.getHandle(workflowId);
  const report = await followRun(handle, { json, queryClosed: (taskQueue, query) => queryClosedRun(session, taskQueue, query) });
  await printFinalReport(session.config, report, { webUi: webUiLink(session.server.uiUrl, session.config, workflowId), json });
  return report;
}

function exitCodeFor(report: DebugReport): number {
  return report.status === 'fixed' || report.status === 'no_failing_tests' ? 0 : 1;
}

async function withSession<T>(work: (session: Session) => Promise<T>): Promise<T> {
  const session = await openSession();
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

/** Sends approve/reject; a refusal by the run (not awaiting approval, no feedback) is the user's to fix. */
async function answerApproval(session: Session, workflowId: string, send: () => Promise<ApprovalAnswer>): Promise<void> {
  const status = await session.client.workflow.getHandle(workflowId).query(statusQuery);
  if (!status.awaitingApproval) {
    throw new UsageError(`${workflowId} is not awaiting approval (phase ${status.phase}): only a verified fix of a run started with --approve waits for an answer.`);
  }
  try {
    await send();
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new UsageError(`${workflowId} refused the answer: ${cause ?? (error instanceof Error ? error.message : String(error))}`);
  }
}

/**
 * The parent of parallel attempts: one line per attempt, live from each child's status query
 * (a closed parent's children are closed too: asked as closed runs).
 */
async function printAttemptsStatus(session: Session, description: WorkflowExecutionDescription, attempts: AttemptProgress[]): Promise<void> {
  const execution = description.status.name;
  console.log(`${pc.bold(description.workflowId)} · ${execution.toLowerCase()} · ${attempts.length} attempts`);
  for (const attempt of attempts) {
    const query = () => session.client.workflow.getHandle(attempt.workflowId).query(statusQuery);
    const child = await (execution === 'RUNNING' ? query() : queryClosedRun(session, description.taskQueue, query)).catch(() => null);
    const cost = child?.costUsd === null || child?.costUsd === undefined ? '' : ` · $${child.costUsd.toFixed(4)}`;
    const detail = child ? ` · phase ${child.phase} · iteration ${child.iteration}/${child.maxIterations}${cost}` : '';
    console.log(`  ${attempt.label} · ${attempt.status}${detail} · ${attempt.workflowId}`);
  }
}

const program = new Command()
  .name('durable-debugger')
  .description(
    'A self-debugging agent that finds and fixes the bug behind failing tests, made durable with Temporal.\n' +
      'Without TEMPORAL_ADDRESS, commands use an embedded Temporal dev server (Web UI on http://localhost:8233).',
  )
  .showHelpAfterError()
  .version(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')).version as string);

runOptions(program.command('run').description('start a run and follow it to the end').argument('<repo>', 'repository with failing tests'))
  .option('--apply', 'when fixed, commit the patch on a new branch durable-debugger/<id> of the repository (a git repository)')
  .action(
  async (repo: string, options: RunOptions) =>
    withSession(async (session) => {
      const input = { ...inputFrom(repo, options), ...endpointOfSession(session) };
      await refuseWhenNobodyServesTheModel(session, input.modelEndpoint);
      noteConservativePrice(input, session);
      const worker = await workerForThisCommand(session);
      try {
        const handle = await startDebugRun(session.client, { input, taskQueue: session.config.taskQueue, workflowId: options.id });
        if (!options.json) console.log(`${pc.bold('Run:')} ${handle.workflowId}`);
        const report = await follow(session, handle.workflowId, Boolean(options.json));
        process.exitCode = exitCodeFor(report);
        if (options.apply && report.status === 'fixed') applyFix(report, repo, Boolean(options.json));
      } finally {
        await worker.shutdown();
      }
    }),
);

runOptions(program.command('start').description('start a run, print its workflow id and return').argument('<repo>', 'repository with failing tests')).action(
  async (repo: string, options: RunOptions) =>
    withSession(async (session) => {
      const input = { ...inputFrom(repo, options), ...endpointOfSession(session) };
      noteConservativePrice(input, session);
      const handle = await startDebugRun(session.client, { input, taskQueue: session.config.taskQueue, workflowId: options.id });
      console.log(handle.workflowId);
      if (!(await hasWorker(session, session.config.taskQueue))) {
        log('No worker serves the task queue yet: the run starts when one does (`durable-debugger worker` or `dev`).');
      } else if (!(await hasWorker(session, modelTaskQueueFor(session.config.taskQueue, input.modelEndpoint), 'activities'))) {
        log(`No worker answers its model calls yet: ${waitingForModelWorker(input.modelEndpoint, session.config.taskQueue)}.`);
      }
    }),
);

program
  .command('watch')
  .description('follow a run live (reattaches to a run started elsewhere)')
  .argument('<workflow-id>')
  .option('--json', 'print JSON lines')
  .action(async (workflowId: string, options: { json?: boolean }) =>
    withSession(async (session) => {
      process.exitCode = exitCodeFor(await follow(session, workflowId, Boolean(options.json)));
    }),
  );

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
      const status = running ? await handle.query(statusQuery) : await queryClosedRun(session, description.taskQueue, () => handle.query(statusQuery));
      if (!status) {
        await printClosedRunStatus(session, description, Boolean(options.json));
        return;
      }
      const cost = status.costUsd === null ? 'unknown' : `$${status.costUsd.toFixed(4)}`;
      const waiting = running ? await modelWaitOf(session, description.taskQueue, status) : null;
      if (options.json) {
        console.log(JSON.stringify({ workflowStatus: description.status.name, ...status, waitingFor: waiting }));
        return;
      }
      if (status.attempts) {
        await printAttemptsStatus(session, description, status.attempts);
        return;
      }
      console.log(`${pc.bold(workflowId)} · ${description.status.name.toLowerCase()} · phase ${status.phase}`);
      if (waiting) console.log(pc.yellow(waiting));
      console.log(`iteration ${status.iteration}/${status.maxIterations} · ${status.toolCalls} tool calls · cost ${cost} · ${(status.elapsedMs / 1000).toFixed(0)} s`);
      if (status.costNote) console.log(`${pc.dim(status.costNote)}`);
      if (status.lastThought) console.log(`${pc.cyan('last thought')} ${status.lastThought}`);
      if (status.awaitingApproval) console.log(awaitingApprovalText(workflowId, status.awaitingApproval.patch));
    }),
  );

/**
 * `status` of a closed run that no worker answers (its status query needs one to replay it): what
 * its report says instead, and how to see the rest.
 */
async function printClosedRunStatus(session: Session, description: WorkflowExecutionDescription, json: boolean): Promise<void> {
  const { workflowId, taskQueue } = description;
  const execution = description.status.name;
  // Only a completed run has a report; a failed, terminated or timed-out one ended without one.
  const report = execution === 'COMPLETED' ? ((await session.client.workflow.getHandle(workflowId).result().catch(() => null)) as DebugReport | null) : null;
  const note = `the live status needs a running worker on task queue ${taskQueue} (\`durable-debugger worker\`)`;
  if (json) {
    const summary = report && {
      status: report.status,
      stopCondition: report.stopCondition,
      stopDetail: report.stopDetail,
      iterations: report.iterations,
      toolCalls: report.toolCalls.length + (report.earlierToolCalls ?? 0),
      costUsd: report.costUsd,
      costNote: report.costNote,
      durationMs: report.durationMs,
    };
    console.log(JSON.stringify({ workflowStatus: execution, report: summary, statusUnanswered: note }));
    return;
  }
  if (!report) {
    console.log(`${pc.bold(workflowId)} · ${execution.toLowerCase()} · no report`);
    console.log(pc.dim(`No worker answers its status: ${note}.`));
    return;
  }
  const cost = report.costUsd === null ? 'unknown' : `$${report.costUsd.toFixed(4)}`;
  const toolCalls = report.toolCalls.length + (report.earlierToolCalls ?? 0);
  console.log(`${pc.bold(workflowId)} · ${execution.toLowerCase()} · status ${report.status} ${pc.dim(`(${report.stopCondition}: ${report.stopDetail})`)}`);
  console.log(`${report.iterations} iterations · ${toolCalls} tool calls · cost ${cost} · ${(report.durationMs / 1000).toFixed(0)} s`);
  if (report.costNote) console.log(pc.dim(report.costNote));
  for (const attempt of report.attempts ?? []) console.log(`  attempt ${attempt.attempt} · ${attempt.status} · ${attempt.iterations} iterations · ${attempt.workflowId}`);
  console.log(pc.dim(`From its report (\`durable-debugger result ${workflowId}\`); ${note}.`));
}

program
  .command('approve')
  .description('approve the verified fix of a run that awaits approval (started with --approve)')
  .argument('<workflow-id>')
  .action(async (workflowId: string) =>
    withSession(async (session) => {
      await answerApproval(session, workflowId, () => session.client.workflow.getHandle(workflowId).executeUpdate(approveUpdate));
      console.log(`Approved: ${workflowId} ends as fixed.`);
    }),
  );

program
  .command('reject')
  .description('reject the verified fix of a run that awaits approval: the model reads your feedback and goes on')
  .argument('<workflow-id>')
  .argument('<feedback...>', 'what to change, in words (the model reads it as the reviewer\'s)')
  .action(async (workflowId: string, words: string[]) =>
    withSession(async (session) => {
      const feedback = words.join(' ').trim();
      if (!feedback) throw new UsageError('Say what to change: reject <id> "feedback".');
      await answerApproval(session, workflowId, () =>
        session.client.workflow.getHandle(workflowId).executeUpdate(rejectUpdate, { args: [feedback] }),
      );
      console.log(`Rejected: ${workflowId} goes on with your feedback.`);
    }),
  );

program
  .command('result')
  .description("a finished run's report (waits for a running one)")
  .argument('<workflow-id>')
  .option('--patch', 'print only the patch (for `git apply`)')
  .option('--json', 'print the report as JSON')
  .action(async (workflowId: string, options: { patch?: boolean; json?: boolean }) =>
    withSession(async (session) => {
      const report = (await session.client.workflow.getHandle(workflowId).result()) as DebugReport;
      if (options.patch) process.stdout.write(await wholePatch(session.config, report));
      else if (options.json) console.log(JSON.stringify(report, null, 2));
      else console.log(formatReport(report, { webUi: webUiLink(session.server.uiUrl, session.config, workflowId) }));
      process.exitCode = exitCodeFor(report);
    }),
  );

program
  .command('apply')
  .description("commit a fixed run's patch on a new branch durable-debugger/<id> of its git repository")
  .argument('<workflow-id>')
  .option('--repo <path>', 'the repository to apply it to (default: the run\'s repository)')
  .option('--json', 'print JSON')
  .action(async (workflowId: string, options: { repo?: string; json?: boolean }) =>
    withSession(async (session) => {
      const report = (await session.client.workflow.getHandle(workflowId).result()) as DebugReport;
      applyFix(report, options.repo ?? report.repository, Boolean(options.json));
    }),
  );

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
          console.log(`${row.started.slice(0, 19).replace('T', ' ')}  ${row.status.padEnd(16)} ${String(row.iterations).padStart(3)} it  ${cost.padStart(9)}  ${row.workflowId}`);
        }
      }
      if (count === 0 && !options.json) console.log('No runs yet. Start one with `durable-debugger run <repo>`.');
    }),
  );

program
  .command('hint')
  .description('tell a running agent something; it reads it at its next iteration')
  .argument('<workflow-id>')
  .argument('<text...>')
  .action(async (workflowId: string, words: string[]) =>
    withSession(async (session) => {
      await session.client.workflow.getHandle(workflowId).signal(hintSignal, words.join(' '));
      console.log('Hint sent.');
    }),
  );

program
  .command('stop')
  .description('ask a run to stop gracefully (it reports and cleans up)')
  .argument('<workflow-id>')
  .argument('[reason...]')
  .action(async (workflowId: string, reason: string[]) =>
    withSession(async (session) => {
      await session.client.workflow.getHandle(workflowId).signal(stopSignal, reason.join(' ') || 'stopped by the user');
      console.log('Stop requested.');
    }),
  );

interface BudgetOptions {
  moreIterations?: number;
  moreTokens?: number;
  moreCost?: number;
  moreMinutes?: number;
  json?: boolean;
}

function budgetOptions(command: Command): Command {
  return command
    .option('--more-iterations <n>', 'iterations to add', positiveInteger)
    .option('--more-tokens <n>', 'tokens to add to the token budget', positiveInteger)
    .option('--more-cost <usd>', 'USD to add to the cost budget', positiveNumber)
    .option('--more-minutes <n>', 'minutes to add to the time budget', positiveNumber)
    .option('--json', 'print JSON lines');
}

function raiseAsked(options: BudgetOptions): BudgetRaise {
  return {
    ...(options.moreIterations ? { moreIterations: options.moreIterations } : {}),
    ...(options.moreTokens ? { moreTokens: options.moreTokens } : {}),
    ...(options.moreCost ? { moreCostUsd: options.moreCost } : {}),
    ...(options.moreMinutes ? { moreMinutes: options.moreMinutes } : {}),
  };
}

budgetOptions(
  program
    .command('resume')
    .description(
      'go on from where a run was interrupted or ended. An ended run (out of budget, stopped, failed, terminated, timed out) ' +
        'goes on in a new, linked run (<id>-resumed-N) from its saved state: its conversation, workspace and usage. ' +
        'A parent of parallel attempts keeps each finished attempt as it is and resumes each unfinished one from its own saved state. ' +
        'A running run whose worker is gone goes on in this command\'s worker. ' +
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
          throw new UsageError(`${workflowId} is paused on its budget, not ended: raise it with \`durable-debugger raise-budget ${workflowId}\` (same --more-* options).`);
        }
        log(`${workflowId} is still running (phase ${status?.phase ?? 'unknown'}): following it; this command's worker serves it if its own is gone.`);
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

/** Starts the run that resumes an ended single run, its spent budget raised; returns its id. */
async function resumeSingleRun(
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
  const { budgets } = applyRaise(earlier.budgets, usage, completeRaise(asked, earlier.budgets, usage, original.budgets));
  noteUnsetBudgets(asked, earlier.budgets);
  const next = await startResumedRun(session.client, {
    input: {
      ...original,
      resumeFrom: workflowId,
      continueAsNewEvery: original.continueAsNewEvery,
      budgets,
      // The new run is answered with the settings of whoever resumes it.
      modelEndpoint: endpointOfSession(session).modelEndpoint,
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
async function resumeAttempts(
  session: Session,
  workflowId: string,
  execution: string,
  attempts: AttemptProgress[],
  asked: BudgetRaise,
  id: string | undefined,
): Promise<string> {
  const ids = attempts.map((entry) => entry.workflowId).join(', ');
  if (Object.keys(asked).length > 0) {
    throw new UsageError(`${workflowId} ran ${attempts.length} attempts, each with its own share of the budgets: to give one more, resume that attempt with the --more-* options (${ids}).`);
  }
  if (execution === 'COMPLETED') {
    throw new UsageError(`${workflowId} ended with a report: every attempt finished, so nothing is left to resume. To give one attempt more budget, resume that attempt (${ids}).`);
  }
  const { input: original } = await session.client.workflow.getHandle(workflowId).query(savedStateQuery);
  const next = await startResumedRun(session.client, {
    input: { ...original, resumeFrom: workflowId, modelEndpoint: endpointOfSession(session).modelEndpoint },
    taskQueue: session.config.taskQueue,
    resumeFrom: workflowId,
    firstNumber: 2,
    workflowId: id,
  });
  log(`Resuming ${workflowId} (${execution.toLowerCase()}) in a new run, ${next.workflowId}: its finished attempts are kept, its unfinished ones go on from where they were.`);
  return next.workflowId;
}

/** Resuming an attempt on its own while its parent runs: the parent has counted it as ended already. */
async function noteParentStillRunning(session: Session, description: WorkflowExecutionDescription): Promise<void> {
  const parent = description.parentExecution?.workflowId;
  if (!parent) return;
  const running = (await session.client.workflow.getHandle(parent).describe().catch(() => null))?.status.name === 'RUNNING';
  if (running) log(`Note: ${description.workflowId} is an attempt of ${parent}, which is still running and has counted this attempt as ended: the new run goes on by itself, outside ${parent}'s report.`);
}

budgetOptions(
  program
    .command('raise-budget')
    .description(
      'raise the budgets of a running run, and follow it. A run paused on its budget (pauseOnBudgetMinutes) goes on where it stopped: ' +
        'whatever budget paused it is raised, by the amount given, else by 10 iterations or by its first amount. (An ended run: `resume`.)',
    )
    .argument('<workflow-id>'),
).action(async (workflowId: string, options: BudgetOptions) =>
  withSession(async (session) => {
    const asked = raiseAsked(options);
    const handle = session.client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    const worker = await workerForThisCommand(session);
    try {
      if (description.status.name !== 'RUNNING') {
        throw new UsageError(`${workflowId} has ended (${description.status.name.toLowerCase()}): continue it in a new run with \`durable-debugger resume ${workflowId}\` (same --more-* options).`);
      }
      const status = await handle.query(statusQuery);
      if (status.attempts) {
        throw new UsageError(`${workflowId} runs ${status.attempts.length} attempts, each with its own budget: raise the budget of one of them (${status.attempts.map((entry) => entry.workflowId).join(', ')}).`);
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

/** Budgets that were never set stay unset: say so when a raise names one. */
function noteUnsetBudgets(asked: BudgetRaise, budgets: Budgets): void {
  const unset = [
    asked.moreTokens && budgets.maxTokens === undefined ? '--more-tokens (the run has no token budget)' : null,
    asked.moreCostUsd && budgets.maxCostUsd === undefined ? '--more-cost (the run has no cost budget)' : null,
    asked.moreMinutes && budgets.maxMinutes === undefined ? '--more-minutes (the run has no time budget)' : null,
  ].filter(Boolean);
  if (unset.length) log(`Ignored ${unset.join(', ')}: budgets that were not set stay unset.`);
}

program
  .command('reap')
  .description('remove sandbox containers and workspaces whose run has ended (or is unknown)')
  .action(async () =>
    withSession(async (session) => {
      const reaped = await reapOrphans({
        docker: connectDocker(),
        client: session.client,
        scope: `${session.server.address}/${session.config.namespace}`,
        workspaceRoot: session.config.workspaceRoot,
      });
      for (const item of reaped) console.log(`removed ${item.kind} ${item.id} (${item.reason})`);
      if (reaped.length === 0) console.log('Nothing to reap.');
    }),
  );

const env = program.command('env').description('the environment images (dependencies installed for a repository, cached by their manifests)');
env
  .command('list')
  .description('list the environment images on this Docker engine')
  .option('--json', 'print JSON lines')
  .action(async (options: { json?: boolean }) => {
    const images = await listEnvironmentImages(connectDocker());
    for (const info of images) {
      if (options.json) {
        console.log(JSON.stringify(info));
        continue;
      }
      const packages = info.packages === null ? '' : `, ${info.packages} packages`;
      const used = info.usedBy ? pc.yellow(` · in use by ${info.usedBy} container(s)`) : '';
      console.log(`${pc.bold(info.image)}  ${info.description ?? info.kind ?? ''}${packages} · ${(info.sizeBytes / 1e6).toFixed(0)} MB · ${info.createdAt.toISOString()}${used}`);
    }
    if (!options.json && images.length === 0) console.log('No environment images.');
  });
env
  .command('prune')
  .description('remove environment images that no container uses (the next run of their repository builds again)')
  .option('--older-than-days <n>', 'only images built more than n days ago', positiveNumber)
  .action(async (options: { olderThanDays?: number }) => {
    const removed = await pruneEnvironmentImages(connectDocker(), { olderThanMs: (options.olderThanDays ?? 0) * 86_400_000 });
    for (const info of removed) console.log(`removed ${info.image} (${(info.sizeBytes / 1e6).toFixed(0)} MB)`);
    if (removed.length === 0) console.log('Nothing to prune.');
  });

program
  .command('worker')
  .description('run a worker in the foreground (Ctrl-C to stop); runs whose worker died continue here')
  .option('--scripted', 'answer model calls with the fixtures\' scripted responses (offline, no API key; fixture runs only)')
  .option('--reply-delay <ms>', 'with --scripted: pause before each scripted reply (a fixed model latency)', positiveInteger)
  .action(async (options: { scripted?: boolean; replyDelay?: number }) => {
    const scripted = options.scripted ? await startScriptedModel({ latencyMs: options.replyDelay }) : null;
    try {
      await runWorkerInForeground((worker) => {
        if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
        log(
          `Worker ready on task queue ${worker.taskQueue} (sandboxes on ${worker.hostTaskQueue}); host ${worker.host.options.hostId}, ` +
            `workspaces in ${worker.host.options.workspaceRoot}, content store ${worker.host.options.store.describe()}. Ctrl-C to stop.`,
        );
      }, scripted ? scriptedWorkerModel(scripted) : {});
    } finally {
      await scripted?.stop();
    }
  });

program
  .command('dev')
  .description('the embedded Temporal server and a worker in the foreground, with the Web UI link')
  .option('--scripted', 'answer model calls with the fixtures\' scripted responses (offline, no API key; fixture runs only)')
  .option('--reply-delay <ms>', 'with --scripted: pause before each scripted reply, to watch or steer a run', positiveInteger)
  .action(async (options: { scripted?: boolean; replyDelay?: number }) => {
    const scripted = options.scripted ? await startScriptedModel({ latencyMs: options.replyDelay }) : null;
    try {
      await runWorkerInForeground(
        (worker, server) => {
          console.log(`Temporal server ${server.address}${server.uiUrl ? ` · Web UI ${server.uiUrl}` : ''}`);
          if (scripted) console.log(pc.yellow(scriptedNotice(scripted.fake.url)));
          console.log(`Worker on task queue ${worker.taskQueue}. Start runs with \`durable-debugger start <repo>\` or the Temporal CLI. Ctrl-C to stop.`);
        },
        scripted ? scriptedWorkerModel(scripted) : {},
      );
    } finally {
      await scripted?.stop();
    }
  });

function scriptedNotice(url: string): string {
  return (
    `SCRIPTED MODEL: model calls are answered by fixtures/<name>/script.json, played by a local fake Anthropic API (${url}), not by Claude. ` +
    'Only runs of the fixtures under fixtures/ can be answered.'
  );
}

function scriptedWorkerModel(scripted: ScriptedModel): Pick<WorkerOptions, 'anthropic' | 'modelEndpoint' | 'describeAnswerer'> {
  return {
    anthropic: scripted.anthropic,
    modelEndpoint: scriptedModelEndpoint,
    describeAnswerer: () => 'scripted responses (fixtures/*/script.json) played by a local fake Anthropic API (durable-debugger dev/worker --scripted), not Claude',
  };
}

async function runWorkerInForeground(
  announce: (worker: RunningWorker, server: TemporalServer) => void,
  model: Pick<WorkerOptions, 'anthropic' | 'modelEndpoint' | 'describeAnswerer'> = {},
): Promise<void> {
  const config = loadConfig();
  const server = await ensureTemporalServer(config, log);
  const worker = await startWorker({ config, address: server.address, log, ...model });
  announce(worker, server);
  const stop = () => void worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.done;
}

/**
 * `run` without a key names no endpoint: its run goes to the workers of the default endpoint.
 * When none is there, say at once what to do instead of starting a run that would wait.
 */
async function refuseWhenNobodyServesTheModel(session: Session, endpoint: string | undefined): Promise<void> {
  if (endpoint || (await hasWorker(session, modelTaskQueueFor(session.config.taskQueue, endpoint), 'activities'))) return;
  throw new UsageError(
    'ANTHROPIC_API_KEY is not set and no worker answers model calls for runs without one. Set ANTHROPIC_API_KEY ' +
      '(and ANTHROPIC_BASE_URL for a gateway), or start `durable-debugger dev --scripted` to run the fixtures offline, or try `npm run demo`.',
  );
}

/** What a running run waits for: the workflow's own word, or, at once, a model queue that nobody polls. */
async function modelWaitOf(session: Session, taskQueue: string, status: RunStatusView): Promise<string | null> {
  if (status.waitingFor) return status.waitingFor;
  if (status.phase !== 'thinking') return null;
  const endpoint = status.modelEndpoint;
  if (await hasWorker(session, modelTaskQueueFor(taskQueue, endpoint), 'activities')) return null;
  return waitingForModelWorker(endpoint, taskQueue);
}

program
  .command('demo')
  .description('fix a fixture end to end, offline unless ANTHROPIC_API_KEY is set (then Claude answers)')
  .argument('[fixture]', 'fixture under fixtures/', '01_off_by_one')
  .option('--json', 'print JSON lines instead of text')
  .action(async (fixture: string, options: { json?: boolean }) => {
    process.exitCode = await runDemo(loadConfig(), { fixture, json: Boolean(options.json) });
  });

program.addOption(new Option('--no-color', 'no colours (also NO_COLOR=1)'));

program.parseAsync().catch((error: unknown) => {
  console.error(pc.red(`error: ${error instanceof Error ? error.message : String(error)}`));
  process.exitCode = 2;
});
