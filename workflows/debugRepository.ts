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
import { compactConversation } from '../src/agent/compaction.js';
import {
  appendExchange,
  appendUserText,
  conversationBytes,
  repairConversation,
  textOf,
  toolCallsOf,
  userText,
  type AssistantMessage,
  type ToolCall,
  type ToolResultBlock,
} from '../src/agent/conversation.js';
import { InvalidInputError, parseDebugInput, type DebugInput } from '../src/agent/input.js';
import * as prompts from '../src/agent/prompts.js';
import { statusFor, type DebugReport } from '../src/agent/report.js';
import type { RunState, RunStatusView } from '../src/agent/runState.js';
import { sandboxNeedsPrepare, type SandboxSettings, type ToolOutcome } from '../src/agent/sandboxProtocol.js';
import { sandboxIdFor } from '../src/agent/ids.js';
import { testsFailed, verifyFix, type TestSummary } from '../src/agent/testResults.js';
import { describeToolCall, maxToolInputBytes, parseToolCall, type ParsedToolCall } from '../src/agent/tools.js';
import {
  checkpointQuery,
  hintSignal,
  raiseBudgetUpdate,
  searchAttributes,
  statusQuery,
  stopSignal,
  transcriptQuery,
  type BudgetRaise,
} from '../src/temporal/definitions.js';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InvalidInput'] },
});

const model = proxyActivities<ModelActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

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

export interface CarriedState {
  state: RunState;
}

