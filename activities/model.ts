// The model call as a Temporal activity: it reads the conversation through the workflow's
// `transcript` query (so the conversation is not copied into history on every call), calls
// Claude, heartbeats while it waits, and classifies failures for Temporal's retries.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, StopReason } from '../src/agent/conversation.js';
import type { TokenUsage } from '../src/agent/budgets.js';
import { systemPrompt } from '../src/agent/prompts.js';
import { apiTools, maxToolInputBytes } from '../src/agent/tools.js';
import { requestModelTurn } from '../src/model/anthropic.js';
import { classifyModelError } from '../src/model/errors.js';
import { costOfCall } from '../src/model/pricing.js';
import { transcriptQuery } from '../src/temporal/definitions.js';

export interface ModelCallRequest {
  iteration: number;
  /** How many messages of the transcript this call sends, and the transcript version they belong to. */
  conversationLength: number;
  conversationVersion: number;
  model?: string;
  maxOutputTokens: number;
  allowCommands: boolean;
  thinkingBudgetTokens?: number;
  temperature?: number;
}

export interface ModelCallResult {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: TokenUsage;
  /** At the model's listed price; null when it has none. */
  costUsd: number | null;
  /** What a cost budget counts: the listed price, else a stated conservative one (priceNote). */
  budgetCostUsd: number;
  priceNote: string | null;
  model: string;
  answeredBy: string;
  requestId: string | null;
  /** Tool calls whose input was too large to keep; the workflow answers them with an error. */
  oversizedToolInputs: Array<{ id: string; bytes: number }>;
}

export interface ModelActivityOptions {
  temporal: Client;
  /** Null when this worker has no way to reach a model (no ANTHROPIC_API_KEY). */
  anthropic: Anthropic | null;
  defaultModel: string;
  /** Who answers, in words: the Claude model id, or the scripted responses' source. */
  describeAnswerer?: (model: string) => string;
}

export function createModelActivities(options: ModelActivityOptions) {
  return {
    async callModel(request: ModelCallRequest): Promise<ModelCallResult> {
      const anthropic = options.anthropic;
      if (!anthropic) {
        throw ApplicationFailure.nonRetryable(
          'ANTHROPIC_API_KEY is not set on the worker: set it (and ANTHROPIC_BASE_URL for a gateway) and resume the run, or try `npm run demo` for the offline scripted demo',
          'ModelNotConfigured',
        );
      }
      const context = Context.current();
      const execution = context.info.workflowExecution;
      if (!execution) throw ApplicationFailure.nonRetryable('callModel must run inside a workflow', 'NotInWorkflow');
      const { workflowId, runId } = execution;
      const transcript = await options.temporal.workflow.getHandle(workflowId, runId).query(transcriptQuery);
      if (transcript.version !== request.conversationVersion || transcript.messages.length < request.conversationLength) {
        throw ApplicationFailure.retryable('The conversation changed while the model call was scheduled', 'StaleTranscript');
      }
      const messages = transcript.messages.slice(0, request.conversationLength);
      const model = request.model ?? options.defaultModel;
      const heartbeat = setInterval(() => context.heartbeat({ waitingForModel: true }), 5_000);
      try {
        const response = await requestModelTurn(
          anthropic,
          {
            model,
            maxOutputTokens: request.maxOutputTokens,
            system: systemPrompt,
            tools: apiTools({ allowCommands: request.allowCommands }),
            messages,
            thinkingBudgetTokens: request.thinkingBudgetTokens,
            temperature: request.temperature,
          },
          { signal: context.cancellationSignal },
        );
        const oversizedToolInputs: Array<{ id: string; bytes: number }> = [];
        const content = response.content.map((block) => {
          if (block.type !== 'tool_use') return block;
          const bytes = JSON.stringify(block.input ?? {}).length;
          if (bytes <= maxToolInputBytes) return block;
          oversizedToolInputs.push({ id: block.id, bytes });
          return { ...block, input: {} };
        });
        return {
          content,
          stopReason: response.stopReason,
          usage: response.usage,
          ...costOfCall(model, response.model, response.usage),
          model,
          answeredBy: options.describeAnswerer?.(model) ?? `Claude (${response.model})`,
          requestId: response.requestId,
          oversizedToolInputs,
        };
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

export type ModelActivities = ReturnType<typeof createModelActivities>;
