// Everything a run remembers. It lives in workflow state, travels through continue-as-new,
// and is what the `status` query shows.
import type { TokenUsage } from './budgets.js';
import type { Message } from './conversation.js';
import type { PreparedEnvironment } from './environment.js';
import type { ModelUsage } from './budgets.js';
import type { Budgets } from './input.js';
import type { ToolCallRecord } from './report.js';
import type { RepositorySnapshot } from './sandboxProtocol.js';
import type { TestSummary } from './testResults.js';
import type { WorkspaceLog } from './workspace.js';

export type Phase =
  | 'preparing'
  | 'baseline'
  | 'thinking'
  | 'acting'
  | 'verifying'
  | 'awaiting_approval'
  | 'paused'
  | 'attempts'
  | 'reporting'
  | 'done';

export interface SandboxPlacement {
  sandboxId: string;
  /** The task queue of the worker that holds the container. */
  taskQueue: string;
  host: string;
}

export interface RunState {
  phase: Phase;
  /** Workflow time (ms since epoch) when the first run of this debugging session started (moved on by the time between a run and its resume). */
  startedAt: number;
  snapshot?: RepositorySnapshot;
  workspace?: WorkspaceLog;
  sandbox?: SandboxPlacement;
  /** The environment image the sandbox runs (null: the base image as it is). */
  environment?: PreparedEnvironment | null;
  baseline?: TestSummary;
  /** The workflow's latest run of the whole test suite (baseline, verification), never the model's run_tests. */
  lastSuiteRun?: { digest: string; summary: TestSummary };
  conversation: Message[];
  conversationVersion: number;
  /**
   * The iteration of each assistant message of the conversation, in order (a model call that
   * was retried after compaction, or a paused turn, makes iterations and replies differ).
   * Absent in states written by older code.
   */
  replyIterations?: number[];
  /** The workflow's iteration count: one per model call. */
  iteration: number;
  budgets: Budgets;
  tokens: TokenUsage;
  costUsd: number | null;
  /** Set when the cost is counted at a conservative price (the model has no listed price). */
  costNote?: string | null;
  /** Set once a reply asked for streamed came whole: the endpoint does not stream (absent: every reply streamed, or none asked). */
  repliesNotStreamed?: boolean;
  modelCalls: number;
  /** Input tokens of the latest request, for estimating the next one. */
  lastRequestTokens: number;
  /** Conversation size (characters) when the latest request was sent. */
  lastRequestCharacters: number;
  model: string | null;
  answeredBy: string | null;
  /** Each model's calls and cost (absent in states written before fallback models). */
  modelUsage?: ModelUsage[];
  /** When the fallback model last answered for a failing primary: calls stay with it for a while. */
  fallbackSince?: number | null;
  lastThought: string;
  toolCalls: ToolCallRecord[];
  /** How many of the oldest tool-call records were dropped to keep the state under the payload limit. */
  earlierToolCalls?: number;
  pendingHints: string[];
  stopRequested: string | null;
  /** Replies without a tool call in a row (absent in states written by older code). */
  textOnlyRepliesInARow?: number;
  guardrailRefusals: number;
  rootCause: string | null;
  fixSummary: string | null;
  compactions: number;
  /** Time spent waiting for a sandbox host with room, which the time budget does not count (absent: none). */
  waitedForHostMs?: number;
  workflowRuns: number;
  resumedFrom: string | null;
}

export interface RunStatusView {
  phase: Phase;
  iteration: number;
  maxIterations: number;
  lastThought: string;
  tokens: TokenUsage;
  costUsd: number | null;
  costNote: string | null;
  budgets: Budgets;
  elapsedMs: number;
  /** Of elapsedMs, the time spent waiting for a sandbox host (not counted by the time budget unless the input says so). */
  waitedForHostMs?: number;
  toolCalls: number;
  model: string | null;
  answeredBy: string | null;
  repository: string | null;
  testsBefore: TestSummary | null;
  workflowRuns: number;
  stopRequested: string | null;
  /** While awaiting approval: the verified patch a person is asked to approve. */
  awaitingApproval?: { patch: string; since: number } | null;
  /** A run with several attempts: its children (their own status queries give the live details). */
  attempts?: AttemptProgress[];
  environment?: PreparedEnvironment | null;
  /** Whose workers answer the run's model calls (src/agent/modelEndpoint.ts). */
  modelEndpoint: string;
  /** Set while no worker of that endpoint takes the run's model call: what it waits for and what to start. */
  waitingFor: string | null;
}

export interface AttemptProgress {
  attempt: number;
  workflowId: string;
  /** `running` until the child ends, then its final status. */
  status: string;
  label: string;
}
