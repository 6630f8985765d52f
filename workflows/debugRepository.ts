// The durable ReAct loop. Deterministic: all I/O happens in activities; the conversation,
// the budgets and the workspace's mutation log live in this workflow's state.
//
//   seed the conversation with the task
//   while budget remains:
//       response = callModel(conversation)
//       split it into thought + tool calls; stop on finish or when there is nothing to do
//       run every tool call; append the assistant message and ALL results as one unit
//   verify by running the tests ourselves; report
import {
  ActivityFailure,
  ApplicationFailure,
  TemporalFailure,
  CancellationScope,
  isCancellation,
  ContinueAsNew,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { ModelActivities, ModelCallResult } from '../activities/model.js';
import type { HostActivities, SharedActivities } from '../activities/sandbox.js';
import {
  addCallCost,
  addUsage,
  budgetStop,
  emptyUsage,
  estimateTokens,
  requestInputTokens,
  totalTokens,
  type Stop,
} from '../src/agent/budgets.js';
import { applyRaise, budgetUsage, completeRaise, describeRaise, raiseProblem } from '../src/agent/budgetRaise.js';
import { compactConversation, fitConversationToBudget } from '../src/agent/compaction.js';
import { appendReply, planReply, sortToolCalls } from '../src/agent/reply.js';
import { conversationDelta, type SentConversation } from '../src/agent/conversationDelta.js';
import {
  appendExchange,
  appendUserText,
  conversationBytes,
  repairConversation,
  toolCallsOf,
  userText,
  type AssistantMessage,
  type ToolCall,
  type ToolResultBlock,
} from '../src/agent/conversation.js';
import { InvalidInputError, parseDebugInput, type DebugInput } from '../src/agent/input.js';
import { continueAsNewHistoryBytes, conversationByteBudget, dropOldestRecords, jsonBytes } from '../src/agent/payloads.js';
import { defaultModelEndpoint, modelTaskQueueFor, waitingForModelWorker } from '../src/agent/modelEndpoint.js';
import * as prompts from '../src/agent/prompts.js';
import { statusFor, type DebugReport, type PatchForReport } from '../src/agent/report.js';
import type { RunState, RunStatusView } from '../src/agent/runState.js';
import { sandboxNeedsPrepare, type RepositorySnapshot, type SandboxSettings, type ToolOutcome } from '../src/agent/sandboxProtocol.js';
import { describeEnvironment, environmentFailure, environmentForSandbox } from '../src/agent/environment.js';
import { sandboxIdFor } from '../src/agent/ids.js';
import { testsFailed, verifyFix, type TestSummary } from '../src/agent/testResults.js';
import { describeToolCall, type ParsedToolCall } from '../src/agent/tools.js';
import {
  savedStateQuery,
  hintSignal,
  raiseBudgetUpdate,
  searchAttributes,
  statusQuery,
  stopSignal,
  transcriptQuery,
  type BudgetRaise,
} from '../src/temporal/definitions.js';
import { ApprovalGate } from './approval.js';
import { runAttempts } from './attempts.js';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InvalidInput'] },
});

/** Model calls go to the workers of the run's model endpoint; when none takes them, they wait (and say so). */
function modelActivities(endpoint: string | undefined) {
  return proxyActivities<ModelActivities>({
    taskQueue: modelTaskQueueFor(workflowInfo().taskQueue, endpoint),
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
  });
}

/** Sandbox activities go to the worker that holds the container; if it is gone, they time out waiting to start. */
function hostActivities(hostTaskQueue: string, commandTimeoutSeconds: number) {
  return proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: `${commandTimeoutSeconds + 120} seconds`,
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 5, nonRetryableErrorTypes: [sandboxNeedsPrepare] },
  });
}

/** The environment step: long (installs), with heartbeats carrying the installer's output; a failed install is not retried. */
function environmentActivities(hostTaskQueue: string) {
  return proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', maximumAttempts: 3, nonRetryableErrorTypes: [environmentFailure, 'InvalidInput'] },
  });
}

/** The message of an environment that could not be made; anything else is not handled here. */
function environmentFailureMessage(error: unknown): string {
  if (isFailureOfType(error, environmentFailure)) return (error as ActivityFailure).cause?.message ?? 'the environment could not be made';
  throw error;
}

export interface CarriedState {
  state: RunState;
}

