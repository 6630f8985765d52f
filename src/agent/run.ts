// The run core: what one debugging run remembers and every rule of its loop, without Temporal.
// The workflow (workflows/debugRepository.ts) and the plain loop (bench/plainLoop.ts) both
// drive it: they do the I/O (model calls, tools, test runs); this decides what each result
// means for the run. A reply's path (clean, decide) is reply.ts, a turn of tool calls turn.ts,
// compaction compaction.ts. Pure and deterministic: the time comes in as `now`.
import {
  addCallCost,
  addUsage,
  budgetStop,
  emptyUsage,
  requestInputTokens,
  totalTokens,
  type Stop,
} from './budgets.js';
import { applyRaise, budgetUsage, completeRaise, describeRaise, type BudgetRaise } from './budgetRaise.js';
import { fitConversationToBudget } from './compaction.js';
import { appendUserText, conversationBytes, repairConversation, userText } from './conversation.js';
import { effectiveLimits, type DebugInput, type SandboxLimits } from './input.js';
import type { ModelReply } from './modelReply.js';
import { defaultModelEndpoint } from './modelEndpoint.js';
import { conversationByteBudget } from './payloads.js';
import * as prompts from './prompts.js';
import { statusFor, type DebugReport, type PatchForReport } from './report.js';
import type { Phase, RunState, RunStatusView } from './runState.js';
import type { SandboxSettings } from './sandboxProtocol.js';
import { describeOutOfMemory, type TestSummary } from './testResults.js';

// ── The state: creation, continuation, resumption ──────────────────────────────────────────

/** The state of a run that starts now; a state carried over continue-as-new counts one more workflow run. */
export function startRunState(input: DebugInput, carried: RunState | undefined, now: number): RunState {
  if (carried) {
    carried.workflowRuns += 1;
    return carried;
  }
  return {
    phase: 'preparing',
    startedAt: now,
    conversation: [],
    conversationVersion: 0,
    replyIterations: [],
    iteration: 0,
    budgets: { ...input.budgets },
    tokens: emptyUsage(),
    costUsd: 0,
    modelCalls: 0,
    lastRequestTokens: 0,
    lastRequestCharacters: 0,
    model: input.model ?? null,
    answeredBy: null,
    lastThought: '',
    toolCalls: [],
    pendingHints: [],
    stopRequested: null,
    textOnlyRepliesInARow: 0,
    guardrailRefusals: 0,
    rootCause: null,
    fixSummary: null,
    compactions: 0,
    workflowRuns: 1,
    resumedFrom: input.resumeFrom ?? null,
  };
}

/**
 * Continues an earlier run that ended (on its budget, a stop, an error): its conversation,
 * workspace log, baseline and usage carry over, and the model is told it goes on. The time
 * budget goes on counting from where the earlier run stopped (as tokens and cost do).
 */
export function resumeEarlierState(
  state: RunState,
  earlier: RunState,
  from: { workflowId: string; elapsedMs?: number; now: number },
): void {
  Object.assign(state, {
    startedAt: from.now - (from.elapsedMs ?? 0),
    snapshot: earlier.snapshot,
    workspace: earlier.workspace,
    baseline: earlier.baseline,
    lastSuiteRun: earlier.lastSuiteRun,
    conversation: earlier.conversation,
    conversationVersion: earlier.conversationVersion + 1,
    replyIterations: earlier.replyIterations,
    iteration: earlier.iteration,
    tokens: earlier.tokens,
    costUsd: earlier.costUsd,
    costNote: earlier.costNote ?? null,
    modelCalls: earlier.modelCalls,
    lastRequestTokens: earlier.lastRequestTokens,
    lastRequestCharacters: earlier.lastRequestCharacters,
    model: earlier.model,
    answeredBy: earlier.answeredBy,
    modelUsage: earlier.modelUsage,
    lastThought: earlier.lastThought,
    toolCalls: earlier.toolCalls,
    earlierToolCalls: earlier.earlierToolCalls,
    rootCause: earlier.rootCause,
    fixSummary: earlier.fixSummary,
    compactions: earlier.compactions,
    waitedForHostMs: earlier.waitedForHostMs,
    workflowRuns: earlier.workflowRuns + 1,
    resumedFrom: from.workflowId,
  } satisfies Partial<RunState>);
  repairState(state, 'the earlier run ended there');
  appendUserText(state.conversation, prompts.resumed(from.workflowId));
}

/** The first message: the task, with the baseline test run (nothing when the conversation has begun). */
export function seedConversation(state: RunState, input: DebugInput): void {
  if (state.conversation.length > 0 || !state.snapshot || !state.baseline) return;
  state.conversation.push(
    userText(
      prompts.taskPrompt({
        repositoryName: state.snapshot.repositoryName,
        goal: input.goal ?? prompts.defaultGoal,
        testCommand: state.snapshot.testCommand,
        baseline: state.baseline,
        attemptInstruction: input.attempt?.instruction,
      }),
    ),
  );
}

