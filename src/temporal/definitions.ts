// The run's queries, signals and updates, shared by the workflow, the activities and clients.
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { BudgetRaise } from '../agent/budgetRaise.js';
import type { Message } from '../agent/conversation.js';
import type { DebugInput } from '../agent/input.js';
import type { RunState, RunStatusView } from '../agent/runState.js';

export const workflowType = 'debugRepository';

export interface TranscriptView {
  messages: Message[];
  /** Changes whenever earlier messages change (compaction), so a reader can tell stale copies. */
  version: number;
  /**
   * The iteration of each assistant message, as the workflow counts them (src/agent/run.ts
   * replyIterationsOf); null or absent when unknown. Readers show these, never a count of replies.
   */
  replyIterations?: number[] | null;
}

export type { BudgetRaise };

export const statusQuery = defineQuery<RunStatusView>('status');
export const transcriptQuery = defineQuery<TranscriptView>('transcript');
/**
 * What a run saves for `resume` (a new run that goes on from it, with input `resumeFrom`): its
 * input and whole state. A parent of parallel attempts has no loop state (null): its attempts
 * have theirs, and resuming it resumes them.
 */
export interface SavedState {
  input: DebugInput;
  state: RunState | null;
}
export const savedStateQuery = defineQuery<SavedState>('savedState');
export const hintSignal = defineSignal<[string]>('hint');
export const stopSignal = defineSignal<[string?]>('stop');
/** Raises the budgets of a run; on a paused run it also raises whatever paused it (`{}` raises just that). */
export const raiseBudgetUpdate = defineUpdate<RunStatusView, [BudgetRaise]>('raiseBudget');

/** A person's answer to a fix awaiting approval (`approve`, or `reject` with feedback for the model). */
export interface ApprovalAnswer {
  decision: 'approved' | 'rejected';
  feedback?: string;
}
export const approveUpdate = defineUpdate<ApprovalAnswer, []>('approve');
export const rejectUpdate = defineUpdate<ApprovalAnswer, [string]>('reject');

/** Search attributes, registered on the embedded server so runs can be filtered by them. */
export const searchAttributes = {
  status: defineSearchAttributeKey('DebugStatus', 'KEYWORD'),
  iterations: defineSearchAttributeKey('DebugIterations', 'INT'),
  costUsd: defineSearchAttributeKey('DebugCostUsd', 'DOUBLE'),
};