export async function debugRepository(rawInput: unknown, carried?: CarriedState): Promise<DebugReport> {
  const input = validateInput(rawInput);
  if (input.attempts > 1) return runAttempts(input);
  const run = new DebugRun(input, carried?.state);
  run.registerHandlers();
  let continuing = false;
  try {
    return await run.execute();
  } catch (error) {
    continuing = error instanceof ContinueAsNew;
    // A bad repository or resumeFrom is the user's input: say so at the top, not inside an activity failure.
    if (isFailureOfType(error, 'InvalidInput')) {
      throw ApplicationFailure.nonRetryable((error as ActivityFailure).cause?.message ?? 'Invalid input', 'InvalidInput');
    }
    // Every run ends with a report, also when its sandbox or an activity kept failing.
    if (!continuing && error instanceof TemporalFailure && !isCancellation(error)) {
      return await run.finish({ condition: 'internal_error', detail: `the run could not go on: ${failureMessage(error)}` });
    }
    throw error;
  } finally {
    if (!continuing) await CancellationScope.nonCancellable(() => run.destroySandbox());
  }
}

function validateInput(raw: unknown): DebugInput {
  try {
    return parseDebugInput(raw);
  } catch (error) {
    if (error instanceof InvalidInputError) throw ApplicationFailure.nonRetryable(error.message, 'InvalidInput');
    throw error;
  }
}

/** Iterations and cost reach the search attributes at most this often (and at the end). */
const progressPublishIntervalMs = 5_000;

class DebugRun {
  private readonly state: RunState;
  private iterationAtRunStart: number;
  private preparing: Promise<void> | null = null;
  private markedRunning = false;
  private readonly approval: ApprovalGate;
  /** Set while the model call waits for a worker of the run's endpoint. */
  private waitingFor: string | null = null;
  /** What this workflow run's previous model call carried of the conversation. */
  private sentConversation: SentConversation | null = null;
  /** Workflow time of the last upsert of iterations and cost (publishProgress). */
  private progressPublishedAt = -Infinity;

