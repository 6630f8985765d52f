// The durable ReAct loop. Deterministic: all I/O happens in activities; the conversation,
// the budgets and the workspace's mutation log live in this workflow's state.
//
//   seed the conversation with the task
//   while budget remains:
//       think:   call the model; its reply, decided once, says stop, think again, or act
//       act:     run every tool call (finish: verify by running the tests ourselves)
//       observe: append the assistant message and ALL results as one unit
//   report
//
// The rules live in the run core (src/agent/: run.ts, reply.ts, turn.ts); the sandbox is the
// loop's environment (sandboxSteps.ts); the model step, progress, approval, the end and the
// parent of parallel attempts (attemptsParent.ts) are beside this file.
import { TemporalFailure, CancellationScope, isCancellation, ContinueAsNew, setHandler } from '@temporalio/workflow';
import type { Stop } from '../src/agent/budgets.js';
import { raiseProblem } from '../src/agent/budgetRaise.js';
import { compactIfContextIsFull } from '../src/agent/compaction.js';
import type { DebugInput } from '../src/agent/input.js';
import type { DebugReport } from '../src/agent/report.js';
import {
  beginIteration,
  raiseBudgets,
  repairState,
  replyIterationsOf,
  resumeEarlierState,
  seedConversation,
  startRunState,
  statusView,
  stopBeforeNextCall,
} from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import type { ToolOutcome } from '../src/agent/sandboxProtocol.js';
import { testsFailed } from '../src/agent/testResults.js';
import { applyToolOutcome, observeTurn, type FixReview, type RunnableCall } from '../src/agent/turn.js';
import { raiseBudgetUpdate, type BudgetRaise } from '../src/temporal/definitions.js';
import { ApprovalGate } from './approval.js';
import { AttemptsParent } from './attemptsParent.js';
import {
  baselineCannotStart,
  environmentFailureMessage,
  failureMessage,
  inputFailure,
  validateInput,
} from './failures.js';
import { ModelStep } from './modelCall.js';
import { RunProgress } from './progress.js';
import { registerRunHandlers, type RunClosing } from './runHandlers.js';
import { endRun } from './runEnd.js';
import { continueAsNewDue, continueAsNewWithState, pausesForRaise, waitForMoreBudget } from './runLimits.js';
import { SandboxSteps } from './sandboxSteps.js';
import { sharedOf } from './sharedActivities.js';

export interface CarriedState {
  state: RunState;
}

