// The run's queries, signals and updates, shared by the workflow, the activities and clients.
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate, type Sinks } from '@temporalio/workflow';
import type { AdmissionLimits, AdmissionState, SandboxRequest } from '../agent/admission.js';
import type { BudgetRaise } from '../agent/budgetRaise.js';
import type { Message } from '../agent/conversation.js';
import type { DebugInput } from '../agent/input.js';
import type { RunState, RunStatusView, SandboxPlacement } from '../agent/runState.js';

export const workflowType = 'debugRepository';

/**
 * Where runs ask for a sandbox host: every worker polls it only while it has room for one more
 * sandbox (src/sandbox/container/hostCapacity.ts), so a claim waits here until some host has room.
 */
export function sandboxClaimQueueFor(taskQueue: string): string {
  return `${taskQueue}/sandbox-claims`;
}

/** The queue of runs waiting for a sandbox (workflows/sandboxAdmission.ts): one workflow per task queue. */
export const sandboxAdmissionType = 'sandboxAdmission';
export function sandboxAdmissionIdFor(taskQueue: string): string {
  return `durable-debugger-sandbox-queue/${taskQueue}`;
}
/** A run asks the queue for a sandbox, with the limits its worker is configured with. */
export const sandboxRequestSignal = defineSignal<[SandboxRequest, AdmissionLimits]>('sandboxRequest');
/** A run gives its sandbox back (or stops waiting for one). */
export const sandboxReleaseSignal = defineSignal<[string]>('sandboxRelease');
/** The queue tells a run where its sandbox is. */
export const sandboxPlacedSignal = defineSignal<[SandboxPlacement]>('sandboxPlaced');
export const sandboxQueueQuery = defineQuery<AdmissionState>('sandboxQueue');

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
 * What a run tells its worker's process as it closes: its last answers to the two queries above,
 * so that a command following it there reads them without a replay (src/temporal/closingViews.ts).
 * A sink: no command, nothing in the history, never called on replay.
 */
export interface RunSinks extends Sinks {
  runs: { closing(status: RunStatusView, transcript: TranscriptView): void };
}
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
