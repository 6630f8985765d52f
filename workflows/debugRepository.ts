// The durable ReAct loop. Deterministic: all I/O happens in activities; the conversation,
// the budgets and the workspace's mutation log live in this workflow's state.
//
//   seed the conversation with the task
//   while budget remains:
//       reply = call the model(conversation)
//       split it into thought + tool calls; stop on finish or when there is nothing to do
//       run every tool call; append the assistant message and ALL results as one unit
//   verify by running the tests ourselves; report
//
// The rules live in the run core (src/agent/run.ts); the sandbox is the loop's environment
// (sandboxSteps.ts); the model step, progress, approval and the end are beside this file.
import {
  ActivityFailure,
  ApplicationFailure,
  TemporalFailure,
  CancellationScope,
  isCancellation,
  ContinueAsNew,
  setHandler,
} from '@temporalio/workflow';
import type { Stop } from '../src/agent/budgets.js';
import { raiseProblem } from '../src/agent/budgetRaise.js';
import { InvalidInputError, parseDebugInput, type DebugInput } from '../src/agent/input.js';
import type { DebugReport } from '../src/agent/report.js';
import {
  resumeEarlierState,
  applyToolOutcome,
  beginIteration,
  compactIfContextIsFull,
  completeTurn,
  raiseBudgets,
  repairState,
  replyIterationsOf,
  seedConversation,
  startRunState,
  stopBeforeNextCall,
  statusView,
  takeReply,
  type FixReview,
  type RunnableCall,
} from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import type { ToolOutcome } from '../src/agent/sandboxProtocol.js';
import { testsFailed } from '../src/agent/testResults.js';
import {
  savedStateQuery,
  hintSignal,
  raiseBudgetUpdate,
  statusQuery,
  stopSignal,
  transcriptQuery,
  type BudgetRaise,
} from '../src/temporal/definitions.js';
import { ApprovalGate } from './approval.js';
import { runAttempts } from './attempts.js';
import { environmentFailureMessage, failureMessage, isFailureOfType } from './failures.js';
import { ModelStep } from './modelCall.js';
import { RunProgress } from './progress.js';
import { endRun } from './runEnd.js';
import { continueAsNewDue, continueAsNewWithState, pausesForRaise, waitForMoreBudget } from './runLimits.js';
import { SandboxSteps, shared } from './sandboxSteps.js';

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
      throw ApplicationFailure.nonRetryable(
        (error as ActivityFailure).cause?.message ?? 'Invalid input',
        'InvalidInput',
      );
    }
    // Every run ends with a report, also when its sandbox or an activity kept failing.
    if (!continuing && error instanceof TemporalFailure && !isCancellation(error)) {
      return await run.finish({
        condition: 'internal_error',
        detail: `the run could not go on: ${failureMessage(error)}`,
      });
    }
    throw error;
  } finally {
    if (!continuing) await CancellationScope.nonCancellable(() => run.sandbox.destroy());
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

/** One run of the loop: its state and handlers, the loop, and the steps that call out of the workflow. */
class DebugRun {
  readonly state: RunState;
  readonly sandbox: SandboxSteps;
  readonly progress: RunProgress;
  readonly approval: ApprovalGate;
  private readonly model: ModelStep;

  constructor(
    readonly input: DebugInput,
    carried: RunState | undefined,
  ) {
    this.state = startRunState(input, carried, Date.now());
    this.sandbox = new SandboxSteps(this.state, input);
    this.progress = new RunProgress(this.state);
    this.model = new ModelStep(this.state, input, this.progress);
    this.approval = new ApprovalGate({
      enabled: input.approve,
      timeoutMinutes: input.approvalTimeoutMinutes,
      stopRequested: () => this.state.stopRequested,
      setPhase: (phase) => this.progress.setPhase(phase),
    });
  }

  registerHandlers(): void {
    const { state, input } = this;
    const view = () =>
      statusView(state, input, {
        now: Date.now(),
        awaitingApproval: this.approval.awaiting,
        waitingFor: this.model.waitingFor,
      });
    this.approval.register();
    setHandler(statusQuery, view);
    setHandler(transcriptQuery, () => ({
      messages: state.conversation,
      version: state.conversationVersion,
      replyIterations: replyIterationsOf(state),
    }));
    setHandler(savedStateQuery, () => ({ input, state }));
    setHandler(hintSignal, (text: string) => {
      if (typeof text === 'string' && text.trim()) state.pendingHints.push(text.trim());
    });
    setHandler(stopSignal, (reason?: string) => {
      state.stopRequested = typeof reason === 'string' && reason.trim() ? reason.trim() : 'stop requested by the user';
    });
    setHandler(
      raiseBudgetUpdate,
      (raise: BudgetRaise) => {
        raiseBudgets(state, input, raise, Date.now());
        return view();
      },
      {
        validator: (raise: BudgetRaise) => {
          const problem = raiseProblem(raise, state.phase === 'paused');
          if (problem) throw new Error(problem);
        },
      },
    );
  }

  async execute(): Promise<DebugReport> {
    const { state, input } = this;
    // Seed the conversation with the task (after the snapshot, the sandbox and the baseline).
    const unfixable = await this.start();
    if (unfixable) return this.finish(unfixable);
    const iterationAtRunStart = state.iteration;

    for (;;) {
      // While budget remains (a paused run waits for a raise) and the context has room.
      let stop = stopBeforeNextCall(state, Date.now());
      if (pausesForRaise(stop, input)) stop = await waitForMoreBudget(state, input, this.progress, stop);
      stop ??= compactIfContextIsFull(state, input);
      if (stop) return this.finish(stop);
      if (continueAsNewDue(state, input, iterationAtRunStart)) await continueAsNewWithState(state, input);
      beginIteration(state);

      // Call the model.
      this.progress.setPhase('thinking');
      const answer = await this.model.call();
      if (answer.stop) return this.finish(answer.stop);

      // Split the reply into thought and tool calls; stop, or ask again when there is nothing to run.
      const step = takeReply(state, answer.reply, input);
      if (step.next === 'stop') return this.finish(step.stop);
      if (step.next === 'again') continue;

      // Run every call; finish is verified by running the tests ourselves.
      // Reads together, mutations one at a time in order; each call gets exactly one result. The
      // loop is inline and one call is awaited alone: every async layer and Promise.all add
      // promises to each workflow task, and the SDK captures a stack for each.
      this.progress.setPhase('acting');
      for (const group of step.turn.groups) {
        const outcomes =
          group.length === 1
            ? [await this.sandbox.runTool(group[0] as RunnableCall)]
            : await Promise.all(group.map((call) => this.sandbox.runTool(call)));
        group.forEach((call, index) => applyToolOutcome(state, step.turn, call, outcomes[index] as ToolOutcome));
      }
      let review: FixReview | null = null;
      if (step.turn.finish) {
        this.progress.setPhase('verifying');
        const verdict = await this.sandbox.verify();
        this.progress.setPhase('acting');
        // A verified fix may wait for a person's approval (workflows/approval.ts).
        review = await this.approval.review(verdict, state.workspace);
      }

      // Append the assistant message and all its results as one unit.
      const end = completeTurn(state, step.turn, review);
      if (end) return this.finish(end);
    }
  }

  /**
   * Everything before the first model call: the earlier run's state when resuming, the
   * repository's snapshot, the sandbox, the baseline test run, the task as the first message.
   * A stop when the run cannot start (no environment, or nothing fails).
   */
  private async start(): Promise<Stop | null> {
    const { state, input } = this;
    if (input.resumeFrom && !state.snapshot) {
      const workflowId = input.resumeFrom;
      const { state: earlier, elapsedMs } = await shared.loadSavedState.executeWithOptions(
        { summary: `load the state of ${workflowId}` },
        [{ workflowId }],
      );
      resumeEarlierState(state, earlier, { workflowId, elapsedMs, now: Date.now() });
    }
    if (!state.snapshot) {
      this.progress.setPhase('preparing');
      const snapshot = await shared.snapshotRepository.executeWithOptions({ summary: `snapshot ${input.repo}` }, [
        { repo: input.repo, testCommand: input.testCommand },
      ]);
      state.snapshot = snapshot;
      state.workspace = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
    }
    if (!state.sandbox) {
      // A repository whose dependencies cannot be installed ends here, before any model call.
      const failure = await this.sandbox.move().then(() => null, environmentFailureMessage);
      if (failure) return { condition: 'environment_error', detail: failure };
    }
    if (!state.baseline) {
      this.progress.setPhase('baseline');
      state.baseline = await this.sandbox.runTestSuite('baseline test run');
      if (!testsFailed(state.baseline))
        return { condition: 'no_failing_tests', detail: 'the tests already pass: there is nothing to fix' };
    }
    seedConversation(state, input);
    // A run that was interrupted between a model reply and its tool results never sends half an exchange.
    repairState(state, 'the run was interrupted');
    return null;
  }

  /** Ends the run with its report (workflows/runEnd.ts). */
  finish(stop: Stop): Promise<DebugReport> {
    return endRun(this, stop);
  }
}
