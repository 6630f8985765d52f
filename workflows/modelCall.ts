// The model step (think): one call to the run's model endpoint with what changed of the
// conversation, and what its reply means for the loop (src/agent/reply.ts). When no worker of
// that endpoint takes the call it waits (and says so in the status view) until one does, or a
// stop or the time budget ends the wait.
import {
  CancellationScope,
  condition,
  patched,
  proxyActivities,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { ModelActivities } from '../activities/model.js';
import type { ModelReply } from '../src/agent/modelReply.js';
import { modelCallRetry } from '../src/temporal/retryPolicies.js';
import { totalTokens, type Stop } from '../src/agent/budgets.js';
import { toolCallsOf } from '../src/agent/conversation.js';
import { conversationDelta, sentCharacters, type SentConversation } from '../src/agent/conversationDelta.js';
import { fallbackNote, nextModel, noteModelOfCall, onFallback } from '../src/agent/fallback.js';
import type { DebugInput } from '../src/agent/input.js';
import { modelWorkerWaitMs } from '../src/agent/modelEndpoint.js';
import { modelQueueOf, waitingForModelWorkerOf } from '../src/agent/runQueues.js';
import { decideReply, type Step } from '../src/agent/reply.js';
import { recordModelCall, stopWhileWaiting } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import { isScheduleToStartTimeout, modelFailure } from './failures.js';
import type { RunProgress } from './progress.js';
import { continueAsNewDue, continueAsNewWithState } from './runLimits.js';

/**
 * Model calls go to the workers of the run's model endpoint (on its starter's private queue when
 * the input names one); when none takes them, they wait (and say so).
 */
function modelActivities(input: DebugInput) {
  return proxyActivities<ModelActivities>({
    taskQueue: modelQueueOf(input, workflowInfo().taskQueue),
    scheduleToStartTimeout: input.modelWorkerWait.firstSeconds * 1000,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '20 seconds',
    retry: modelCallRetry,
  });
}

export class ModelStep {
  /** Set while the model call waits for a worker of the run's endpoint. */
  waitingFor: string | null = null;
  /** What this workflow run's previous model call carried of the conversation. */
  private sent: SentConversation | null = null;
  private readonly activities: ReturnType<typeof modelActivities>;

  constructor(
    private readonly state: RunState,
    private readonly input: DebugInput,
    private readonly progress: RunProgress,
  ) {
    this.activities = modelActivities(input);
  }

  /**
   * Calls the model and decides what its reply means (counted in the run's usage): stop, think
   * again or act; a model error or a stop while waiting stops the run too.
   */
  async think(): Promise<Step> {
    const { state, input } = this;
    // Only what changed since this run's previous model call goes into the activity's input.
    const { delta, sent } = conversationDelta(this.sent, state.conversation);
    this.sent = sent;
    const summary = `iteration ${state.iteration} · model${this.fallbackSummary()}`;
    const request: ModelRequest = {
      iteration: state.iteration,
      conversationLength: state.conversation.length,
      conversationVersion: state.conversationVersion,
      conversation: delta,
      ...nextModel(state, input, Date.now()),
      maxOutputTokens: input.maxOutputTokens,
      allowCommands: input.allowCommands,
      thinkingBudgetTokens: input.thinkingBudgetTokens,
      temperature: input.temperature,
    };
    // The first call is awaited inline: each async layer adds promises to every workflow task, and
    // the SDK captures a stack for each (bench/workflowPromises.ts). Waiting is the exception.
    let answer: { reply: ModelReply; stop?: undefined } | { stop: Stop };
    try {
      answer = { reply: await this.activities.callModel.executeWithOptions({ summary }, [request]) };
    } catch (error) {
      answer = isScheduleToStartTimeout(error) ? await this.waitForWorker(request, summary) : failedCall(error);
    }
    // Answered or ended: the run no longer waits for anyone (a closed run's status says so too).
    this.waitingFor = null;
    if (answer.stop) return { next: 'stop', stop: answer.stop };
    const reply = answer.reply;
    recordModelCall(state, reply, sentCharacters(sent));
    noteModelOfCall(state, input, reply, Date.now());
    this.progress.publish();
    const calls = toolCallsOf(reply.content).length;
    setCurrentDetails(
      `iteration ${state.iteration} · model asked for ${calls} tool call${calls === 1 ? '' : 's'} · ${totalTokens(state.tokens)} tokens${fallbackNote(reply)}`,
    );
    return decideReply(state, reply, input);
  }

  /** The Web UI names the calls that go straight to the fallback model (runs without one: nothing). */
  private fallbackSummary(): string {
    const { fallbackModel } = this.input;
    return fallbackModel && onFallback(this.state, Date.now()) ? ` (fallback ${fallbackModel})` : '';
  }

  /**
   * Calls again for as long as no worker of the run's endpoint takes the call, until a stop or the
   * time budget ends the wait. Each wait is twice the last (up to modelWorkerWait.maxSeconds), so
   * a run waiting for days adds a few events an hour, and it continues as new inside the wait when
   * its history grows large. (Histories from before the patch wait 30 s at a time, as they did.)
   */
  private async waitForWorker(request: ModelRequest, summary: string): Promise<{ reply: ModelReply } | { stop: Stop }> {
    const { state, input } = this;
    const backingOff = patched(modelWorkerWaitPatch);
    for (let waits = 1; ; waits++) {
      this.waitingFor = waitingForModelWorkerOf(input, workflowInfo().taskQueue);
      setCurrentDetails(this.waitingFor);
      const stop = stopWhileWaiting(state, Date.now());
      if (stop) return { stop };
      if (backingOff && continueAsNewDue(state, input, state.iteration)) {
        state.iteration -= 1; // the new run begins this iteration again
        await continueAsNewWithState(state, input);
      }
      try {
        if (!backingOff) return { reply: await this.activities.callModel.executeWithOptions({ summary }, [request]) };
        const reply = await this.callUnlessStopped(
          request,
          summary,
          modelWorkerWaitMs(input.modelWorkerWait, waits, timeLeftMs(state)),
        );
        if (reply) return { reply };
      } catch (error) {
        if (!isScheduleToStartTimeout(error)) return failedCall(error);
      }
    }
  }

  /** The call, waiting up to `waitMs` for a worker to take it; null when a stop comes first (the call is cancelled). */
  private async callUnlessStopped(request: ModelRequest, summary: string, waitMs: number): Promise<ModelReply | null> {
    const scope = new CancellationScope();
    const call = scope.run(() =>
      this.activities.callModel.executeWithOptions({ summary, scheduleToStartTimeout: waitMs }, [request]),
    );
    const stopped = scope.run(() => condition(() => this.state.stopRequested !== null));
    try {
      return await Promise.race([call, stopped.then(() => null)]);
    } finally {
      scope.cancel();
      call.catch(() => undefined);
      stopped.catch(() => undefined);
    }
  }
}

/** Marks the histories whose waits for a model worker back off and may continue as new. */
const modelWorkerWaitPatch = 'model-worker-wait-backs-off';

type ModelRequest = Parameters<ModelActivities['callModel']>[0];

/** A failed model call: a stop when retrying cannot help (bad key, bad request, retries used up); anything else is thrown. */
function failedCall(error: unknown): { stop: Stop } {
  const failure = modelFailure(error);
  if (failure) return { stop: { condition: 'model_error', detail: failure } };
  throw error;
}

/** What is left of the run's time budget (none set: no end). */
function timeLeftMs(state: RunState): number {
  const minutes = state.budgets.maxMinutes;
  return minutes === undefined ? Infinity : minutes * 60_000 - (Date.now() - state.startedAt);
}
