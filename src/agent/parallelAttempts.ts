// Parallel attempts, the pure part: how the parent's budget is shared, how each attempt opens
// differently (deterministically), which fix is kept, and the parent's report over them all.
import { addUsage, emptyUsage, type StopCondition } from './budgets.js';
import type { Budgets, DebugInput } from './input.js';
import type { AttemptSummary, DebugReport, RunStatus } from './report.js';

export interface AttemptOpening {
  number: number;
  of: number;
  /** Added to the task prompt of this attempt. */
  instruction: string;
  /** Unset when extended thinking is on (the API accepts only one of them). */
  temperature?: number;
  /** What the Web UI shows for the child run. */
  label: string;
}

/**
 * The parent's budgets bound the sum of its attempts: each gets an even share (iterations and
 * tokens as whole numbers, the remainder to the first attempts; cost and minutes divided).
 */
export function splitBudgets(budgets: Budgets, attempts: number): Budgets[] {
  const share = (total: number, index: number) => Math.floor(total / attempts) + (index < total % attempts ? 1 : 0);
  return Array.from({ length: attempts }, (_, index) => ({
    maxIterations: Math.max(1, share(budgets.maxIterations, index)),
    ...(budgets.maxTokens !== undefined ? { maxTokens: Math.max(1, share(budgets.maxTokens, index)) } : {}),
    ...(budgets.maxCostUsd !== undefined ? { maxCostUsd: budgets.maxCostUsd / attempts } : {}),
    ...(budgets.maxMinutes !== undefined ? { maxMinutes: budgets.maxMinutes / attempts } : {}),
  }));
}

const ordinals = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

function ordinal(number: number): string {
  return ordinals[number - 1] ?? `${number}th`;
}

/**
 * Attempt k of n: the first follows the likeliest hypothesis at a low temperature; each later
 * one is told to pursue its own k-th likeliest hypothesis, at a higher temperature.
 */
