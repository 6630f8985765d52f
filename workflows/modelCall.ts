// The model step (think): one call to the run's model endpoint with what changed of the
// conversation, and what its reply means for the loop (src/agent/reply.ts). When no worker of
// that endpoint takes the call it waits (and says so in the status view) until one does, or a
// stop or the time budget ends the wait.
import { proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ModelActivities } from '../activities/model.js';
import type { ModelReply } from '../src/agent/modelReply.js';
import { modelCallRetry } from '../src/temporal/retryPolicies.js';
import { totalTokens } from '../src/agent/budgets.js';
import { toolCallsOf } from '../src/agent/conversation.js';
import { conversationDelta, sentCharacters, type SentConversation } from '../src/agent/conversationDelta.js';
import { fallbackNote, nextModel, noteModelOfCall, onFallback } from '../src/agent/fallback.js';
import type { DebugInput } from '../src/agent/input.js';
import { modelTaskQueueFor, waitingForModelWorker } from '../src/agent/modelEndpoint.js';
import { decideReply, type Step } from '../src/agent/reply.js';
import { recordModelCall, stopWhileWaiting } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import { isScheduleToStartTimeout, modelFailure } from './failures.js';
import type { RunProgress } from './progress.js';

/** Model calls go to the workers of the run's model endpoint; when none takes them, they wait (and say so). */
function modelActivities(endpoint: string | undefined) {
  return proxyActivities<ModelActivities>({
    taskQueue: modelTaskQueueFor(workflowInfo().taskQueue, endpoint),
    scheduleToStartTimeout: '30 seconds',
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
    this.activities = modelActivities(input.modelEndpoint);
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
    const request = {
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
    // The call is scheduled again for as long as no worker of the run's endpoint takes it; a stop
    // ends the wait. The loop is inline: each async layer adds promises to every workflow task,
    // and the SDK captures a stack for each (bench/workflowPromises.ts).
    let reply: ModelReply;
    for (;;) {
      try {
        reply = await this.activities.callModel.executeWithOptions({ summary }, [request]);
        this.waitingFor = null;
        break;
      } catch (error) {
        if (isScheduleToStartTimeout(error)) {
          this.waitingFor = waitingForModelWorker(input.modelEndpoint, workflowInfo().taskQueue);
          setCurrentDetails(this.waitingFor);
          const stop = stopWhileWaiting(state, Date.now());
          if (!stop) continue;
          // The run ends here: it no longer waits for anyone (the closed run's status says so).
          this.waitingFor = null;
          return { next: 'stop', stop };
        }
        const failure = modelFailure(error);
        if (failure) return { next: 'stop', stop: { condition: 'model_error', detail: failure } };
        throw error;
      }
    }
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
}
