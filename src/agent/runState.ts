// Everything a run remembers. It lives in workflow state, travels through continue-as-new,
// and is what the `status` query shows.
import type { TokenUsage } from './budgets.js';
import type { Message } from './conversation.js';
import type { Budgets } from './input.js';
import type { ToolCallRecord } from './report.js';
import type { RepositorySnapshot } from './sandboxProtocol.js';
import type { TestSummary } from './testResults.js';
import type { WorkspaceLog } from './workspace.js';

export type Phase = 'preparing' | 'baseline' | 'thinking' | 'acting' | 'verifying' | 'paused' | 'reporting' | 'done';

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
  baseline?: TestSummary;
  lastTestRun?: { digest: string; summary: TestSummary };
  conversation: Message[];
  conversationVersion: number;
  iteration: number;
  budgets: Budgets;
  tokens: TokenUsage;
  costUsd: number | null;
  /** Set when the cost is counted at a conservative price (the model has no listed price). */
  costNote?: string | null;
  modelCalls: number;
  /** Input tokens of the latest request, for estimating the next one. */
  lastRequestTokens: number;
  /** Conversation size (characters) when the latest request was sent. */
  lastRequestCharacters: number;
  model: string | null;
  answeredBy: string | null;
  lastThought: string;
  toolCalls: ToolCallRecord[];
  pendingHints: string[];
  stopRequested: string | null;
  nudged: boolean;
  guardrailRefusals: number;
  rootCause: string | null;
  fixSummary: string | null;
  compactions: number;
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
  toolCalls: number;
  model: string | null;
  answeredBy: string | null;
  repository: string | null;
  testsBefore: TestSummary | null;
  workflowRuns: number;
  stopRequested: string | null;
}
