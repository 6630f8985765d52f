// What the commands share: argument parsers, the session around a command, following a run to
// its report, the exit code, and the answers and fix branch several commands give.
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import type { DebugReport } from '../agent/report.js';
import type { ApprovalAnswer } from '../temporal/definitions.js';
import { modelProviders } from '../model/providerSettings.js';
import { createFixBranch, FixBranchRefused } from './fixBranch.js';
import { printFinalReport, wholePatch } from './printReport.js';
import type { Config } from '../config.js';
import { log, openSession, type Session } from './session.js';

/** A mistake of the user's: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** A command's registration on the program. */
export type CommandRegistration = (program: Command) => void;

/**
 * `--provider`: who answers the model calls of this command's worker and runs; it stands for
 * DURABLE_DEBUGGER_PROVIDER (set from it before the command runs: see main.ts).
 */
export function providerOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--provider <name>',
      'the model provider: anthropic (or a gateway through ANTHROPIC_BASE_URL), bedrock, vertex (default: DURABLE_DEBUGGER_PROVIDER or anthropic)',
    ).choices(modelProviders),
  );
}

export function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a positive number');
  return number;
}

export function nonNegativeNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new InvalidArgumentError('expected a number, 0 or more');
  return number;
}

export function positiveInteger(value: string): number {
  const number = positiveNumber(value);
  if (!Number.isInteger(number)) throw new InvalidArgumentError('expected a positive whole number');
  return number;
}

/**
 * Puts a fixed run's whole patch on the branch durable-debugger/<id> of its git repository: a
 * patch too large for the report is read back from the content store (and its digest checked).
 */
export async function applyFix(config: Config, report: DebugReport, repo: string, json: boolean): Promise<void> {
  try {
    // A run that is not fixed is refused for that, whether or not its patch can be read.
    const patch = report.status === 'fixed' ? await wholePatch(config, report) : '';
    const created = createFixBranch(repo, report, patch);
    if (json) console.log(JSON.stringify({ applied: created }));
    else
      log(
        `Committed the fix as ${created.commit.slice(0, 12)} on the new branch ${pc.bold(created.branch)} (your checkout is unchanged): git switch ${created.branch}`,
      );
  } catch (error) {
    // Loaded only here: the patch code (its encodings' libraries) is not needed to apply a patch the report holds.
    const { PatchUnavailableError } = await import('../sandbox/workspace/patch.js');
    if (error instanceof FixBranchRefused || error instanceof PatchUnavailableError)
      throw new UsageError(`Not applied, nothing changed. ${error.message}`);
    throw error;
  }
}

export async function follow(session: Session, workflowId: string, json: boolean): Promise<DebugReport> {
  // Loaded here: the definitions load Temporal, which a run served by the background worker never needs.
  const [{ runLooksOfSession }, { showRun }] = await Promise.all([import('./follow.js'), import('./showRun.js')]);
  const run = runLooksOfSession(session, workflowId);
  const report = await showRun(run, { json }).finally(run.done);
  await printFinalReport(session.config, report, {
    webUi: (await import('../client.js')).webUiLink(session.server.uiUrl, session.config, workflowId),
    json,
  });
  return report;
}

export function exitCodeFor(report: DebugReport): number {
  return report.status === 'fixed' || report.status === 'no_failing_tests' ? 0 : 1;
}

export async function withSession<T>(work: (session: Session) => Promise<T>): Promise<T> {
  const session = await openSession();
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

/** Sends approve/reject; a refusal by the run (not awaiting approval, no feedback) is the user's to fix. */
export async function answerApproval(
  session: Session,
  workflowId: string,
  send: () => Promise<ApprovalAnswer>,
): Promise<void> {
  const { statusQuery } = await import('../temporal/definitions.js');
  const status = await session.client.workflow.getHandle(workflowId).query(statusQuery);
  if (!status.awaitingApproval) {
    throw new UsageError(
      `${workflowId} is not awaiting approval (phase ${status.phase}): only a verified fix of a run started with --approve waits for an answer.`,
    );
  }
  try {
    await send();
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new UsageError(
      `${workflowId} refused the answer: ${cause ?? (error instanceof Error ? error.message : String(error))}`,
    );
  }
}