export async function debugRepository(rawInput: unknown, carried?: CarriedState): Promise<DebugReport> {
  const input = validateInput(rawInput);
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

class DebugRun {
  private readonly state: RunState;
  private iterationAtRunStart: number;
  private preparing: Promise<void> | null = null;
  private markedRunning = false;

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
      nudged: false,
      guardrailRefusals: 0,
      rootCause: null,
      fixSummary: null,
      compactions: 0,
      workflowRuns: 1,
      resumedFrom: input.resumeFrom ?? null,
    };
    if (carried) this.state.workflowRuns += 1;
    this.iterationAtRunStart = this.state.iteration;
  }

  registerHandlers(): void {
    setHandler(statusQuery, () => this.statusView());
    setHandler(transcriptQuery, () => ({ messages: this.state.conversation, version: this.state.conversationVersion }));
    setHandler(checkpointQuery, () => ({ input: this.input, state: this.state }));
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
    if (this.input.resumeFrom && !state.snapshot) await this.adoptEarlierRun(this.input.resumeFrom);
    if (!state.snapshot) {
      this.setPhase('preparing');
      const snapshot = await shared.snapshotRepository.executeWithOptions({ summary: `snapshot ${this.input.repo}` }, [
        { repo: this.input.repo, testCommand: this.input.testCommand },
      ]);
      state.snapshot = snapshot;
      state.workspace = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
    }
    const snapshot = state.snapshot;
    if (!state.sandbox) await this.moveSandbox();

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
          }),
        ),
      );
    }
    // A run that was interrupted between a model reply and its tool results never sends half an exchange.
    repairConversation(state.conversation, 'the run was interrupted');

    for (;;) {
      const stop = await this.stopOrWaitForMoreBudget();
      if (stop) return this.finish(stop);
      await this.continueAsNewIfDue();
      this.compactIfContextIsFull();

      state.iteration += 1;
      for (const hint of state.pendingHints.splice(0)) appendUserText(state.conversation, prompts.hintFromUser(hint));

      this.setPhase('thinking');
      let turn: ModelCallResult;
      try {
        turn = await this.callModel();
      } catch (error) {
        const failure = modelFailure(error);
        if (failure) return this.finish({ condition: 'model_error', detail: failure });
        throw error;
      }
      // A reply that continues a paused turn completes that assistant message.
      const paused = state.conversation[state.conversation.length - 1]?.role === 'assistant' ? state.conversation.pop() : undefined;
      if (paused) turn.content = [...paused.content, ...turn.content] as typeof turn.content;
      const assistant: AssistantMessage = { role: 'assistant', content: turn.content };
      state.lastThought = textOf(turn.content) || state.lastThought;

      switch (turn.stopReason) {
        case 'refusal':
          appendExchange(state.conversation, assistant, []);
          return this.finish({ condition: 'refusal', detail: 'the model declined to continue (refusal)' });
        case 'model_context_window_exceeded':
          if (!this.compact()) {
            return this.finish({ condition: 'context_exhausted', detail: 'the conversation no longer fits the model’s context window' });
          }
          continue;
        case 'pause_turn':
          state.conversation.push(assistant);
          continue;
        case 'max_tokens': {
          // The last tool call may be cut off: drop it, keep the rest, and ask for a shorter reply.
          const content = turn.content.filter((block, index) => !(block.type === 'tool_use' && index === turn.content.length - 1));
          const kept: AssistantMessage = {
            role: 'assistant',
            content: content.length ? content : [{ type: 'text', text: '[reply cut off at the output token limit]' }],
          };
          const results = await this.runToolCalls(toolCallsOf(kept.content), turn);
          appendExchange(state.conversation, kept, results.results, [prompts.askForShorterReply]);
          continue;
        }
        default:
          break;
      }

      const calls = toolCallsOf(turn.content);
      if (calls.length === 0) {
        if (!state.nudged) {
          state.nudged = true;
          appendExchange(state.conversation, assistant, [], [prompts.nudgeAfterTextOnly]);
          continue;
        }
        appendExchange(state.conversation, assistant, []);
        return this.finish({ condition: 'no_tool_calls', detail: 'the model stopped calling tools without finishing' });
      }

      this.setPhase('acting');
      const { results, finishCall } = await this.runToolCalls(calls, turn);
      if (finishCall) {
        const verdict = await this.verify();
        state.toolCalls.push({ iteration: state.iteration, name: 'finish', description: 'finish', isError: !verdict.fixed });
        results.push({
          type: 'tool_result',
          tool_use_id: finishCall.id,
          content: verdict.fixed ? 'Verified: the test suite passes. The run is complete.' : verdict.message,
          is_error: !verdict.fixed,
        });
        appendExchange(state.conversation, assistant, results);
        if (verdict.fixed) return this.finish({ condition: 'finish_verified', detail: 'finish was called and the fix was verified' });
        continue;
      }
      appendExchange(state.conversation, assistant, results);
      if (state.guardrailRefusals >= 3) {
        return this.finish({ condition: 'guardrail', detail: 'the model kept trying to change test files' });
      }
    }
  }

  /**
   * Continues an earlier run that ended (on its budget, a stop, an error): its conversation,
   * workspace log, baseline and usage carry over; its sandbox is rebuilt here from the log.
   */
  private async adoptEarlierRun(workflowId: string): Promise<void> {
    const { state: earlier, elapsedMs } = await shared.loadCheckpoint.executeWithOptions({ summary: `load the state of ${workflowId}` }, [{ workflowId }]);
    const state = this.state;
    Object.assign(state, {
      // The time budget goes on counting from where the earlier run stopped (as tokens and cost do).
      startedAt: Date.now() - (elapsedMs ?? 0),
      snapshot: earlier.snapshot,
      workspace: earlier.workspace,
      baseline: earlier.baseline,
      lastTestRun: earlier.lastTestRun,
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
      rootCause: earlier.rootCause,
      fixSummary: earlier.fixSummary,
      compactions: earlier.compactions,
      workflowRuns: earlier.workflowRuns + 1,
      resumedFrom: workflowId,
    } satisfies Partial<RunState>);
    this.iterationAtRunStart = state.iteration;
    repairConversation(state.conversation, 'the earlier run ended there');
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

  /** Compacts old observations before a request would overflow the model's context window. */
  private compactIfContextIsFull(): void {
    const limit = this.input.contextWindowTokens * 0.9 - this.input.maxOutputTokens;
    if (this.nextRequestTokens() > limit) this.compact();
  }

  /** Shortens the oldest observations once, as a block; false when there was nothing left to shorten. */
  private compact(): boolean {
    const state = this.state;
    if (compactConversation(state.conversation) === 0) return false;
    state.compactions += 1;
    // Readers of the transcript (the model activity) can tell the earlier messages changed.
    state.conversationVersion += 1;
    state.lastRequestCharacters = conversationBytes(state.conversation);
    state.lastRequestTokens = Math.min(state.lastRequestTokens, estimateTokens(state.lastRequestCharacters));
    return true;
  }

  private async continueAsNewIfDue(): Promise<void> {
    const every = this.input.continueAsNewEvery;
    const due = workflowInfo().continueAsNewSuggested || (every !== undefined && this.state.iteration - this.iterationAtRunStart >= every);
    if (!due) return;
    // Updates in progress (a budget raise) finish first; signals are carried in the state.
    await condition(allHandlersFinished);
    await continueAsNew<typeof debugRepository>(this.input, { state: this.state });
  }

  private async callModel(): Promise<ModelCallResult> {
    const state = this.state;
    const turn = await model.callModel.executeWithOptions(
      { summary: `iteration ${state.iteration} · model` },
      [
        {
          iteration: state.iteration,
          conversationLength: state.conversation.length,
          conversationVersion: state.conversationVersion,
          model: this.input.model,
          maxOutputTokens: this.input.maxOutputTokens,
          allowCommands: this.input.allowCommands,
          thinkingBudgetTokens: this.input.thinkingBudgetTokens,
          temperature: this.input.temperature,
        },
      ],
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
    upsertSearchAttributes([
      { key: searchAttributes.iterations, value: state.iteration },
      ...(state.costUsd === null ? [] : [{ key: searchAttributes.costUsd, value: state.costUsd }]),
    ]);
    const calls = toolCallsOf(turn.content).length;
    setCurrentDetails(
      `iteration ${state.iteration} · model asked for ${calls} tool call${calls === 1 ? '' : 's'} · ${totalTokens(state.tokens)} tokens`,
    );
    return turn;
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
    const oversized = new Map(turn.oversizedToolInputs.map((entry) => [entry.id, entry.bytes]));
    let finishCall: ParsedToolCall | null = null;
    const runnable: Array<Extract<ParsedToolCall, { ok: true }>> = [];
    for (const call of calls) {
      const bytes = oversized.get(call.id);
      if (bytes !== undefined) {
        this.record(call.id, call.name, `${call.name} (input too large)`, {
          content: `The input of this ${call.name} call was ${bytes} bytes, over the limit of ${maxToolInputBytes}. Make smaller changes, one edit at a time.`,
          isError: true,
        }, results);
        continue;
      }
      const parsed = parseToolCall(call, { allowCommands: this.input.allowCommands });
      if (!parsed.ok) {
        this.record(call.id, call.name, describeToolCall(call.name, call.input), { content: parsed.error, isError: true }, results);
      } else if (parsed.effect === 'finish') {
        finishCall = parsed;
        this.state.rootCause = String(parsed.input.root_cause);
        this.state.fixSummary = typeof parsed.input.summary === 'string' ? parsed.input.summary : null;
      } else {
        runnable.push(parsed);
      }
    }
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
    if (outcome.testSummary) this.state.lastTestRun = { digest: outcome.digest, summary: outcome.testSummary };
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
    this.state.lastTestRun = { digest, summary };
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
    await this.prepareSandbox();
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
          [{ sandboxId: current.sandboxId, workflowId: info.workflowId, runId: info.runId, log: workspace, limits: this.input.sandbox }],
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

  private async finish(stop: Stop): Promise<DebugReport> {
    const state = this.state;
    this.setPhase('reporting');
    const workspace = state.workspace;
    const status = statusFor(stop.condition);
    let testsAfter: TestSummary | null = null;
    if (stop.condition !== 'no_failing_tests' && workspace) {
      testsAfter =
        state.lastTestRun && state.lastTestRun.digest === workspace.digest
          ? state.lastTestRun.summary
          : await this.runTestSuite('final test run').catch(() => null);
    }
    const patch =
      workspace && workspace.mutations.length > 0
        ? await shared.computePatch.executeWithOptions({ summary: 'compute the patch' }, [
            { snapshotId: workspace.snapshotId, mutations: workspace.mutations },
          ])
        : '';
    this.setPhase('done');
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
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
      patch,
      testsBefore: state.baseline ?? null,
      testsAfter,
      testCommand: state.snapshot?.testCommand ?? null,
      iterations: state.iteration,
      tokens: state.tokens,
      costUsd: state.costUsd,
      costNote: state.costNote ?? null,
      durationMs: Date.now() - state.startedAt,
      toolCalls: state.toolCalls,
      workflowRuns: state.workflowRuns,
      compactions: state.compactions,
      resumedFrom: state.resumedFrom,
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
      toolCalls: state.toolCalls.length,
      model: state.model,
      answeredBy: state.answeredBy,
      repository: this.input.repo,
      testsBefore: state.baseline ?? null,
      workflowRuns: state.workflowRuns,
      stopRequested: state.stopRequested,
    };
  }
}

function isFailureOfType(error: unknown, type: string): boolean {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === type;
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