export function attemptOpening(
  number: number,
  of: number,
  options: { temperature?: number; thinking: boolean },
): AttemptOpening {
  const hypothesis = number === 1 ? 'the most likely hypothesis' : `the ${ordinal(number)} most likely hypothesis`;
  const instruction =
    number === 1
      ? `Attempt ${number} of ${of}: ${of} attempts at this bug run in parallel, each in its own copy of the repository, and the smallest verified fix is kept. Follow the hypothesis the evidence makes most likely.`
      : `Attempt ${number} of ${of}: ${of} attempts at this bug run in parallel, each in its own copy of the repository, and the smallest verified fix is kept. The other attempts follow other hypotheses: before you edit anything, name at least ${number} hypotheses that could explain the failures, and pursue the ${ordinal(number)} most likely one; if the evidence rules it out, say why and take the next one.`;
  const base = options.temperature ?? 0.2;
  const temperature = options.thinking ? undefined : round(base + ((1 - base) * (number - 1)) / Math.max(1, of - 1));
  return {
    number,
    of,
    instruction,
    ...(temperature === undefined ? {} : { temperature }),
    label: `attempt ${number} of ${of} · ${hypothesis}${temperature === undefined ? '' : ` · temperature ${temperature}`}`,
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * The input of attempt k: the parent's, with its budget share, its opening, and one attempt;
 * `resumeFrom` (the parent's names the earlier parent) is the earlier run of this attempt, if any.
 */
export function childInput(
  parent: DebugInput,
  opening: AttemptOpening,
  budgets: Budgets,
  resumeFrom?: string,
): DebugInput {
  const {
    temperature: _parentTemperature,
    resumeFrom: _parentResumedFrom,
    approvalTimeoutMinutes: _parentTimeout,
    ...rest
  } = parent;
  return {
    ...rest,
    // The parent asks for approval of the fix it keeps; an attempt never waits for one itself.
    approve: false,
    ...(opening.temperature === undefined ? {} : { temperature: opening.temperature }),
    ...(resumeFrom ? { resumeFrom } : {}),
    budgets,
    attempts: 1,
    firstWins: false,
    attempt: { number: opening.number, of: opening.of, instruction: opening.instruction },
  };
}

/** What the Web UI shows for a child run (its static summary): which attempt it is, and what it resumes. */
export function attemptSummaryLine(opening: AttemptOpening, resumeFrom?: string): string {
  const line = `Attempt ${opening.number} of ${opening.of} · ${opening.label.replace(/^attempt \d+ of \d+ · /, '')}`;
  return resumeFrom ? `${line} · resumed from ${resumeFrom}` : line;
}

/** An attempt of an earlier (interrupted) parent, as the parent that resumes it finds it. */
export type EarlierAttempt =
  | { attempt: number; workflowId: string; found: 'finished'; report: DebugReport }
  /** It ended without a report (terminated, timed out, failed, cancelled with its parent): resume it. */
  | { attempt: number; workflowId: string; found: 'unfinished' }
  | { attempt: number; workflowId: string; found: 'not_started' };

/** What a resumed parent does with each attempt. */
export type AttemptPlan =
  | { attempt: number; do: 'start' }
  | { attempt: number; do: 'resume'; from: string }
  | { attempt: number; do: 'adopt'; report: DebugReport }
  /** First-wins and another attempt's fix is verified already: counted as the earlier parent would have. */
  | { attempt: number; do: 'cancelled'; workflowId: string };

/**
 * Resuming a parent: a finished attempt's report is kept as it is, an unfinished attempt goes on
 * from its own saved state, one that never started starts; with first-wins, once an attempt is
 * fixed, the unfinished ones are the cancelled ones they would have been.
 */
export function resumePlan(earlier: EarlierAttempt[], firstWins: boolean): AttemptPlan[] {
  const fixedAlready = earlier.some((attempt) => attempt.found === 'finished' && attempt.report.status === 'fixed');
  return earlier.map((attempt): AttemptPlan => {
    if (attempt.found === 'finished') return { attempt: attempt.attempt, do: 'adopt', report: attempt.report };
    if (firstWins && fixedAlready) return { attempt: attempt.attempt, do: 'cancelled', workflowId: attempt.workflowId };
    if (attempt.found === 'unfinished') return { attempt: attempt.attempt, do: 'resume', from: attempt.workflowId };
    return { attempt: attempt.attempt, do: 'start' };
  });
}

/**
 * Lines added plus lines removed by a unified diff (file headers not counted); text in another
 * encoding counts by its decoded view ("# @@" comment lines), any other binary change as one line.
 */
export function diffLines(patch: string): number {
  let inHunk = false;
  let decodedView = false;
  let count = 0;
  for (const rawLine of patch.split('\n')) {
    const line = rawLine.startsWith('# ') ? rawLine.slice(2) : rawLine;
    if (line.startsWith('diff --git ')) inHunk = false;
    else if (line.startsWith('@@')) {
      inHunk = true;
      if (rawLine !== line) decodedView = true;
    } else if (line === 'GIT binary patch') {
      if (!decodedView) count += 1;
      decodedView = false;
    } else if (inHunk && (line.startsWith('+') || line.startsWith('-'))) count += 1;
  }
  return count;
}

/**
 * The attempt to keep: a verified fix (verification already rules out regressions: no newly
 * failing or missing tests), the smallest diff, then the fewest iterations, then the earliest.
 */
export function chooseAttempt(attempts: AttemptSummary[]): number | null {
  const fixed = attempts.filter((attempt) => attempt.status === 'fixed');
  fixed.sort((a, b) => a.diffLines - b.diffLines || a.iterations - b.iterations || a.attempt - b.attempt);
  return fixed[0]?.attempt ?? null;
}

/** The preferred attempt when it is a verified fix, else the usual choice. */
export function keptAttempt(attempts: AttemptSummary[], preferred: number | null): number | null {
  return attempts.some((attempt) => attempt.attempt === preferred && attempt.status === 'fixed')
    ? preferred
    : chooseAttempt(attempts);
}

/** An attempt's line in the report, from its own report. */
export function summaryFromReport(attempt: number, report: DebugReport): AttemptSummary {
  return {
    attempt,
    workflowId: report.workflowId,
    status: report.status,
    detail: report.stopDetail,
    rootCause: report.rootCause,
    // A large patch's report holds only its beginning: its whole patch was counted when it was stored.
    diffLines: report.fullPatch?.changedLines ?? diffLines(report.patch),
    iterations: report.iterations,
    tokens: report.tokens,
    costUsd: report.costUsd,
    patch: report.patch,
  };
}

/** The overall status when no attempt was kept: the most telling of theirs. */
export function statusWithoutFix(attempts: AttemptSummary[]): RunStatus {
  const statuses = new Set(attempts.map((attempt) => attempt.status));
  if (statuses.has('no_failing_tests')) return 'no_failing_tests';
  if ([...statuses].every((status) => status === 'stopped' || status === 'cancelled')) return 'stopped';
  if (statuses.has('budget_exhausted')) return 'budget_exhausted';
  if ([...statuses].every((status) => status === 'error' || status === 'failed')) return 'error';
  return 'not_fixed';
}

const conditionOf: Record<RunStatus, StopCondition> = {
  fixed: 'finish_verified',
  not_fixed: 'no_tool_calls',
  not_approved: 'not_approved',
  no_failing_tests: 'no_failing_tests',
  budget_exhausted: 'max_iterations',
  stopped: 'stop_signal',
  error: 'model_error',
  environment_error: 'environment_error',
};

/**
 * The parent's report: the kept attempt's fix, every attempt's line, and totals (tokens, cost,
 * iterations, compactions) that are the sums over all attempts.
 */
export function attemptsReport(options: {
  workflowId: string;
  repository: string;
  durationMs: number;
  attempts: AttemptSummary[];
  /** The reports of the attempts that ended with one (cancelled or failed ones have none). */
  reports: Map<number, DebugReport>;
  /** The interrupted parent this one resumed. */
  resumedFrom?: string | null;
  /** An attempt to keep if it is fixed (one revised after a review), before choosing among all. */
  preferred?: number | null;
}): DebugReport {
  const { attempts, reports } = options;
  const chosen = keptAttempt(attempts, options.preferred ?? null);
  const kept = chosen === null ? undefined : reports.get(chosen);
  const any = [...reports.values()][0];
  const status = kept ? kept.status : statusWithoutFix(attempts);
  const sameStatus = attempts.find((attempt) => attempt.status === status && reports.has(attempt.attempt));
  const stopCondition =
    kept?.stopCondition ??
    (sameStatus ? reports.get(sameStatus.attempt)?.stopCondition : undefined) ??
    conditionOf[status];
  const keptSummary = attempts.find((attempt) => attempt.attempt === chosen);
  const stopDetail = keptSummary
    ? `kept attempt ${keptSummary.attempt} of ${attempts.length}: a verified fix of ${keptSummary.diffLines} changed lines in ${keptSummary.iterations} iterations`
    : `no attempt of ${attempts.length} was fixed (${attempts.map((attempt) => `${attempt.attempt}: ${attempt.status}`).join(', ')})`;
  const costs = attempts.map((attempt) => attempt.costUsd);
  return {
    workflowId: options.workflowId,
    repository: options.repository,
    status,
    stopCondition,
    stopDetail,
    model: any?.model ?? null,
    answeredBy: any?.answeredBy ?? null,
    rootCause: kept?.rootCause ?? null,
    fixSummary: kept?.fixSummary ?? null,
    patch: kept?.patch ?? '',
    fullPatch: kept?.fullPatch ?? null,
    ...(kept?.leftOutOfPatch?.length ? { leftOutOfPatch: kept.leftOutOfPatch } : {}),
    testsBefore: any?.testsBefore ?? null,
    testsAfter: kept?.testsAfter ?? null,
    testCommand: any?.testCommand ?? null,
    iterations: attempts.reduce((sum, attempt) => sum + attempt.iterations, 0),
    tokens: attempts.reduce((sum, attempt) => addUsage(sum, attempt.tokens), emptyUsage()),
    costUsd: costs.some((cost) => cost === null)
      ? null
      : costs.reduce<number>((sum, cost) => sum + (cost as number), 0),
    durationMs: options.durationMs,
    toolCalls: kept?.toolCalls ?? [],
    earlierToolCalls: kept?.earlierToolCalls ?? 0,
    workflowRuns: 1,
    compactions: [...reports.values()].reduce((sum, report) => sum + report.compactions, 0),
    resumedFrom: options.resumedFrom ?? null,
    problems: kept?.problems ?? [],
    costNote: [...reports.values()].find((report) => report.costNote)?.costNote ?? null,
    ...([...reports.values()].some((report) => report.streamNote)
      ? { streamNote: [...reports.values()].find((report) => report.streamNote)?.streamNote }
      : {}),
    attempts,
    chosenAttempt: chosen,
  };
}

/** How the person answered about the kept fix of a parent run with approve. */
export type KeptFixAnswer =
  { decision: 'approved' } | { decision: 'stopped'; reason: string } | { decision: 'timed_out'; minutes: number };

/** The parent's report after the person's answer on its kept fix (a rejection goes back to the attempt instead). */
export function withApprovalAnswer(report: DebugReport, answer: KeptFixAnswer): DebugReport {
  if (report.status !== 'fixed') return report;
  if (answer.decision === 'approved') return { ...report, stopDetail: `${report.stopDetail}, approved` };
  if (answer.decision === 'stopped')
    return { ...report, status: 'stopped', stopCondition: 'stop_signal', stopDetail: answer.reason };
  return {
    ...report,
    status: 'not_approved',
    stopCondition: 'not_approved',
    stopDetail: `the verified fix of attempt ${report.chosenAttempt} was not approved within ${answer.minutes} minutes`,
  };
}