export async function debugRepository(rawInput: unknown, carried?: CarriedState): Promise<DebugReport> {
  const input = validateInput(rawInput);
  // With attempts > 1 the run is the parent of that many runs of the loop; both have one shape.
  const run = input.attempts > 1 ? new AttemptsParent(input) : new DebugRun(input, carried?.state);
  const closing = run.registerHandlers();
  return closing(await run.execute());
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
      allChanges: input.patchAllChanges,
      privateQueue: input.privateQueue,
      stopRequested: () => this.state.stopRequested,
      setPhase: (phase) => this.progress.setPhase(phase),
    });
  }

  registerHandlers(): RunClosing {
    const { state, input } = this;
    const view = () =>
      statusView(state, input, {
        now: Date.now(),
        awaitingApproval: this.approval.awaiting,
        waitingFor: this.sandbox.claim.waitingFor ?? this.model.waitingFor,
      });
    this.approval.register();
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
    return registerRunHandlers({
      status: view,
      transcript: () => ({
        messages: state.conversation,
        version: state.conversationVersion,
        replyIterations: replyIterationsOf(state),
      }),
      savedState: () => ({ input, state }),
      hint: (text) => state.pendingHints.push(text),
      stop: (reason) => {
        state.stopRequested = reason;
      },
    });
  }

  /** The loop to its report: every run ends with one, also when its sandbox or an activity kept failing. */
  async execute(): Promise<DebugReport> {
    let continuing = false;
    try {
      return await this.loop();
    } catch (error) {
      continuing = error instanceof ContinueAsNew;
      const badInput = inputFailure(error);
      if (badInput) throw badInput;
      if (!continuing && error instanceof TemporalFailure && !isCancellation(error)) {
        return await this.end({
          condition: 'internal_error',
          detail: `the run could not go on: ${failureMessage(error)}`,
        });
      }
      throw error;
    } finally {
      if (!continuing) await CancellationScope.nonCancellable(() => this.sandbox.destroy());
    }
  }

  private async loop(): Promise<DebugReport> {
    const { state, input } = this;
    // Seed the conversation with the task (after the snapshot, the sandbox and the baseline).
    const unfixable = await this.start();
    if (unfixable) return this.end(unfixable);
    const iterationAtRunStart = state.iteration;

    for (;;) {
      // While budget remains (a paused run waits for a raise) and the context has room.
      let stop = stopBeforeNextCall(state, Date.now());
      if (pausesForRaise(stop, input)) stop = await waitForMoreBudget(state, input, this.progress, stop);
      stop ??= compactIfContextIsFull(state, input);
      if (stop) return this.end(stop);
      if (continueAsNewDue(state, input, iterationAtRunStart)) await continueAsNewWithState(state, input);
      beginIteration(state);

      // Think: call the model; its reply stops the run, asks for another call, or asks for tools.
      this.progress.setPhase('thinking');
      const step = await this.model.think();
      if (step.next === 'stop') return this.end(step.stop);
      if (step.next === 'think') continue;

      // Act: run every call; finish is verified by running the tests ourselves.
      // Reads together, mutations one at a time in order; each call gets exactly one result. The
      // loop is inline and one call is awaited alone: every async layer and Promise.all add
      // promises to each workflow task, and the SDK captures a stack for each.
      this.progress.setPhase('acting');
      const { turn } = step;
      for (const group of turn.groups) {
        const outcomes =
          group.length === 1
            ? [await this.sandbox.runTool(group[0] as RunnableCall)]
            : await Promise.all(group.map((call) => this.sandbox.runTool(call)));
        group.forEach((call, index) => applyToolOutcome(state, turn, call, outcomes[index] as ToolOutcome));
      }
      let review: FixReview | null = null;
      if (turn.finish) {
        this.progress.setPhase('verifying');
        const verdict = await this.sandbox.verify();
        this.progress.setPhase('acting');
        // A verified fix may wait for a person's approval (workflows/approval.ts).
        review = await this.approval.review(verdict, state.workspace);
      }

      // Observe: append the assistant message and all its results as one unit.
      stop = observeTurn(state, turn, review);
      if (stop) return this.end(stop);
    }
  }

  /**
   * Everything before the first model call: the earlier run's state when resuming, the
   * repository's snapshot, the sandbox, the baseline test run, the task as the first message.
   * A stop when the run cannot start (no environment, or nothing fails).
   */
  private async start(): Promise<Stop | null> {
    const { state, input } = this;
    await this.sandbox.claim.ask();
    if (input.resumeFrom && !state.snapshot) {
      const workflowId = input.resumeFrom;
      const { state: earlier, elapsedMs } = await sharedOf(input).loadSavedState.executeWithOptions(
        { summary: `load the state of ${workflowId}` },
        [{ workflowId }],
      );
      resumeEarlierState(state, earlier, { workflowId, elapsedMs, now: Date.now() });
    }
    if (!state.snapshot) {
      this.progress.setPhase('preparing');
      // On the starter's machine when the input names its private queue: the path is read there.
      const snapshot = await sharedOf(input).snapshotRepository.executeWithOptions(
        { summary: `snapshot ${input.repo}` },
        [{ repo: input.repo, testCommand: input.testCommand }],
      );
      state.snapshot = snapshot;
      state.workspace = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
    }
    if (!state.sandbox) {
      // A repository whose dependencies cannot be installed ends here, before any model call;
      // a run stopped while it waits for a sandbox host ends before it has one.
      const placed = await this.sandbox.move().then(Boolean, environmentFailureMessage);
      if (typeof placed === 'string') return { condition: 'environment_error', detail: placed };
      if (!placed) return { condition: 'stop_signal', detail: state.stopRequested as string };
    }
    if (!state.baseline) {
      this.progress.setPhase('baseline');
      state.baseline = await this.sandbox.runTestSuite('baseline test run');
      const cannotStart = baselineCannotStart(state.baseline);
      if (cannotStart) return cannotStart;
      if (!testsFailed(state.baseline))
        return { condition: 'no_failing_tests', detail: 'the tests already pass: there is nothing to fix' };
    }
    seedConversation(state, input);
    // A run that was interrupted between a model reply and its tool results never sends half an exchange.
    repairState(state, 'the run was interrupted');
    return null;
  }

  /** Ends the run with its report (workflows/runEnd.ts). */
  private end(stop: Stop): Promise<DebugReport> {
    return endRun(this, stop);
  }
}
