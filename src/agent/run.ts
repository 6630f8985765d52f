// The run core: what one debugging run remembers and every rule of its loop, without Temporal.
// The workflow (workflows/debugRepository.ts) and the plain loop (bench/plainLoop.ts) both
// drive it: they do the I/O (model calls, tools, test runs); this decides what each result
// means for the run. Pure and deterministic: the time comes in as `now`.
import {
  addCallCost,
  addUsage,
  budgetStop,
  emptyUsage,
  estimateTokens,
  requestInputTokens,
  totalTokens,
  type Stop,
  type TokenUsage,
} from './budgets.js';
import { applyRaise, budgetUsage, completeRaise, describeRaise, type BudgetRaise } from './budgetRaise.js';
import { compactConversation, fitConversationToBudget } from './compaction.js';
import {
  appendExchange,
  appendUserText,
  conversationBytes,
  repairConversation,
  userText,
  type AssistantBlock,
  type AssistantMessage,
  type StopReason,
  type ToolCall,
  type ToolResultBlock,
} from './conversation.js';
import type { DebugInput } from './input.js';
import { defaultModelEndpoint } from './modelEndpoint.js';
import { conversationByteBudget, dropOldestRecords, exceedsBytes } from './payloads.js';
import * as prompts from './prompts.js';
import { appendReply, planReply, sortToolCalls } from './reply.js';
import { statusFor, type DebugReport, type PatchForReport } from './report.js';
import type { Phase, RunState, RunStatusView } from './runState.js';
import type { SandboxSettings, ToolOutcome } from './sandboxProtocol.js';
import { verifyFix, type TestSummary } from './testResults.js';
import { describeToolCall, type ParsedToolCall } from './tools.js';

/** Test-file edits refused in one run before it ends (the model keeps trying to change the tests). */
export const maxGuardrailRefusals = 3;

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

/** A stop asked for or a spent budget, before the next model call. */
export function stopBeforeNextCall(state: RunState, now: number): Stop | null {
  if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
  return budgetStop(state.budgets, budgetUsage(state, now - state.startedAt));
}

/** A stop signal or the time budget ends a wait for a model worker (the waiting iteration is not spent). */
export function stopWhileWaiting(state: RunState, now: number): Stop | null {
  if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
  const budgets = { ...state.budgets, maxTokens: undefined, maxCostUsd: undefined };
  return budgetStop(budgets, {
    iterations: state.iteration - 1,
    tokens: state.tokens,
    costUsd: state.costUsd,
    elapsedMs: now - state.startedAt,
    nextRequestTokens: 0,
  });
}

/** A raise covers whatever budget is spent, so a paused run goes on (the same rule as `resume`); the model is told. */
export function raiseBudgets(state: RunState, input: DebugInput, asked: BudgetRaise, now: number): void {
  const usage = budgetUsage(state, now - state.startedAt);
  const raise = completeRaise(asked, state.budgets, usage, input.budgets);
  const { budgets, applied } = applyRaise(state.budgets, usage, raise);
  state.budgets = budgets;
  if (Object.keys(applied).length > 0) state.pendingHints.push(prompts.budgetRaised(describeRaise(applied)));
}

/**
 * Compacts old observations before a request would overflow the model's context window, or
 * the conversation Temporal's payload limit; a stop when it cannot be brought under that limit.
 */
export function compactIfContextIsFull(state: RunState, input: DebugInput): Stop | null {
  const limit = input.contextWindowTokens * 0.9 - input.maxOutputTokens;
  state.earlierToolCalls = (state.earlierToolCalls ?? 0) + dropOldestRecords(state.toolCalls);
  // One serialization serves both checks (this runs before every model call); a second one only after compacting.
  const text = JSON.stringify(state.conversation);
  if (budgetUsage(state, 0, text.length).nextRequestTokens <= limit && !exceedsBytes(text, conversationByteBudget))
    return null;
  compact(state);
  if (!exceedsBytes(JSON.stringify(state.conversation), conversationByteBudget)) return null;
  return {
    condition: 'context_exhausted',
    detail: `the conversation cannot be brought under its size limit of ${conversationByteBudget} bytes`,
  };
}

/** Shortens the oldest observations once, as a block (more when the conversation is over its size limit); false when there was nothing left to shorten. */
export function compact(state: RunState): boolean {
  const shortened =
    compactConversation(state.conversation) + fitConversationToBudget(state.conversation, conversationByteBudget);
  if (shortened === 0) return false;
  state.compactions += 1;
  // Readers of the transcript (the model activity) can tell the earlier messages changed.
  state.conversationVersion += 1;
  state.lastRequestCharacters = conversationBytes(state.conversation);
  state.lastRequestTokens = Math.min(state.lastRequestTokens, estimateTokens(state.lastRequestCharacters));
  return true;
}

// ── One model reply ────────────────────────────────────────────────────────────────────────

