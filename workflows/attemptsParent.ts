// Parallel attempts: a debugRepository run with attempts > 1 becomes the parent of that many
// child runs of the loop (ids `<parent>-attempt-<k>`), started at once, each with its own
// sandbox, budget share and opening. Each child is durable on its own; the parent waits for
// them (or, with firstWins, cancels the rest once one fix is verified), keeps the smallest
// verified fix, and reports every attempt with totals summed over them. A parent that resumes an
// interrupted one (resumeFrom) keeps each finished attempt's report as it is and resumes each
// unfinished attempt from its own saved state, as `resume` of a single run does.
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { AttemptActivities } from '../activities/attempts.js';
import { emptyUsage } from '../src/agent/budgets.js';
import type { DebugInput } from '../src/agent/input.js';
import { defaultModelEndpoint } from '../src/agent/modelEndpoint.js';
import {
  attemptOpening,
  attemptsReport,
  attemptSummaryLine,
  childInput,
  keptAttempt,
  resumePlan,
  splitBudgets,
  summaryFromReport,
  withApprovalAnswer,
  type AttemptOpening,
  type AttemptPlan,
  type KeptFixAnswer,
} from '../src/agent/parallelAttempts.js';
import { attemptFixRejected } from '../src/agent/prompts.js';
import { runningStatus, type AttemptSummary, type DebugReport } from '../src/agent/report.js';
import type { AttemptProgress, Phase, RunStatusView } from '../src/agent/runState.js';
import { hintSignal, searchAttributes, stopSignal, workflowType } from '../src/temporal/definitions.js';
import { attemptActivityRetry } from '../src/temporal/retryPolicies.js';
import { ApprovalGate } from './approval.js';
import { inputFailure } from './failures.js';
import { statusAttribute } from './progress.js';
import { registerRunHandlers, type RunClosing } from './runHandlers.js';

type LoopWorkflow = (input: DebugInput) => Promise<DebugReport>;

/** On the run's private queue when its input names one (src/agent/runQueues.ts), else the workflow's. */
function attemptActivitiesOf(input: DebugInput) {
  return proxyActivities<AttemptActivities>({
    ...(input.privateQueue ? { taskQueue: input.privateQueue } : {}),
    startToCloseTimeout: '1 minute',
    retry: attemptActivityRetry,
  });
}

/** What the parent remembers (its attempts keep their own run state). */
interface ParentState {
  startedAt: number;
  phase: Phase;
  stopRequested: string | null;
  /** Each attempt as the status shows it; empty until the attempts are planned. */
  attempts: AttemptProgress[];
}

/** The parent of parallel attempts, shaped as a single run (DebugRun): its state and handlers, and one execute. */
export class AttemptsParent {
  private readonly parentId = workflowInfo().workflowId;
  private readonly state: ParentState = { startedAt: Date.now(), phase: 'attempts', stopRequested: null, attempts: [] };
  private readonly openings: AttemptOpening[];
  private readonly children = new Map<number, ChildWorkflowHandle<LoopWorkflow>>();
  /** With approve, the parent asks a person about the fix it keeps (workflows/approval.ts). */
  private readonly approval: ApprovalGate | null;

  constructor(private readonly input: DebugInput) {
    const thinking = input.thinkingBudgetTokens !== undefined;
    this.openings = Array.from({ length: input.attempts }, (_, index) =>
      attemptOpening(index + 1, input.attempts, { temperature: input.temperature, thinking }),
    );
    this.approval = input.approve
      ? new ApprovalGate({
          enabled: true,
          timeoutMinutes: input.approvalTimeoutMinutes,
          privateQueue: input.privateQueue,
          stopRequested: () => this.state.stopRequested,
          setPhase: (phase) => {
            this.state.phase = phase;
          },
        })
      : null;
  }

  registerHandlers(): RunClosing {
    const { input, state } = this;
    this.approval?.register();
    return registerRunHandlers({
      status: () => ({ ...parentStatusView(input, state), awaitingApproval: this.approval?.awaiting ?? null }),
      transcript: () => ({ messages: [], version: 0 }),
      // A parent has no loop state of its own: `resume` reads its input here, its attempts from `status`.
      savedState: () => ({ input, state: null }),
      stop: (reason) => {
        state.stopRequested = reason;
        this.forward((handle) => handle.signal(stopSignal, reason));
      },
      hint: (text) => this.forward((handle) => handle.signal(hintSignal, text)),
    });
  }