/** Makes the stored conversation valid to send, whatever wrote it; its readers can tell that earlier messages changed. */
export function repairState(state: RunState, reason: string): void {
  if (repairConversation(state.conversation, reason) > 0) state.conversationVersion += 1;
}

/** Starts the next iteration: the user's hints join the conversation, which is made valid to send. */
export function beginIteration(state: RunState): void {
  state.iteration += 1;
  for (const hint of state.pendingHints.splice(0)) appendUserText(state.conversation, prompts.hintFromUser(hint));
  repairState(state, 'the run was interrupted');
}

// ── Budgets and the context window ─────────────────────────────────────────────────────────

/** The run's time as its time budget counts it: since it started, less the time it waited for a sandbox host. */
export function workingMs(state: Pick<RunState, 'startedAt' | 'waitedForHostMs'>, now: number): number {
  return now - state.startedAt - (state.waitedForHostMs ?? 0);
}

/** A stop asked for or a spent budget, before the next model call. */
export function stopBeforeNextCall(state: RunState, now: number): Stop | null {
  if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
  // Measuring the conversation serializes all of it, every iteration: only a token budget reads it.
  const characters =
    state.budgets.maxTokens === undefined ? state.lastRequestCharacters : conversationBytes(state.conversation);
  return budgetStop(state.budgets, budgetUsage(state, workingMs(state, now), characters));
}

/** A stop signal or the time budget ends a wait for a model worker (the waiting iteration is not spent). */
export function stopWhileWaiting(state: RunState, now: number): Stop | null {
  if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
  const budgets = { ...state.budgets, maxTokens: undefined, maxCostUsd: undefined };
  return budgetStop(budgets, {
    iterations: state.iteration - 1,
    tokens: state.tokens,
    costUsd: state.costUsd,
    elapsedMs: workingMs(state, now),
    nextRequestTokens: 0,
  });
}

/** A raise covers whatever budget is spent, so a paused run goes on (the same rule as `resume`); the model is told. */
export function raiseBudgets(state: RunState, input: DebugInput, asked: BudgetRaise, now: number): void {
  const usage = budgetUsage(state, workingMs(state, now));
  const raise = completeRaise(asked, state.budgets, usage, input.budgets);
  const { budgets, applied } = applyRaise(state.budgets, usage, raise);
  state.budgets = budgets;
  if (Object.keys(applied).length > 0) state.pendingHints.push(prompts.budgetRaised(describeRaise(applied)));
}

// ── One model call ─────────────────────────────────────────────────────────────────────────

/** Counts a model call's tokens and cost, and what the next request's size is estimated from. */
export function recordModelCall(
  state: RunState,
  call: Pick<ModelReply, 'usage' | 'costUsd' | 'budgetCostUsd' | 'priceNote' | 'model' | 'answeredBy' | 'notStreamed'>,
  requestCharacters = conversationBytes(state.conversation),
): void {
  state.modelCalls += 1;
  state.tokens = addUsage(state.tokens, call.usage);
  const cost = addCallCost(
    { costUsd: state.costUsd, costNote: state.costNote ?? null },
    call,
    state.budgets.maxCostUsd !== undefined,
  );
  state.costUsd = cost.costUsd;
  state.costNote = cost.costNote;
  state.lastRequestTokens = requestInputTokens(call.usage);
  state.lastRequestCharacters = requestCharacters;
  state.model = call.model;
  state.answeredBy = call.answeredBy;
  if (call.notStreamed) state.repliesNotStreamed = true;
}

/**
 * The iteration of each assistant message of the conversation, as the workflow counts them;
 * null when the state does not know them all (written by older code).
 */
export function replyIterationsOf(state: Pick<RunState, 'conversation' | 'replyIterations'>): number[] | null {
  const replies = state.conversation.filter((message) => message.role === 'assistant').length;
  return state.replyIterations && state.replyIterations.length === replies ? state.replyIterations : null;
}

// ── The sandbox's view of the run ──────────────────────────────────────────────────────────

export function sandboxSettings(state: RunState, input: DebugInput): SandboxSettings {
  return {
    testCommand: (state.snapshot as NonNullable<RunState['snapshot']>).testCommand,
    allowTestEdits: input.allowTestEdits,
    testFileGlobs: input.testFileGlobs,
    limits: sandboxLimitsOf(state, input),
    observation: input.observation,
  };
}

/** The run's sandbox limits, raised where the repository's durable-debugger.json asks. */
export function sandboxLimitsOf(state: RunState, input: DebugInput): SandboxLimits {
  return effectiveLimits(input.sandbox, state.snapshot?.sandboxLimits);
}

export function workspaceDigest(state: RunState): string {
  return (state.workspace as NonNullable<RunState['workspace']>).digest;
}

// ── The end: the report ────────────────────────────────────────────────────────────────────

/**
 * Readies the state to end: the run may be resumed from its saved state, so that query must
 * stay under the payload limit too.
 */
