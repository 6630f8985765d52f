// The model call as a Temporal activity: its input carries only the messages that changed since
// the run's previous model call (so each message enters history once); it rebuilds the whole
// conversation from what this process kept of that call, or, when it kept nothing (another
// worker, a restart), reads it through the workflow's `transcript` query. It calls Claude,
// streaming the reply, heartbeats while it waits (with what the reply says so far, for `watch`),
// and classifies failures for Temporal's retries.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Message } from '../src/agent/conversation.js';
import type { ConversationDelta } from '../src/agent/conversationDelta.js';
import type { FallbackRequest } from '../src/agent/fallback.js';
import type { ModelReply } from '../src/agent/modelReply.js';
import { systemPrompt } from '../src/agent/prompts.js';
import { writingSoFar, type ModelCallHeartbeat, type WritingSoFar } from '../src/agent/replySoFar.js';
import { apiTools } from '../src/agent/tools.js';
import { requestModelTurn, type ModelClient } from '../src/model/anthropic.js';
import { ConversationCache } from '../src/model/conversationCache.js';
import { classifyModelError } from '../src/model/errors.js';
import type { PricingPlace } from '../src/model/pricing.js';
import { transcriptQuery } from '../src/temporal/definitions.js';
import { modelCallRetry } from '../src/temporal/retryPolicies.js';
import type { WorkerMetrics } from '../src/temporal/metrics.js';

export interface ModelCallRequest {
  iteration: number;
  /** How many messages of the transcript this call sends, and the transcript version they belong to. */
  conversationLength: number;
  conversationVersion: number;
  /** The messages changed since the run's previous model call; absent in calls scheduled by workflow code from before it (runs in flight across an upgrade). */
  conversation?: ConversationDelta;
  model?: string;
  /** The run's fallback model, and how long `model` may fail with overload or rate limits before it answers. */
  fallback?: FallbackRequest;
  maxOutputTokens: number;
  allowCommands: boolean;
  thinkingBudgetTokens?: number;
  temperature?: number;
}

export interface ModelActivityOptions {
  temporal: Client;
  /** Registered only on the task queue of this client's model endpoint (see src/worker.ts). */
  anthropic: ModelClient;
  /** Which provider answers, and where: for each call's price. */
  place?: PricingPlace;
  defaultModel: string;
  /** Who answers, in words: the Claude model id, or the scripted responses' source. */
  describeAnswerer?: (model: string) => string;
  /** Told how this worker got each call's conversation, and how long it took (the bench's breakdown). */
  onTranscript?: (source: 'cache' | 'query', ms: number) => void;
  /** False: read every call's conversation through the transcript query (the bench measures what the cache saves). */
  cacheConversations?: boolean;
  /** Told how long each call's activity function took, and the model request within it (the bench's breakdown). */
  onModelCall?: (timing: { ms: number; requestMs: number }) => void;
  /** The worker's Prometheus metrics (calls, tokens and cost by model). */
  metrics?: WorkerMetrics;
  /** False: replies are not streamed, so heartbeats do not show what the model is writing (`watch`). */
  streamReplies?: boolean;
}

/** How often a heartbeat says what the model has written since the last (the worker passes one on every 2 s). */
const writingBeatMs = 2_000;
/** Without anything new, a heartbeat after this long all the same (the call's heartbeat timeout is 20 s). */
const keepAliveMs = 5_000;