  async execute(): Promise<DebugReport> {
    const { input, state, parentId, openings } = this;
    // A resumed parent keeps what its interrupted attempts finished, and resumes the rest.
    const plans = input.resumeFrom
      ? await planResume(input, parentId)
      : openings.map((opening): AttemptPlan => ({ attempt: opening.number, do: 'start' }));
    state.attempts = openings.map((opening, index) => progressOf(parentId, opening, plans[index] as AttemptPlan));
    upsertSearchAttributes([statusAttribute(runningStatus)]);
    setCurrentDetails(
      `${input.attempts} attempts in parallel${input.firstWins ? ' (the first verified fix wins)' : ''}${input.resumeFrom ? `, resuming ${input.resumeFrom}` : ''}: ${state.attempts.map((entry) => entry.workflowId).join(', ')}`,
    );

    // Every attempt at once, each in a scope of its own: with firstWins, a verified fix cancels the rest.
    const scopes = openings.map(() => new CancellationScope());
    const cancelOthers = (winner: number) => {
      scopes.forEach((scope, index) => {
        const status = state.attempts[index]?.status;
        if (index !== winner && (status === 'starting' || status === 'running')) scope.cancel();
      });
    };
    const outcomes = await Promise.allSettled(
      openings.map((_opening, index) =>
        (scopes[index] as CancellationScope).run(async (): Promise<DebugReport | null> => {
          const plan = plans[index] as AttemptPlan;
          if (plan.do === 'adopt') return plan.report;
          if (plan.do === 'cancelled') return null;
          const report = await this.runChild(index, plan.do === 'resume' ? plan.from : undefined);
          if (input.firstWins && report.status === 'fixed') cancelOthers(index);
          return report;
        }),
      ),
    );
    state.phase = 'reporting';

    // The parent itself was cancelled: its children were cancelled with it; end as cancelled.
    const parentCancelled = outcomes.find(
      (outcome) =>
        outcome.status === 'rejected' &&
        isCancellation(outcome.reason) &&
        CancellationScope.current().consideredCancelled,
    );
    if (parentCancelled?.status === 'rejected') throw parentCancelled.reason;

    const reports = new Map<number, DebugReport>();
    const summaries: AttemptSummary[] = [];
    for (const [index, outcome] of outcomes.entries()) {
      const entry = state.attempts[index] as AttemptProgress;
      if (outcome.status === 'fulfilled' && outcome.value) {
        reports.set(entry.attempt, outcome.value);
        summaries.push(summaryFromReport(entry.attempt, outcome.value));
      } else {
        summaries.push(await summaryWithoutReport(this.input, entry, outcome));
      }
    }

    // With approve, a person answers about the kept fix; a rejection sends its attempt on with the feedback.
    let answer: KeptFixAnswer | null = null;
    // The attempt revised after a rejection is the one asked about again, if its revision is verified.
    let revised: number | null = null;
    for (let round = 1; this.approval && answer === null; round++) {
      const chosen = keptAttempt(summaries, revised);
      const kept = summaries.find((summary) => summary.attempt === chosen);
      if (!kept) break;
      const given = await this.approval.awaitAnswer(kept.patch);
      if (given?.decision === 'approved') answer = { decision: 'approved' };
      else if (state.stopRequested) answer = { decision: 'stopped', reason: state.stopRequested };
      else if (!given) answer = { decision: 'timed_out', minutes: input.approvalTimeoutMinutes ?? 0 };
      else {
        const index = kept.attempt - 1;
        const entry = state.attempts[index] as AttemptProgress;
        entry.workflowId = `${parentId}-attempt-${kept.attempt}-review-${round}`;
        entry.label = `${openings[index]?.label} · revising after review ${round}`;
        state.phase = 'attempts';
        const continued = await this.runChild(index, kept.workflowId, attemptFixRejected(given.feedback ?? ''));
        state.phase = 'reporting';
        revised = kept.attempt;
        reports.set(kept.attempt, continued);
        summaries[summaries.indexOf(kept)] = summaryFromReport(kept.attempt, continued);
      }
    }

    const chosenReport = attemptsReport({
      workflowId: parentId,
      repository: input.repo,
      durationMs: Date.now() - state.startedAt,
      attempts: summaries,
      reports,
      resumedFrom: input.resumeFrom ?? null,
      preferred: revised,
    });
    const report = answer ? withApprovalAnswer(chosenReport, answer) : chosenReport;
    state.phase = 'done';
    upsertSearchAttributes([
      statusAttribute(report.status),
      { key: searchAttributes.iterations, value: report.iterations },
      ...(report.costUsd === null ? [] : [{ key: searchAttributes.costUsd, value: report.costUsd }]),
    ]);
    setCurrentDetails(`${report.status}: ${report.stopDetail}`);
    return report;
  }

