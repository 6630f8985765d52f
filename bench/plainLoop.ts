// A plain in-process ReAct loop: the same run core (src/agent/run.ts: every rule, prompt and
// stop), the same SandboxHost and the same model client as the durable workflow, without Temporal. It is what a user would write
// instead (the seed article's loop), and the baseline the orchestration overhead is measured
// against. Nothing here survives a crash, and tool calls run one after the other.
import type Anthropic from '@anthropic-ai/sdk';
import type { Stop, TokenUsage } from '../src/agent/budgets.js';
import { parseDebugInput, type DebugInputJson } from '../src/agent/input.js';
import { systemPrompt } from '../src/agent/prompts.js';
import { statusFor, type RunStatus } from '../src/agent/report.js';
import { compactIfContextIsFull } from '../src/agent/compaction.js';
import { decideReply } from '../src/agent/reply.js';
import {
  beginIteration,
  recordModelCall,
  sandboxSettings,
  seedConversation,
  startRunState,
  stopBeforeNextCall,
  workspaceDigest,
} from '../src/agent/run.js';
import { testsFailed } from '../src/agent/testResults.js';
import { apiTools } from '../src/agent/tools.js';
import { applyToolOutcome, judgeFix, observeTurn, reviewVerdict } from '../src/agent/turn.js';
import { requestModelTurn } from '../src/model/anthropic.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';

export interface PlainLoopOptions {
  host: SandboxHost;
  anthropic: Anthropic;
  input: DebugInputJson;
  model: string;
  sandboxId: string;
  /**
   * An idle wait before every model request and tool call, not counted in their times: the same
   * work done on a CPU that went idle between steps, as a workflow's does while its tasks are
   * dispatched (bench/overhead.ts measures what that alone costs).
   */
  idleBeforeStepMs?: number;
}

export interface PlainLoopResult {
  status: RunStatus;
  iterations: number;
  tokens: TokenUsage;
  /** Time spent in model requests and in tools, over the run. */
  modelRequestMs: number;
  toolMs: number;
}

export async function runPlainLoop({
  host,
  anthropic,
  input: rawInput,
  model,
  sandboxId,
  idleBeforeStepMs = 0,
}: PlainLoopOptions): Promise<PlainLoopResult> {
  const idle = () =>
    idleBeforeStepMs > 0 ? new Promise((resolve) => setTimeout(resolve, idleBeforeStepMs)) : undefined;
  const input = parseDebugInput(rawInput);
  const state = startRunState(input, undefined, Date.now());
  let modelRequestMs = 0;
  let toolMs = 0;
  const end = (stop: Stop): PlainLoopResult => ({
    status: statusFor(stop.condition),
    iterations: state.iteration,
    tokens: state.tokens,
    modelRequestMs,
    toolMs,
  });
  const snapshot = await host.snapshotRepository(input.repo, input.testCommand);
  state.snapshot = snapshot;
  state.workspace = { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId };
  const settings = sandboxSettings(state, input);
  await host.prepare({
    sandboxId,
    workflowId: sandboxId,
    runId: 'plain-loop',
    log: state.workspace,
    limits: input.sandbox,
  });
  try {
    const runTestSuite = () => host.runTestSuite(sandboxId, workspaceDigest(state), settings);
    const baseline = await runTestSuite();
    state.baseline = baseline;
    if (!testsFailed(baseline)) return end({ condition: 'no_failing_tests', detail: 'the tests already pass' });
    seedConversation(state, input);

    for (;;) {
      let stop = stopBeforeNextCall(state, Date.now()) ?? compactIfContextIsFull(state, input);
      if (stop) return end(stop);
      beginIteration(state);
      await idle();
      const requestStarted = performance.now();
      const response = await requestModelTurn(anthropic, {
        model,
        maxOutputTokens: input.maxOutputTokens,
        system: systemPrompt,
        tools: apiTools({ allowCommands: input.allowCommands }),
        messages: state.conversation,
      });
      modelRequestMs += performance.now() - requestStarted;
      recordModelCall(state, { ...response, costUsd: null, answeredBy: response.model });
      const step = decideReply(state, response, input);
      if (step.next === 'stop') return end(step.stop);
      if (step.next === 'think') continue;
      // Unlike the workflow, the calls run one after the other.
      for (const call of step.turn.groups.flat()) {
        const request = { id: call.id, name: call.name, input: call.input };
        await idle();
        const toolStarted = performance.now();
        const outcome = await host.runTool({
          sandboxId,
          iteration: state.iteration,
          call: request,
          expectedDigest: workspaceDigest(state),
          settings,
        });
        toolMs += performance.now() - toolStarted;
        applyToolOutcome(state, step.turn, call, outcome);
      }
      // As in the workflow: never trust the model's claim, run the tests.
      const review = step.turn.finish ? reviewVerdict(judgeFix(baseline, await runTestSuite())) : null;
      stop = observeTurn(state, step.turn, review);
      if (stop) return end(stop);
    }
  } finally {
    await host.destroy(sandboxId);
  }
}
