// A plain in-process ReAct loop: the same agent core (src/agent), the same SandboxHost and the
// same model client as the durable workflow, without Temporal. It is what a user would write
// instead (the seed article's loop), and the baseline the orchestration overhead is measured
// against. Nothing here survives a crash, and tool calls run one after the other.
import type Anthropic from '@anthropic-ai/sdk';
import { addUsage, budgetStop, emptyUsage, estimateTokens, requestInputTokens, type TokenUsage } from '../src/agent/budgets.js';
import { appendExchange, conversationBytes, toolCallsOf, userText, type Message, type ToolResultBlock } from '../src/agent/conversation.js';
import { parseDebugInput, type DebugInputJson } from '../src/agent/input.js';
import { defaultGoal, systemPrompt, taskPrompt, verificationFailed } from '../src/agent/prompts.js';
import type { SandboxSettings } from '../src/agent/sandboxProtocol.js';
import { testsFailed, verifyFix } from '../src/agent/testResults.js';
import { sanitizeReply } from '../src/agent/reply.js';
import { apiTools, parseToolCall, type ParsedToolCall } from '../src/agent/tools.js';
import type { WorkspaceLog } from '../src/agent/workspace.js';
import { requestModelTurn } from '../src/model/anthropic.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';

export interface PlainLoopOptions {
  host: SandboxHost;
  anthropic: Anthropic;
  input: DebugInputJson;
  model: string;
  sandboxId: string;
}

export interface PlainLoopResult {
  status: 'fixed' | 'no_failing_tests' | 'not_fixed' | 'budget_exhausted';
  iterations: number;
  tokens: TokenUsage;
  /** Time spent in model requests and in tools, over the run. */
  modelRequestMs: number;
  toolMs: number;
}

export async function runPlainLoop({ host, anthropic, input: rawInput, model, sandboxId }: PlainLoopOptions): Promise<PlainLoopResult> {
  const input = parseDebugInput(rawInput);
  const snapshot = await host.snapshotRepository(input.repo, input.testCommand);
  const workspace: WorkspaceLog = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
  const settings: SandboxSettings = {
    testCommand: snapshot.testCommand,
    allowTestEdits: input.allowTestEdits,
    testFileGlobs: input.testFileGlobs,
    limits: input.sandbox,
    observation: input.observation,
  };
  await host.prepare({ sandboxId, workflowId: sandboxId, runId: 'plain-loop', log: workspace, limits: input.sandbox });
  try {
    let modelRequestMs = 0;
    let toolMs = 0;
    const runTestSuite = () => host.runTestSuite(sandboxId, workspace.digest, settings);
    const runTool = async (call: Extract<ParsedToolCall, { ok: true }>, iteration: number) => {
      const toolStarted = performance.now();
      const outcome = await host.runTool({
        sandboxId,
        iteration,
        call: { id: call.id, name: call.name, input: call.input },
        expectedDigest: workspace.digest,
        settings,
      });
      workspace.mutations.push(...outcome.mutations);
      workspace.digest = outcome.digest;
      toolMs += performance.now() - toolStarted;
      return outcome;
    };
    const baseline = await runTestSuite();
    let tokens = emptyUsage();
    if (!testsFailed(baseline)) return { status: 'no_failing_tests', iterations: 0, tokens, modelRequestMs, toolMs };

    const conversation: Message[] = [
      userText(taskPrompt({ repositoryName: snapshot.repositoryName, goal: input.goal ?? defaultGoal, testCommand: snapshot.testCommand, baseline })),
    ];
    let iteration = 0;
    let lastRequestTokens = 0;
    let lastRequestCharacters = 0;
    const startedAt = Date.now();
    for (;;) {
      const stop = budgetStop(input.budgets, {
        iterations: iteration,
        tokens,
        costUsd: null,
        elapsedMs: Date.now() - startedAt,
        nextRequestTokens: lastRequestTokens + estimateTokens(conversationBytes(conversation) - lastRequestCharacters),
      });
      if (stop) return { status: 'budget_exhausted', iterations: iteration, tokens, modelRequestMs, toolMs };
      iteration += 1;

      const requestStarted = performance.now();
      const turn = await requestModelTurn(anthropic, {
        model,
        maxOutputTokens: input.maxOutputTokens,
        system: systemPrompt,
        tools: apiTools({ allowCommands: input.allowCommands }),
        messages: conversation,
      });
      modelRequestMs += performance.now() - requestStarted;
      tokens = addUsage(tokens, turn.usage);
      lastRequestTokens = requestInputTokens(turn.usage);
      lastRequestCharacters = conversationBytes(conversation);
      const content = sanitizeReply(turn.content);
      const calls = toolCallsOf(content);
      if (calls.length === 0) return { status: 'not_fixed', iterations: iteration, tokens, modelRequestMs, toolMs };

      const results: ToolResultBlock[] = [];
      let fixed = false;
      for (const call of calls) {
        const parsed = parseToolCall(call, { allowCommands: input.allowCommands });
        let outcome: { content: string; isError: boolean };
        if (!parsed.ok) {
          outcome = { content: parsed.error, isError: true };
        } else if (parsed.effect === 'finish') {
          // As in the workflow: never trust the model's claim, run the tests.
          const after = await runTestSuite();
          const verdict = verifyFix(baseline, after);
          fixed = verdict.fixed;
          outcome = fixed
            ? { content: 'Verified: the test suite passes. The run is complete.', isError: false }
            : { content: verificationFailed(verdict.reason, after), isError: true };
        } else {
          outcome = await runTool(parsed, iteration);
        }
        results.push({ type: 'tool_result', tool_use_id: call.id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) });
      }
      appendExchange(conversation, { role: 'assistant', content }, results);
      if (fixed) return { status: 'fixed', iterations: iteration, tokens, modelRequestMs, toolMs };
    }
  } finally {
    await host.destroy(sandboxId);
  }
}
