// Parallel attempts: a debugRepository run with attempts > 1 becomes the parent of that many
// child runs of the loop (ids `<parent>-attempt-<k>`), started at once, each with its own
// sandbox, budget share and opening. Each child is durable on its own; the parent waits for
// them (or, with firstWins, cancels the rest once one fix is verified), keeps the smallest
// verified fix, and reports every attempt with totals summed over them.
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { AttemptActivities } from '../activities/attempts.js';
import { attemptOpening, attemptsReport, childInput, splitBudgets, summaryFromReport } from '../src/agent/attempts.js';
import { emptyUsage } from '../src/agent/budgets.js';
import { defaultModelEndpoint } from '../src/agent/modelEndpoint.js';
import type { DebugInput } from '../src/agent/input.js';
import type { AttemptSummary, DebugReport } from '../src/agent/report.js';
import type { AttemptProgress, RunStatusView } from '../src/agent/runState.js';
import {
  hintSignal,
  searchAttributes,
  statusQuery,
  stopSignal,
  transcriptQuery,
  workflowType,
} from '../src/temporal/definitions.js';
import { attemptActivityRetry } from '../src/temporal/retryPolicies.js';

type LoopWorkflow = (input: DebugInput) => Promise<DebugReport>;

const attemptActivities = proxyActivities<AttemptActivities>({
  startToCloseTimeout: '1 minute',
  retry: attemptActivityRetry,
});