export function createModelActivities(options: ModelActivityOptions) {
  const cache = new ConversationCache(options.cacheConversations === false ? 0 : undefined);
  /** The conversation of this call: rebuilt from the cache, or read from the workflow on a miss. */
  async function conversationOf(request: ModelCallRequest, workflowId: string, runId: string): Promise<Message[]> {
    const started = performance.now();
    const cached = request.conversation ? cache.rebuild(runId, request.conversation) : null;
    if (cached) {
      options.onTranscript?.('cache', performance.now() - started);
      return cached;
    }
    const transcript = await options.temporal.workflow.getHandle(workflowId, runId).query(transcriptQuery);
    if (transcript.version !== request.conversationVersion || transcript.messages.length < request.conversationLength) {
      throw ApplicationFailure.retryable(
        'The conversation changed while the model call was scheduled',
        'StaleTranscript',
      );
    }
    options.onTranscript?.('query', performance.now() - started);
    return transcript.messages.slice(0, request.conversationLength);
  }

  return {
    async callModel(request: ModelCallRequest): Promise<ModelReply> {
      const started = performance.now();
      const anthropic = options.anthropic;
      const context = Context.current();
      const execution = context.info.workflowExecution;
      if (!execution) throw ApplicationFailure.nonRetryable('callModel must run inside a workflow', 'NotInWorkflow');
      const { workflowId, runId } = execution;
      const messages = await conversationOf(request, workflowId, runId);
      if (request.conversation) cache.remember(runId, request.conversation.sequence, messages);
      const model = request.model ?? options.defaultModel;
      // Heartbeats say the call is alive, and what the reply says so far while it streams in: every
      // 2 s when there is something new, else every few seconds (each is a write on the server).
      // A piece of the reply is only kept as it comes; its tail is cut when a heartbeat sends it.
      let written: { soFar: string; thinking: boolean } | undefined;
      let sent: typeof written;
      let beatAt = performance.now();
      const heartbeat = setInterval(() => {
        if (written === sent && performance.now() - beatAt < keepAliveMs) return;
        beatAt = performance.now();
        sent = written;
        const writing: WritingSoFar | undefined = written && writingSoFar(written.soFar, written.thinking);
        context.heartbeat({ waitingForModel: true, writing } satisfies ModelCallHeartbeat);
      }, writingBeatMs);
      const onWriting =
        options.streamReplies === false
          ? undefined
          : (soFar: string, thinking: boolean) => (written = { soFar, thinking });
      try {
        const requestStarted = performance.now();
        const ask = (asked: string) =>
          requestModelTurn(
            anthropic,
            {
              model: asked,
              maxOutputTokens: request.maxOutputTokens,
              system: systemPrompt,
              tools: apiTools({ allowCommands: request.allowCommands }),
              messages,
              thinkingBudgetTokens: request.thinkingBudgetTokens,
              temperature: request.temperature,
            },
            { signal: context.cancellationSignal, place: options.place, onWriting },
          );
        const reply = await ask(model).catch(async (error: unknown) => {
          const reason = fallbackReason(error, request.fallback, context.info);
          if (!reason || !request.fallback) throw error;
          return { ...(await ask(request.fallback.model)), fallbackFrom: { from: model, reason } };
        });
        const requestMs = performance.now() - requestStarted;
        options.onModelCall?.({ ms: performance.now() - started, requestMs });
        options.metrics?.modelCall(reply.model, reply.usage, reply.costUsd);
        // The reply comes clean from the API client (no blank text, a huge thought shortened), so history stays small too.
        return { ...reply, answeredBy: options.describeAnswerer?.(reply.model) ?? reply.answeredBy };
      } catch (error) {
        const failure = classifyModelError(error);
        if (!failure) throw error;
        throw ApplicationFailure.create({
          type: failure.type,
          message: failure.message,
          nonRetryable: !failure.retryable,
          nextRetryDelay: failure.retryAfterMs,
          details: [{ status: failure.status ?? null, requestId: failure.requestId ?? null }],
        });
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}

/**
 * Why the run's fallback model answers instead of the primary, or null when it does not: the
 * primary answered overloaded (529) or rate limited (429), and has kept failing since the call
 * was first scheduled for the run's set time (or this is the call's last attempt).
 */
function fallbackReason(
  error: unknown,
  fallback: FallbackRequest | undefined,
  info: { scheduledTimestampMs: number; attempt: number },
): string | null {
  if (!fallback) return null;
  const failure = classifyModelError(error);
  if (failure?.type !== 'ModelOverloaded' && failure?.type !== 'ModelRateLimited') return null;
  const failingMs = Math.max(0, Date.now() - info.scheduledTimestampMs);
  const lastAttempt = info.attempt >= (modelCallRetry.maximumAttempts ?? Number.POSITIVE_INFINITY);
  if (failingMs < fallback.afterMs && !lastAttempt) return null;
  const how = failure.type === 'ModelOverloaded' ? 'overloaded (529)' : 'rate limited (429)';
  return `the primary model was ${how} for ${Math.round(failingMs / 1000)} s`;
}

export type ModelActivities = ReturnType<typeof createModelActivities>;