export function shrinkForCheckpoint(state: RunState): void {
  if (fitConversationToBudget(state.conversation, conversationByteBudget) > 0) state.conversationVersion += 1;
}

/** The tests after the run are known (the suite ran on this workspace) or must be run; none when the run never got that far. */
export function testsAfterRun(state: RunState, stop: Stop): { known: TestSummary } | 'run' | 'none' {
  const workspace = state.workspace;
  if (stop.condition === 'no_failing_tests' || stop.condition === 'environment_error' || !workspace) return 'none';
  // Stopped before any host held its sandbox: nothing ran (a test run would fail before it was asked for).
  if (!state.sandbox) return 'none';
  // Only the workflow's own run of the whole suite counts, never the model's run_tests.
  if (state.lastSuiteRun && state.lastSuiteRun.digest === workspace.digest)
    return { known: state.lastSuiteRun.summary };
  return 'run';
}

export interface RunEnd {
  workflowId: string;
  stop: Stop;
  testsAfter: TestSummary | null;
  patch: PatchForReport;
  /** What went wrong while ending the run (the final test run, the patch), in words. */
  problems: string[];
  now: number;
}

export function buildReport(state: RunState, input: DebugInput, end: RunEnd): DebugReport {
  return {
    workflowId: end.workflowId,
    repository: input.repo,
    status: statusFor(end.stop.condition),
    stopCondition: end.stop.condition,
    stopDetail: end.stop.detail,
    model: state.model,
    answeredBy: state.answeredBy,
    ...(state.modelUsage ? { modelUsage: state.modelUsage } : {}),
    rootCause: state.rootCause,
    fixSummary: state.fixSummary,
    patch: end.patch.patch,
    fullPatch: end.patch.fullPatch,
    ...(end.patch.leftOut?.length ? { leftOutOfPatch: end.patch.leftOut } : {}),
    testsBefore: state.baseline ?? null,
    testsAfter: end.testsAfter,
    testCommand: state.snapshot?.testCommand ?? null,
    iterations: state.iteration,
    tokens: state.tokens,
    costUsd: state.costUsd,
    costNote: state.costNote ?? null,
    ...(state.repliesNotStreamed ? { streamNote: repliesNotStreamedNote } : {}),
    durationMs: end.now - state.startedAt,
    toolCalls: state.toolCalls,
    earlierToolCalls: state.earlierToolCalls ?? 0,
    workflowRuns: state.workflowRuns,
    compactions: state.compactions,
    resumedFrom: state.resumedFrom,
    problems: [...end.problems, ...outOfMemoryProblem(state, end)],
    environment: state.environment ?? null,
  };
}

/** Said once in the report of a run whose model endpoint answered whole replies (src/model/wholeReplies.ts). */
export const repliesNotStreamedNote =
  'the model endpoint answered streaming requests with whole replies (some gateways do): replies were not streamed, so nothing was shown while the model wrote';

/** A run that did not end fixed because the suite ran out of memory says so, with the limit and how to raise it. */
function outOfMemoryProblem(state: RunState, end: RunEnd): string[] {
  if (end.stop.condition === 'finish_verified') return [];
  const last = end.testsAfter ?? state.baseline;
  return last?.outOfMemory ? [describeOutOfMemory(last.outOfMemory)] : [];
}

// ── The status view ────────────────────────────────────────────────────────────────────────

/** What the status query answers. */
export function statusView(
  state: RunState,
  input: DebugInput,
  live: { now: number; awaitingApproval: RunStatusView['awaitingApproval']; waitingFor: string | null },
): RunStatusView {
  return {
    phase: state.phase,
    iteration: state.iteration,
    maxIterations: state.budgets.maxIterations,
    lastThought: state.lastThought,
    tokens: state.tokens,
    costUsd: state.costUsd,
    costNote: state.costNote ?? null,
    budgets: state.budgets,
    elapsedMs: live.now - state.startedAt,
    waitedForHostMs: state.waitedForHostMs ?? 0,
    toolCalls: state.toolCalls.length + (state.earlierToolCalls ?? 0),
    model: state.model,
    answeredBy: state.answeredBy,
    repository: input.repo,
    testsBefore: state.baseline ?? null,
    workflowRuns: state.workflowRuns,
    stopRequested: state.stopRequested,
    awaitingApproval: live.awaitingApproval,
    environment: state.environment,
    modelEndpoint: input.modelEndpoint ?? defaultModelEndpoint,
    waitingFor: live.waitingFor,
  };
}

/** The one line a run shows in the Temporal UI while it works. */
export function progressLine(state: RunState, phase: Phase): string {
  return (
    `phase: ${phase} · iteration ${state.iteration}/${state.budgets.maxIterations} · ${totalTokens(state.tokens)} tokens` +
    (state.costUsd === null ? '' : ` · $${state.costUsd.toFixed(4)}`)
  );
}