/** What the run reads of a model call's answer. */
export interface ModelCallFacts {
  content: AssistantBlock[];
  stopReason: StopReason | string;
  usage: TokenUsage;
  /** At the model's listed price; null when it has none. */
  costUsd: number | null;
  budgetCostUsd?: number;
  priceNote?: string | null;
  model: string;
  answeredBy: string;
  /** Tool calls whose input was too large to keep: they are answered with an error. */
  oversizedToolInputs?: Array<{ id: string; bytes: number }>;
}

/** Counts a model call's tokens and cost, and what the next request's size is estimated from. */
export function recordModelCall(
  state: RunState,
  call: ModelCallFacts,
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
}

export type RunnableCall = Extract<ParsedToolCall, { ok: true }>;

/** A reply that asks for tools: what runs, and the results gathered until the turn is appended as one unit. */
export interface Turn {
  assistant: AssistantMessage;
  notes: string[];
  /** The reply's tool calls in its order: the results are appended in this order. */
  calls: ToolCall[];
  /** Run one group after the other: consecutive reads form one parallel group, each mutation is its own. */
  groups: RunnableCall[][];
  /** The first valid finish call: verified after the others ran. */
  finish: RunnableCall | null;
  results: Map<string, ToolResultBlock>;
}

export type Step = { next: 'stop'; stop: Stop } | { next: 'again' } | { next: 'act'; turn: Turn };

/**
 * What one reply means: a stop, another model call (a paused turn, a nudge after a reply
 * without tools, a compaction), or tool calls to run. Whatever needs no tool result is
 * appended here; a paused turn that this reply continues is merged into it.
 */
export function takeReply(
  state: RunState,
  reply: Pick<ModelCallFacts, 'content' | 'stopReason' | 'oversizedToolInputs'>,
  options: { allowCommands: boolean },
): Step {
  const last = state.conversation[state.conversation.length - 1];
  const paused = last?.role === 'assistant' ? (state.conversation.pop() as AssistantMessage) : undefined;
  if (paused) state.replyIterations?.pop();
  const plan = planReply({
    content: reply.content,
    stopReason: reply.stopReason,
    paused,
    textOnlyRepliesInARow: state.textOnlyRepliesInARow ?? 0,
  });
  state.textOnlyRepliesInARow = plan.textOnlyRepliesInARow;
  state.lastThought = plan.thought || state.lastThought;
  switch (plan.next) {
    case 'stop':
      appendReply(state.conversation, plan.assistant, []);
      noteReply(state, plan.assistant);
      return { next: 'stop', stop: plan.stop };
    case 'compact':
      if (compact(state)) return { next: 'again' };
      return {
        next: 'stop',
        stop: { condition: 'context_exhausted', detail: 'the conversation no longer fits the model’s context window' },
      };
    case 'pause':
      if (plan.assistant) state.conversation.push(plan.assistant);
      noteReply(state, plan.assistant);
      return { next: 'again' };
    case 'nudge':
      appendReply(state.conversation, plan.assistant, [], plan.notes);
      noteReply(state, plan.assistant);
      return { next: 'again' };
    case 'act':
      return {
        next: 'act',
        turn: startTurn(
          state,
          plan.assistant as AssistantMessage,
          plan.calls,
          plan.notes,
          reply.oversizedToolInputs,
          options,
        ),
      };
  }
}

/** Keeps the iteration of an assistant message that joined the conversation. */
function noteReply(state: RunState, assistant: AssistantMessage | null): void {
  if (assistant) state.replyIterations?.push(state.iteration);
}

/**
 * The iteration of each assistant message of the conversation, as the workflow counts them;
 * null when the state does not know them all (written by older code).
 */
export function replyIterationsOf(state: Pick<RunState, 'conversation' | 'replyIterations'>): number[] | null {
  const replies = state.conversation.filter((message) => message.role === 'assistant').length;
  return state.replyIterations && state.replyIterations.length === replies ? state.replyIterations : null;
}

/** Sorts a reply's calls: bad ones are answered at once, the finish call's claims are kept for the report. */
function startTurn(
  state: RunState,
  assistant: AssistantMessage,
  calls: ToolCall[],
  notes: string[],
  oversizedInputs: ModelCallFacts['oversizedToolInputs'],
  options: { allowCommands: boolean },
): Turn {
  const sorted = sortToolCalls(calls, { allowCommands: options.allowCommands, oversizedInputs });
  const turn: Turn = {
    assistant,
    notes,
    calls,
    groups: groupCalls(sorted.runnable),
    finish: sorted.finish,
    results: new Map(),
  };
  for (const { call, description, error } of sorted.refused)
    recordResult(state, turn, call, description, { content: error, isError: true });
  if (sorted.finish) {
    state.rootCause = String(sorted.finish.input.root_cause);
    state.fixSummary = typeof sorted.finish.input.summary === 'string' ? sorted.finish.input.summary : null;
  }
  return turn;
}