  constructor(
    private readonly input: DebugInput,
    carried: RunState | undefined,
  ) {
    this.state = carried ?? {
      phase: 'preparing',
      startedAt: Date.now(),
      conversation: [],
      conversationVersion: 0,
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
    if (carried) this.state.workflowRuns += 1;
    this.iterationAtRunStart = this.state.iteration;
    this.approval = new ApprovalGate({
      enabled: input.approve,
      timeoutMinutes: input.approvalTimeoutMinutes,
      stopRequested: () => this.state.stopRequested,
      setPhase: (phase) => this.setPhase(phase),
    });
  }

  registerHandlers(): void {
    this.approval.register();
    setHandler(statusQuery, () => this.statusView());
    setHandler(transcriptQuery, () => ({ messages: this.state.conversation, version: this.state.conversationVersion }));
    setHandler(savedStateQuery, () => ({ input: this.input, state: this.state }));
    setHandler(hintSignal, (text: string) => {
      if (typeof text === 'string' && text.trim()) this.state.pendingHints.push(text.trim());
    });
    setHandler(stopSignal, (reason?: string) => {
      this.state.stopRequested = typeof reason === 'string' && reason.trim() ? reason.trim() : 'stop requested by the user';
    });
    setHandler(raiseBudgetUpdate, (raise: BudgetRaise) => this.raiseBudgets(raise), {
      validator: (raise: BudgetRaise) => {
        const problem = raiseProblem(raise, this.state.phase === 'paused');
        if (problem) throw new Error(problem);
      },
    });
  }

  /** A raise covers whatever budget is spent, so a paused run goes on (the same rule as `resume`). */
  private raiseBudgets(asked: BudgetRaise): RunStatusView {
    const usage = budgetUsage(this.state, Date.now() - this.state.startedAt);
    const raise = completeRaise(asked, this.state.budgets, usage, this.input.budgets);
    const { budgets, applied } = applyRaise(this.state.budgets, usage, raise);
    this.state.budgets = budgets;
    if (Object.keys(applied).length > 0) this.state.pendingHints.push(prompts.budgetRaised(describeRaise(applied)));
    return this.statusView();
  }

  async execute(): Promise<DebugReport> {
    const state = this.state;
    if (this.input.resumeFrom && !state.snapshot) await this.resumeEarlierRun(this.input.resumeFrom);
    if (!state.snapshot) {
      this.setPhase('preparing');
      const snapshot = await shared.snapshotRepository.executeWithOptions({ summary: `snapshot ${this.input.repo}` }, [
        { repo: this.input.repo, testCommand: this.input.testCommand },
      ]);
      state.snapshot = snapshot;
      state.workspace = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
    }
    const snapshot = state.snapshot;
    if (!state.sandbox) {
      // A repository whose dependencies cannot be installed ends here, before any model call.
      const failure = await this.moveSandbox().then(() => null, environmentFailureMessage);
      if (failure) return this.finish({ condition: 'environment_error', detail: failure });
    }

    if (!state.baseline) {
      this.setPhase('baseline');
      state.baseline = await this.runTestSuite('baseline test run');
      if (!testsFailed(state.baseline)) {
        return this.finish({ condition: 'no_failing_tests', detail: 'the tests already pass: there is nothing to fix' });
      }
    }
    if (state.conversation.length === 0) {
      state.conversation.push(
        userText(
          prompts.taskPrompt({
            repositoryName: snapshot.repositoryName,
            goal: this.input.goal ?? prompts.defaultGoal,
            testCommand: snapshot.testCommand,
            baseline: state.baseline,
            attemptInstruction: this.input.attempt?.instruction,
          }),
        ),
      );
    }
    // A run that was interrupted between a model reply and its tool results never sends half an exchange.
    this.repairConversation('the run was interrupted');

    for (;;) {
      const stop = await this.stopOrWaitForMoreBudget();
      if (stop) return this.finish(stop);
      const overflow = this.compactIfContextIsFull();
      if (overflow) return this.finish(overflow);
      await this.continueAsNewIfDue();

      state.iteration += 1;
      for (const hint of state.pendingHints.splice(0)) appendUserText(state.conversation, prompts.hintFromUser(hint));

      this.setPhase('thinking');
      this.repairConversation('the run was interrupted');
      let turn: ModelCallResult;
      try {
        turn = await this.callModel();
      } catch (error) {
        if (error instanceof StoppedWhileWaiting) return this.finish(error.stop);
        const failure = modelFailure(error);
        if (failure) return this.finish({ condition: 'model_error', detail: failure });
        throw error;
      }
      // A reply that continues a paused turn completes that assistant message.
      const paused = state.conversation[state.conversation.length - 1]?.role === 'assistant' ? (state.conversation.pop() as AssistantMessage) : undefined;
      const reply = planReply({ content: turn.content, stopReason: turn.stopReason, paused, textOnlyRepliesInARow: state.textOnlyRepliesInARow ?? 0 });
      state.textOnlyRepliesInARow = reply.textOnlyRepliesInARow;
      state.lastThought = reply.thought || state.lastThought;

      if (reply.next === 'stop') {
        appendReply(state.conversation, reply.assistant, []);
        return this.finish(reply.stop);
      }
      if (reply.next === 'compact') {
        if (!this.compact()) {
          return this.finish({ condition: 'context_exhausted', detail: 'the conversation no longer fits the model’s context window' });
        }
        continue;
      }
      if (reply.next === 'pause') {
        if (reply.assistant) state.conversation.push(reply.assistant);
        continue;
      }
      if (reply.next === 'nudge') {
        appendReply(state.conversation, reply.assistant, [], reply.notes);
        continue;
      }
      const assistant = reply.assistant as AssistantMessage;
      const calls = reply.calls;

      this.setPhase('acting');
      const { results, finishCall } = await this.runToolCalls(calls, turn);
      if (finishCall) {
        // A verified fix may wait for a person's approval (workflows/approval.ts).
        const review = await this.approval.review(await this.verify(), state.workspace);
        state.toolCalls.push({ iteration: state.iteration, name: 'finish', description: 'finish', isError: !review.accepted });
        results.push({ type: 'tool_result', tool_use_id: finishCall.id, content: review.message, is_error: !review.accepted });
        appendExchange(state.conversation, assistant, results, reply.notes);
        if (review.stop) return this.finish(review.stop);
        continue;
      }
      appendExchange(state.conversation, assistant, results, reply.notes);
      if (state.guardrailRefusals >= 3) {
        return this.finish({ condition: 'guardrail', detail: 'the model kept trying to change test files' });
      }
    }
  }

  /**
   * Continues an earlier run that ended (on its budget, a stop, an error): its conversation,
   * workspace log, baseline and usage carry over; its sandbox is rebuilt here from the log.
   */
  private async resumeEarlierRun(workflowId: string): Promise<void> {
    const { state: earlier, elapsedMs } = await shared.loadSavedState.executeWithOptions({ summary: `load the state of ${workflowId}` }, [{ workflowId }]);
    const state = this.state;
    Object.assign(state, {
      // The time budget goes on counting from where the earlier run stopped (as tokens and cost do).
      startedAt: Date.now() - (elapsedMs ?? 0),
      snapshot: earlier.snapshot,
      workspace: earlier.workspace,
      baseline: earlier.baseline,
      lastSuiteRun: earlier.lastSuiteRun,
      conversation: earlier.conversation,
      conversationVersion: earlier.conversationVersion + 1,
      iteration: earlier.iteration,
      tokens: earlier.tokens,
      costUsd: earlier.costUsd,
      costNote: earlier.costNote ?? null,
      modelCalls: earlier.modelCalls,
      lastRequestTokens: earlier.lastRequestTokens,
      lastRequestCharacters: earlier.lastRequestCharacters,
      model: earlier.model,
      answeredBy: earlier.answeredBy,
      lastThought: earlier.lastThought,
      toolCalls: earlier.toolCalls,
      earlierToolCalls: earlier.earlierToolCalls,
      rootCause: earlier.rootCause,
      fixSummary: earlier.fixSummary,
      compactions: earlier.compactions,
      workflowRuns: earlier.workflowRuns + 1,
      resumedFrom: workflowId,
    } satisfies Partial<RunState>);
    this.iterationAtRunStart = state.iteration;
    this.repairConversation('the earlier run ended there');
    appendUserText(state.conversation, prompts.resumed(workflowId));
  }

  private stopBeforeNextCall(): Stop | null {
    const state = this.state;
    if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
    return budgetStop(state.budgets, {
      iterations: state.iteration,
      tokens: state.tokens,
      costUsd: state.costUsd,
      elapsedMs: Date.now() - state.startedAt,
      nextRequestTokens: this.nextRequestTokens(),
    });
  }

  /** Estimated input tokens of the next request: the last request's, plus what was added since. */
  private nextRequestTokens(): number {
    const newCharacters = Math.max(0, conversationBytes(this.state.conversation) - this.state.lastRequestCharacters);
    return this.state.lastRequestTokens + estimateTokens(newCharacters);
  }

  /**
   * A run out of budget either ends, or (with pauseOnBudgetMinutes) waits for the user to raise
   * its budget with the raiseBudget update, then goes on where it stopped.
   */
  private async stopOrWaitForMoreBudget(): Promise<Stop | null> {
    const stop = this.stopBeforeNextCall();
    if (!stop || stop.condition === 'stop_signal' || !this.input.pauseOnBudgetMinutes) return stop;
    this.setPhase('paused');
    setCurrentDetails(`paused: ${stop.detail}; raise the budget (raiseBudget update) within ${this.input.pauseOnBudgetMinutes} minutes to continue`);
    const raised = await condition(() => this.stopBeforeNextCall() === null || this.state.stopRequested !== null, `${this.input.pauseOnBudgetMinutes} minutes`);
    return raised ? this.stopBeforeNextCall() : stop;
  }

  /** Makes the stored conversation valid to send, whatever wrote it (see repairConversation). */
  private repairConversation(reason: string): void {
    // Readers of the transcript (the model activity) can tell that earlier messages changed.
    if (repairConversation(this.state.conversation, reason) > 0) this.state.conversationVersion += 1;
  }

  /**
   * Compacts old observations before a request would overflow the model's context window, or
   * the conversation Temporal's payload limit; a stop when it cannot be brought under that limit.
   */
  private compactIfContextIsFull(): Stop | null {
    const limit = this.input.contextWindowTokens * 0.9 - this.input.maxOutputTokens;
    this.state.earlierToolCalls = (this.state.earlierToolCalls ?? 0) + dropOldestRecords(this.state.toolCalls);
    const tooLarge = jsonBytes(this.state.conversation) > conversationByteBudget;
    if (this.nextRequestTokens() > limit || tooLarge) this.compact();
    if (jsonBytes(this.state.conversation) <= conversationByteBudget) return null;
    return { condition: 'context_exhausted', detail: `the conversation cannot be brought under its size limit of ${conversationByteBudget} bytes` };
  }

  /** Shortens the oldest observations once, as a block (more when the conversation is over its size limit); false when there was nothing left to shorten. */
  private compact(): boolean {
    const state = this.state;
    const shortened = compactConversation(state.conversation) + fitConversationToBudget(state.conversation, conversationByteBudget);
    if (shortened === 0) return false;
    state.compactions += 1;
    // Readers of the transcript (the model activity) can tell the earlier messages changed.
    state.conversationVersion += 1;
    state.lastRequestCharacters = conversationBytes(state.conversation);
    state.lastRequestTokens = Math.min(state.lastRequestTokens, estimateTokens(state.lastRequestCharacters));
    return true;
  }

  private async continueAsNewIfDue(): Promise<void> {
    const every = this.input.continueAsNewEvery;
    const info = workflowInfo();
    const due =
      info.continueAsNewSuggested ||
      info.historySize > continueAsNewHistoryBytes ||
      (every !== undefined && this.state.iteration - this.iterationAtRunStart >= every);
    if (!due) return;
    // Updates in progress (a budget raise) finish first; signals are carried in the state.
    await condition(allHandlersFinished);
    await continueAsNew<typeof debugRepository>(this.input, { state: this.state });
  }

  private async callModel(): Promise<ModelCallResult> {
    const state = this.state;
    // Only what changed since this run's previous model call goes into the activity's input.
    const { delta, sent } = conversationDelta(this.sentConversation, state.conversation);
    this.sentConversation = sent;
    const turn = await this.whenModelWorkerServes(() =>
      modelActivities(this.input.modelEndpoint).callModel.executeWithOptions({ summary: `iteration ${state.iteration} · model` }, [
        {
          iteration: state.iteration,
          conversationLength: state.conversation.length,
          conversationVersion: state.conversationVersion,
          conversation: delta,
          model: this.input.model,
          maxOutputTokens: this.input.maxOutputTokens,
          allowCommands: this.input.allowCommands,
          thinkingBudgetTokens: this.input.thinkingBudgetTokens,
          temperature: this.input.temperature,
        },
      ]),
    );
    state.modelCalls += 1;
    state.tokens = addUsage(state.tokens, turn.usage);
    const cost = addCallCost({ costUsd: state.costUsd, costNote: state.costNote ?? null }, turn, state.budgets.maxCostUsd !== undefined);
    state.costUsd = cost.costUsd;
    state.costNote = cost.costNote;
    state.lastRequestTokens = requestInputTokens(turn.usage);
    state.lastRequestCharacters = conversationBytes(state.conversation);
    state.model = turn.model;
    state.answeredBy = turn.answeredBy;
    this.publishProgress();
    const calls = toolCallsOf(turn.content).length;
    setCurrentDetails(
      `iteration ${state.iteration} · model asked for ${calls} tool call${calls === 1 ? '' : 's'} · ${totalTokens(state.tokens)} tokens`,
    );
    return turn;
  }

  /** Schedules the model call again for as long as no worker of the run's endpoint takes it; a stop ends the wait. */
  private async whenModelWorkerServes<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const result = await call();
        this.waitingFor = null;
        return result;
      } catch (error) {
        if (!isScheduleToStartTimeout(error)) throw error;
        this.waitingFor = waitingForModelWorker(this.input.modelEndpoint, workflowInfo().taskQueue);
        setCurrentDetails(this.waitingFor);
        const stop = this.stopWhileWaiting();
        if (stop) throw new StoppedWhileWaiting(stop);
      }
    }
  }

  /** A stop signal or the time budget ends a wait for a model worker (the waiting iteration is not spent). */
  private stopWhileWaiting(): Stop | null {
    const state = this.state;
    if (state.stopRequested) return { condition: 'stop_signal', detail: state.stopRequested };
    const budgets = { ...state.budgets, maxTokens: undefined, maxCostUsd: undefined };
    return budgetStop(budgets, { iterations: state.iteration - 1, tokens: state.tokens, costUsd: state.costUsd, elapsedMs: Date.now() - state.startedAt, nextRequestTokens: 0 });
  }

  /**
   * The run's iterations and cost as search attributes, at most every few seconds of workflow
   * time (each upsert is a visibility write on the server: 3–13 ms per iteration on the dev
   * server, bench/workflowExtras.ts) and always at the end (finish). Runs begun before this was throttled upsert
   * on every call, as they did (the patch keeps their histories valid).
   */
  private publishProgress(): void {
    const now = Date.now();
    if (now - this.progressPublishedAt < progressPublishIntervalMs) return;
    this.progressPublishedAt = now;
    upsertSearchAttributes(this.progressAttributes());
  }

  private progressAttributes() {
    const state = this.state;
    return [
      { key: searchAttributes.iterations, value: state.iteration },
      ...(state.costUsd === null ? [] : [{ key: searchAttributes.costUsd, value: state.costUsd }]),
    ];
  }

  /**
   * Runs every tool call of one response: reads together, mutations one at a time in order.
   * Each call gets exactly one result; bad calls become is_error results the model can act on.
   */
  private async runToolCalls(
    calls: ToolCall[],
    turn: ModelCallResult,
  ): Promise<{ results: ToolResultBlock[]; finishCall: ParsedToolCall | null }> {
    const results = new Map<string, ToolResultBlock>();
    const sorted = sortToolCalls(calls, { allowCommands: this.input.allowCommands, oversizedInputs: turn.oversizedToolInputs });
    for (const { call, description, error } of sorted.refused) {
      this.record(call.id, call.name, description, { content: error, isError: true }, results);
    }
    const finishCall = sorted.finish;
    if (finishCall) {
      this.state.rootCause = String(finishCall.input.root_cause);
      this.state.fixSummary = typeof finishCall.input.summary === 'string' ? finishCall.input.summary : null;
    }
    const runnable = sorted.runnable;
    // Consecutive reads form one parallel group; each mutation is its own group.
    const groups: Array<typeof runnable> = [];
    for (const call of runnable) {
      const last = groups[groups.length - 1];
      if (call.effect === 'read' && last && last[0]?.effect === 'read') last.push(call);
      else groups.push([call]);
    }
    for (const group of groups) {
      const outcomes = await Promise.all(group.map((call) => this.runTool(call)));
      group.forEach((call, index) => {
        const outcome = outcomes[index] as ToolOutcome;
        this.applyOutcome(outcome);
        this.record(call.id, call.name, describeToolCall(call.name, call.input), outcome, results);
      });
    }
    const ordered = calls.map((call) => results.get(call.id)).filter((result): result is ToolResultBlock => Boolean(result));
    return { results: ordered, finishCall };
  }

  private record(
    id: string,
    name: string,
    description: string,
    outcome: { content: string; isError: boolean },
    results: Map<string, ToolResultBlock>,
  ): void {
    this.state.toolCalls.push({ iteration: this.state.iteration, name, description, isError: outcome.isError });
    results.set(id, { type: 'tool_result', tool_use_id: id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) });
  }

  private applyOutcome(outcome: ToolOutcome): void {
    const workspace = this.state.workspace;
    if (!workspace) return;
    if (outcome.mutations.length > 0) workspace.mutations.push(...outcome.mutations);
    workspace.digest = outcome.digest;
    if (outcome.refusedBy === 'test-file-guardrail') this.state.guardrailRefusals += 1;
  }

  private async runTool(call: Extract<ParsedToolCall, { ok: true }>): Promise<ToolOutcome> {
    return this.withSandbox((activities, sandboxId) =>
      activities.runTool.executeWithOptions({ summary: `iteration ${this.state.iteration} · ${describeToolCall(call.name, call.input)}` }, [
        {
          sandboxId,
          iteration: this.state.iteration,
          call: { id: call.id, name: call.name, input: call.input },
          expectedDigest: this.workspaceDigest(),
          settings: this.sandboxSettings(),
        },
      ]),
    );
  }

  private async runTestSuite(purpose: string): Promise<TestSummary> {
    const digest = this.workspaceDigest();
    const summary = await this.withSandbox((activities, sandboxId) =>
      activities.runTestSuite.executeWithOptions({ summary: purpose }, [
        { sandboxId, expectedDigest: digest, settings: this.sandboxSettings() },
      ]),
    );
    this.state.lastSuiteRun = { digest, summary };
    return summary;
  }

  private async verify(): Promise<{ fixed: boolean; message: string }> {
    this.setPhase('verifying');
    const after = await this.runTestSuite(`iteration ${this.state.iteration} · verify the fix`);
    const verdict = verifyFix(this.state.baseline as TestSummary, after);
    this.setPhase('acting');
    return { fixed: verdict.fixed, message: prompts.verificationFailed(verdict.reason, after) };
  }

  /**
   * Runs sandbox work on the worker that holds the sandbox. If the workspace or container is
   * not as expected, it is prepared again (rebuilt from the snapshot and the log); if that
   * worker cannot be reached, the sandbox moves to another worker.
   */
  private async withSandbox<T>(work: (activities: ReturnType<typeof hostActivities>, sandboxId: string) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const placement = this.state.sandbox;
      if (!placement) throw ApplicationFailure.nonRetryable('The sandbox was not prepared', 'NoSandbox');
      try {
        return await work(hostActivities(placement.taskQueue, this.input.sandbox.commandTimeoutSeconds), placement.sandboxId);
      } catch (error) {
        if (attempt >= 5 || isCancellation(error)) throw error;
        if (isFailureOfType(error, sandboxNeedsPrepare)) await this.prepareSandbox();
        else if (isHostUnreachable(error)) await this.moveSandbox();
        else throw error;
      }
    }
  }

  /** Places the sandbox on whichever worker answers, and prepares it there. */
  private async moveSandbox(): Promise<void> {
    await this.claimSandboxHost();
    await this.prepareEnvironment();
    await this.prepareSandbox();
  }

  /** Builds or reuses the image with the repository's dependencies, on the sandbox's host (the only step with network). */
  private async prepareEnvironment(): Promise<void> {
    const placement = this.state.sandbox as NonNullable<RunState['sandbox']>;
    const info = workflowInfo();
    this.state.environment = await environmentActivities(placement.taskQueue).prepareEnvironment.executeWithOptions(
      { summary: `environment · ${this.input.environment ? 'as the run input names it' : (this.state.snapshot?.environment ?? 'none needed')} · on ${placement.host}` },
      [{ snapshotId: (this.state.snapshot as RepositorySnapshot).snapshotId, choice: this.input.environment ?? {}, workflowId: info.workflowId, runId: info.runId }],
    );
    setCurrentDetails(describeEnvironment(this.state.environment));
  }

  /** The worker that answers on the shared task queue becomes the sandbox's host. */
  private async claimSandboxHost(): Promise<void> {
    const { taskQueue: hostQueue, host } = await shared.claimSandboxHost.executeWithOptions({ summary: 'choose a worker for the sandbox' }, []);
    this.state.sandbox = { sandboxId: sandboxIdFor(workflowInfo().workflowId), taskQueue: hostQueue, host };
  }

  private async prepareSandbox(): Promise<void> {
    // Concurrent reads that all find the sandbox missing share one preparation.
    if (!this.preparing) {
      this.preparing = this.doPrepare().finally(() => {
        this.preparing = null;
      });
    }
    return this.preparing;
  }

  private async doPrepare(): Promise<void> {
    const workspace = this.state.workspace;
    if (!this.state.sandbox || !workspace) throw ApplicationFailure.nonRetryable('Nothing to prepare', 'NoSandbox');
    const info = workflowInfo();
    for (let attempt = 1; ; attempt++) {
      const current = this.state.sandbox as NonNullable<RunState['sandbox']>;
      try {
        const prepared = await hostActivities(current.taskQueue, 60).prepareSandbox.executeWithOptions(
          { summary: `prepare the sandbox on ${current.host}` },
          [{ sandboxId: current.sandboxId, workflowId: info.workflowId, runId: info.runId, log: workspace, limits: this.input.sandbox, environment: environmentForSandbox(this.state.environment) }],
        );
        if (prepared.rebuiltBecause) setCurrentDetails(`sandbox rebuilt: ${prepared.rebuiltBecause}`);
        return;
      } catch (error) {
        if (attempt >= 3 || !isHostUnreachable(error)) throw error;
        await this.claimSandboxHost();
      }
    }
  }

  async destroySandbox(): Promise<void> {
    const placement = this.state.sandbox;
    if (!placement) return;
    try {
      await hostActivities(placement.taskQueue, 60).destroySandbox.executeWithOptions({ summary: 'destroy the sandbox' }, [
        { sandboxId: placement.sandboxId },
      ]);
    } catch {
      // Its worker is gone: remove the container from any worker; that worker's startup sweep removes the folder.
      await shared.removeSandboxContainer
        .executeWithOptions({ summary: 'remove the sandbox container' }, [{ sandboxId: placement.sandboxId }])
        .catch(() => undefined);
    }
  }

  /** Ends the run with its report; a step of it that fails becomes a problem stated in the report. */
  async finish(stop: Stop): Promise<DebugReport> {
    const state = this.state;
    this.setPhase('reporting');
    // The run may be resumed from its saved state: that query must stay under the payload limit too.
    if (fitConversationToBudget(state.conversation, conversationByteBudget) > 0) state.conversationVersion += 1;
    const workspace = state.workspace;
    const status = statusFor(stop.condition);
    const problems: string[] = [];
    let testsAfter: TestSummary | null = null;
    if (stop.condition !== 'no_failing_tests' && stop.condition !== 'environment_error' && workspace) {
      // Only the workflow's own run of the whole suite counts, never the model's run_tests.
      testsAfter =
        state.lastSuiteRun && state.lastSuiteRun.digest === workspace.digest
          ? state.lastSuiteRun.summary
          : await this.runTestSuite('final test run').catch((error: unknown) => {
              problems.push(`the final test run failed: ${failureMessage(error)}`);
              return null;
            });
    }
    let patch: PatchForReport = { patch: '', fullPatch: null };
    if (workspace && workspace.mutations.length > 0) {
      patch = await shared.computePatch
        .executeWithOptions({ summary: 'compute the patch' }, [{ snapshotId: workspace.snapshotId, mutations: workspace.mutations }])
        .catch((error: unknown) => {
          problems.push(`the patch could not be computed: ${failureMessage(error)}`);
          return patch;
        });
    }
    this.setPhase('done');
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }, ...this.progressAttributes()]);
    return {
      workflowId: workflowInfo().workflowId,
      repository: this.input.repo,
      status,
      stopCondition: stop.condition,
      stopDetail: stop.detail,
      model: state.model,
      answeredBy: state.answeredBy,
      rootCause: state.rootCause,
      fixSummary: state.fixSummary,
      patch: patch.patch,
      fullPatch: patch.fullPatch,
      testsBefore: state.baseline ?? null,
      testsAfter,
      testCommand: state.snapshot?.testCommand ?? null,
      iterations: state.iteration,
      tokens: state.tokens,
      costUsd: state.costUsd,
      costNote: state.costNote ?? null,
      durationMs: Date.now() - state.startedAt,
      toolCalls: state.toolCalls,
      earlierToolCalls: state.earlierToolCalls ?? 0,
      workflowRuns: state.workflowRuns,
      compactions: state.compactions,
      resumedFrom: state.resumedFrom,
      problems,
      environment: state.environment ?? null,
    };
  }

  private workspaceDigest(): string {
    return (this.state.workspace as NonNullable<RunState['workspace']>).digest;
  }

  private sandboxSettings(): SandboxSettings {
    return {
      testCommand: (this.state.snapshot as NonNullable<RunState['snapshot']>).testCommand,
      allowTestEdits: this.input.allowTestEdits,
      testFileGlobs: this.input.testFileGlobs,
      limits: this.input.sandbox,
      observation: this.input.observation,
    };
  }

  private setPhase(phase: RunState['phase']): void {
    this.state.phase = phase;
    // The status attribute says `running` while the run works, and its final status once it ends.
    if (phase !== 'done' && !this.markedRunning) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: 'running' }]);
      this.markedRunning = true;
    }
    setCurrentDetails(
      `phase: ${phase} · iteration ${this.state.iteration}/${this.state.budgets.maxIterations} · ${totalTokens(this.state.tokens)} tokens` +
        (this.state.costUsd === null ? '' : ` · $${this.state.costUsd.toFixed(4)}`),
    );
  }

  private statusView(): RunStatusView {
    const state = this.state;
    return {
      phase: state.phase,
      iteration: state.iteration,
      maxIterations: state.budgets.maxIterations,
      lastThought: state.lastThought,
      tokens: state.tokens,
      costUsd: state.costUsd,
      costNote: state.costNote ?? null,
      budgets: state.budgets,
      elapsedMs: Date.now() - state.startedAt,
      toolCalls: state.toolCalls.length + (state.earlierToolCalls ?? 0),
      model: state.model,
      answeredBy: state.answeredBy,
      repository: this.input.repo,
      testsBefore: state.baseline ?? null,
      workflowRuns: state.workflowRuns,
      stopRequested: state.stopRequested,
      awaitingApproval: this.approval.awaiting,
      environment: state.environment,
      modelEndpoint: this.input.modelEndpoint ?? defaultModelEndpoint,
      waitingFor: this.waitingFor,
    };
  }
}

class StoppedWhileWaiting extends Error {
  constructor(readonly stop: Stop) {
    super(stop.detail);
  }
}

function isScheduleToStartTimeout(error: unknown): boolean {
  return error instanceof ActivityFailure && error.cause instanceof TimeoutFailure && error.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}

function isFailureOfType(error: unknown, type: string): boolean {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === type;
}

/** The innermost message of a failure (an activity failure's cause says what went wrong). */
function failureMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

function isHostUnreachable(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof TimeoutFailure &&
    (error.cause.timeoutType === TimeoutType.SCHEDULE_TO_START || error.cause.timeoutType === TimeoutType.HEARTBEAT)
  );
}

/** The message of a model failure that retrying cannot fix (bad key, bad request, retries used up). */
function modelFailure(error: unknown): string | null {
  if (!(error instanceof ActivityFailure) || isCancellation(error)) return null;
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof TimeoutFailure) return `the model call timed out (${cause.timeoutType})`;
  return null;
}