export async function runAttempts(input: DebugInput): Promise<DebugReport> {
  const parentId = workflowInfo().workflowId;
  const startedAt = Date.now();
  const thinking = input.thinkingBudgetTokens !== undefined;
  const openings = Array.from({ length: input.attempts }, (_, index) =>
    attemptOpening(index + 1, input.attempts, { temperature: input.temperature, thinking }),
  );
  const budgets = splitBudgets(input.budgets, input.attempts);
  const progress: AttemptProgress[] = openings.map((opening) => ({
    attempt: opening.number,
    workflowId: `${parentId}-attempt-${opening.number}`,
    status: 'starting',
    label: opening.label,
  }));
  const handles = new Map<number, ChildWorkflowHandle<LoopWorkflow>>();
  let stopRequested: string | null = null;
  let phase: RunStatusView['phase'] = 'attempts';

  const running = () => progress.filter((entry) => entry.status === 'running' && handles.has(entry.attempt));
  /** Stop and hints are forwarded to every attempt still running; a child that just ended is skipped. */
  const forward = (send: (handle: ChildWorkflowHandle<LoopWorkflow>) => Promise<void>) => {
    for (const entry of running()) void send(handles.get(entry.attempt) as ChildWorkflowHandle<LoopWorkflow>).catch(() => undefined);
  };
  setHandler(statusQuery, () => statusView(input, progress, startedAt, phase, stopRequested));
  setHandler(transcriptQuery, () => ({ messages: [], version: 0 }));
  setHandler(stopSignal, (reason?: string) => {
    stopRequested = typeof reason === 'string' && reason.trim() ? reason.trim() : 'stop requested by the user';
    forward((handle) => handle.signal(stopSignal, stopRequested ?? undefined));
  });
  setHandler(hintSignal, (text: string) => {
    if (typeof text === 'string' && text.trim()) forward((handle) => handle.signal(hintSignal, text.trim()));
  });

  upsertSearchAttributes([{ key: searchAttributes.status, value: 'running' }]);
  setCurrentDetails(`${input.attempts} attempts in parallel${input.firstWins ? ' (the first verified fix wins)' : ''}: ${progress.map((entry) => entry.workflowId).join(', ')}`);

  const scopes = openings.map(() => new CancellationScope());
  const cancelOthers = (winner: number) => {
    scopes.forEach((scope, index) => {
      const status = progress[index]?.status;
      if (index !== winner && (status === 'starting' || status === 'running')) scope.cancel();
    });
  };
  const outcomes = await Promise.allSettled(
    openings.map((opening, index) =>
      (scopes[index] as CancellationScope).run(async () => {
        const entry = progress[index] as AttemptProgress;
        const handle = await startChild<LoopWorkflow>(workflowType, {
          workflowId: entry.workflowId,
          args: [childInput(input, opening, budgets[index] as DebugInput['budgets'])],
          // Cancelling the parent cancels the children, whose clean-up then removes their sandboxes.
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
          staticSummary: `Attempt ${opening.number} of ${opening.of} · ${opening.label.replace(/^attempt \d+ of \d+ · /, '')}`,
          staticDetails: [`Attempt ${opening.number} of ${opening.of} of ${parentId}`, `Repository: ${input.repo}`, `Opening: ${opening.instruction}`].join('\n'),
        });
        handles.set(opening.number, handle);
        entry.status = 'running';
        if (stopRequested) await handle.signal(stopSignal, stopRequested).catch(() => undefined);
        const report = await handle.result();
        entry.status = report.status;
        if (input.firstWins && report.status === 'fixed') cancelOthers(index);
        return report;
      }),
    ),
  );
  phase = 'reporting';

  // The parent itself was cancelled: its children were cancelled with it; end as cancelled.
  const parentCancelled = outcomes.find((outcome) => outcome.status === 'rejected' && isCancellation(outcome.reason) && CancellationScope.current().consideredCancelled);
  if (parentCancelled?.status === 'rejected') throw parentCancelled.reason;

  const reports = new Map<number, DebugReport>();
  const summaries: AttemptSummary[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const entry = progress[index] as AttemptProgress;
    if (outcome.status === 'fulfilled') {
      reports.set(entry.attempt, outcome.value);
      summaries.push(summaryFromReport(entry.attempt, outcome.value));
      continue;
    }
    const cancelled = isCancellation(outcome.reason);
    entry.status = cancelled ? 'cancelled' : 'failed';
    // A cancelled or failed child has no report: its usage so far comes from its status query.
    const usage = await attemptActivities.attemptUsage.executeWithOptions({ summary: `usage of ${entry.workflowId}` }, [
      { workflowId: entry.workflowId },
    ]);
    summaries.push({
      attempt: entry.attempt,
      workflowId: entry.workflowId,
      status: entry.status as 'cancelled' | 'failed',
      detail: cancelled ? 'cancelled: another attempt’s fix was verified first' : failureMessage(outcome.reason),
      rootCause: null,
      diffLines: 0,
      iterations: usage?.iterations ?? 0,
      tokens: usage?.tokens ?? emptyUsage(),
      costUsd: usage ? usage.costUsd : null,
      patch: '',
    });
  }

  const report = attemptsReport({ workflowId: parentId, repository: input.repo, durationMs: Date.now() - startedAt, attempts: summaries, reports });
  phase = 'done';
  upsertSearchAttributes([
    { key: searchAttributes.status, value: report.status },
    { key: searchAttributes.iterations, value: report.iterations },
    ...(report.costUsd === null ? [] : [{ key: searchAttributes.costUsd, value: report.costUsd }]),
  ]);
  setCurrentDetails(`${report.status}: ${report.stopDetail}`);
  return report;
}

function failureMessage(error: unknown): string {
  const cause = (error as { cause?: { message?: string } })?.cause;
  return `the attempt failed: ${cause?.message ?? (error instanceof Error ? error.message : String(error))}`;
}

function statusView(
  input: DebugInput,
  progress: AttemptProgress[],
  startedAt: number,
  phase: RunStatusView['phase'],
  stopRequested: string | null,
): RunStatusView {
  return {
    phase,
    iteration: 0,
    maxIterations: input.budgets.maxIterations,
    lastThought: '',
    tokens: emptyUsage(),
    costUsd: null,
    budgets: input.budgets,
    elapsedMs: Date.now() - startedAt,
    toolCalls: 0,
    model: input.model ?? null,
    answeredBy: null,
    repository: input.repo,
    testsBefore: null,
    workflowRuns: 1,
    stopRequested,
    modelEndpoint: input.modelEndpoint ?? defaultModelEndpoint,
    // Each attempt's own status says whether its model call waits for a worker.
    waitingFor: null,
    costNote: null,
    attempts: progress.map((entry) => ({ ...entry })),
  };
}