/** Consecutive reads form one parallel group; each mutation is its own group, in order. */
export function groupCalls(calls: RunnableCall[]): RunnableCall[][] {
  const groups: RunnableCall[][] = [];
  for (const call of calls) {
    const last = groups[groups.length - 1];
    if (call.effect === 'read' && last && last[0]?.effect === 'read') last.push(call);
    else groups.push([call]);
  }
  return groups;
}

/** A tool's outcome: the workspace log grows by its mutations, a guardrail refusal counts, and its result is kept. */
export function applyToolOutcome(state: RunState, turn: Turn, call: RunnableCall, outcome: ToolOutcome): void {
  const workspace = state.workspace;
  if (workspace) {
    if (outcome.mutations.length > 0) workspace.mutations.push(...outcome.mutations);
    workspace.digest = outcome.digest;
    if (outcome.refusedBy === 'test-file-guardrail') state.guardrailRefusals += 1;
  }
  recordResult(state, turn, call, describeToolCall(call.name, call.input), outcome);
}

function recordResult(
  state: RunState,
  turn: Turn,
  call: { id: string; name: string },
  description: string,
  outcome: { content: string; isError: boolean },
): void {
  state.toolCalls.push({ iteration: state.iteration, name: call.name, description, isError: outcome.isError });
  turn.results.set(call.id, {
    type: 'tool_result',
    tool_use_id: call.id,
    content: outcome.content,
    ...(outcome.isError ? { is_error: true } : {}),
  });
}

// ── The finish call ────────────────────────────────────────────────────────────────────────

/** The answer to a finish call: what its tool_result says, and whether the run ends there. */
export interface FixReview {
  accepted: boolean;
  message: string;
  stop: Stop | null;
}

export interface FixVerdict {
  fixed: boolean;
  /** What the model is told when the fix is not verified. */
  message: string;
}

export const verifiedStop: Stop = {
  condition: 'finish_verified',
  detail: 'finish was called and the fix was verified',
};

/** The model's claim is never trusted: the fix is judged by the suite run after it, against the baseline. */
export function judgeFix(baseline: TestSummary, after: TestSummary): FixVerdict {
  const verdict = verifyFix(baseline, after);
  return { fixed: verdict.fixed, message: prompts.verificationFailed(verdict.reason, after) };
}

/** The answer from the verification alone (when no person is asked to approve). */
export function reviewVerdict(verdict: FixVerdict): FixReview {
  if (!verdict.fixed) return { accepted: false, message: verdict.message, stop: null };
  return { accepted: true, message: prompts.fixVerified, stop: verifiedStop };
}

/**
 * Appends the assistant message and ALL its results (the finish call's answer last) as one
 * unit; the stop that ends the run there, if any.
 */
export function completeTurn(state: RunState, turn: Turn, review: FixReview | null): Stop | null {
  const results = turn.calls
    .map((call) => turn.results.get(call.id))
    .filter((result): result is ToolResultBlock => Boolean(result));
  if (turn.finish && review) {
    state.toolCalls.push({
      iteration: state.iteration,
      name: 'finish',
      description: 'finish',
      isError: !review.accepted,
    });
    results.push({
      type: 'tool_result',
      tool_use_id: turn.finish.id,
      content: review.message,
      is_error: !review.accepted,
    });
    appendExchange(state.conversation, turn.assistant, results, turn.notes);
    noteReply(state, turn.assistant);
    return review.stop;
  }
  appendExchange(state.conversation, turn.assistant, results, turn.notes);
  noteReply(state, turn.assistant);
  if (state.guardrailRefusals >= maxGuardrailRefusals)
    return { condition: 'guardrail', detail: 'the model kept trying to change test files' };
  return null;
}

// ── The sandbox's view of the run ──────────────────────────────────────────────────────────

export function sandboxSettings(state: RunState, input: DebugInput): SandboxSettings {
  return {
    testCommand: (state.snapshot as NonNullable<RunState['snapshot']>).testCommand,
    allowTestEdits: input.allowTestEdits,
    testFileGlobs: input.testFileGlobs,
    limits: input.sandbox,
    observation: input.observation,
  };
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
    testsBefore: state.baseline ?? null,
    testsAfter: end.testsAfter,
    testCommand: state.snapshot?.testCommand ?? null,
    iterations: state.iteration,
    tokens: state.tokens,
    costUsd: state.costUsd,
    costNote: state.costNote ?? null,
    durationMs: end.now - state.startedAt,
    toolCalls: state.toolCalls,
    earlierToolCalls: state.earlierToolCalls ?? 0,
    workflowRuns: state.workflowRuns,
    compactions: state.compactions,
    resumedFrom: state.resumedFrom,
    problems: end.problems,
    environment: state.environment ?? null,
  };
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