  /** Runs attempt `index` as a child (from scratch, or resuming `resumeFrom`) to its report. */
  private async runChild(index: number, resumeFrom?: string, hint?: string): Promise<DebugReport> {
    const { input, state, parentId } = this;
    const opening = this.openings[index] as AttemptOpening;
    const entry = state.attempts[index] as AttemptProgress;
    const handle = await startChild<LoopWorkflow>(workflowType, {
      workflowId: entry.workflowId,
      args: [
        childInput(
          input,
          opening,
          splitBudgets(input.budgets, input.attempts)[index] as DebugInput['budgets'],
          resumeFrom,
        ),
      ],
      // Cancelling the parent cancels the children, whose clean-up then removes their sandboxes.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      staticSummary: attemptSummaryLine(opening, resumeFrom),
      staticDetails: [
        `Attempt ${opening.number} of ${opening.of} of ${parentId}`,
        ...(resumeFrom ? [`Resumes ${resumeFrom}`] : []),
        `Repository: ${input.repo}`,
        `Opening: ${opening.instruction}`,
      ].join('\n'),
    });
    this.children.set(opening.number, handle);
    entry.status = 'running';
    if (hint) await handle.signal(hintSignal, hint);
    if (state.stopRequested) await handle.signal(stopSignal, state.stopRequested).catch(() => undefined);
    const report = await handle.result();
    entry.status = report.status;
    return report;
  }

  /** Stop and hints go to every attempt still running; a child that just ended is skipped. */
  private forward(send: (handle: ChildWorkflowHandle<LoopWorkflow>) => Promise<void>): void {
    for (const entry of this.state.attempts) {
      const handle = this.children.get(entry.attempt);
      if (entry.status === 'running' && handle) void send(handle).catch(() => undefined);
    }
  }
}

/** An attempt that ended without a report: cancelled (here, or by the first-wins of the parent it resumes) or failed. */
async function summaryWithoutReport(
  input: DebugInput,
  entry: AttemptProgress,
  outcome: PromiseSettledResult<DebugReport | null>,
): Promise<AttemptSummary> {
  const cancelled = outcome.status === 'fulfilled' || isCancellation(outcome.reason);
  entry.status = cancelled ? 'cancelled' : 'failed';
  // A cancelled or failed child has no report: its usage so far comes from its status query.
  const usage = await attemptActivitiesOf(input).attemptUsage.executeWithOptions(
    { summary: `usage of ${entry.workflowId}` },
    [{ workflowId: entry.workflowId }],
  );
  return {
    attempt: entry.attempt,
    workflowId: entry.workflowId,
    status: entry.status as 'cancelled' | 'failed',
    detail: cancelled
      ? 'cancelled: another attempt’s fix was verified first'
      : attemptFailureDetail((outcome as PromiseRejectedResult).reason),
    rootCause: null,
    diffLines: 0,
    iterations: usage?.iterations ?? 0,
    tokens: usage?.tokens ?? emptyUsage(),
    costUsd: usage ? usage.costUsd : null,
    patch: '',
  };
}

/** What became of the interrupted parent's attempts, and so what to do with each. */
async function planResume(input: DebugInput, parentId: string): Promise<AttemptPlan[]> {
  const earlierId = input.resumeFrom as string;
  try {
    const earlier = await attemptActivitiesOf(input).earlierAttempts.executeWithOptions(
      { summary: `the attempts of ${earlierId}` },
      [{ workflowId: earlierId, attempts: input.attempts, resumedBy: parentId }],
    );
    return resumePlan(earlier, input.firstWins);
  } catch (error) {
    throw inputFailure(error) ?? error;
  }
}

/** An attempt as the status shows it: a new child runs under `<parent>-attempt-k`, an adopted one keeps its run. */
function progressOf(parentId: string, opening: AttemptOpening, plan: AttemptPlan): AttemptProgress {
  const entry = { attempt: opening.number, label: opening.label };
  if (plan.do === 'adopt') return { ...entry, workflowId: plan.report.workflowId, status: plan.report.status };
  if (plan.do === 'cancelled') return { ...entry, workflowId: plan.workflowId, status: 'cancelled' };
  const workflowId = `${parentId}-attempt-${opening.number}`;
  return {
    ...entry,
    workflowId,
    status: 'starting',
    label: plan.do === 'resume' ? `${opening.label} · resumed from ${plan.from}` : opening.label,
  };
}

/** Why an attempt failed, from its child workflow's failure. */
function attemptFailureDetail(error: unknown): string {
  const cause = (error as { cause?: { message?: string } })?.cause;
  return `the attempt failed: ${cause?.message ?? (error instanceof Error ? error.message : String(error))}`;
}

function parentStatusView(input: DebugInput, state: ParentState): RunStatusView {
  return {
    phase: state.phase,
    iteration: 0,
    maxIterations: input.budgets.maxIterations,
    lastThought: '',
    tokens: emptyUsage(),
    costUsd: null,
    budgets: input.budgets,
    elapsedMs: Date.now() - state.startedAt,
    toolCalls: 0,
    model: input.model ?? null,
    answeredBy: null,
    repository: input.repo,
    testsBefore: null,
    workflowRuns: 1,
    stopRequested: state.stopRequested,
    modelEndpoint: input.modelEndpoint ?? defaultModelEndpoint,
    // Each attempt's own status says whether its model call waits for a worker.
    waitingFor: null,
    costNote: null,
    attempts: state.attempts.map((entry) => ({ ...entry })),
  };
}
