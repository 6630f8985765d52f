// Patch approval: with `approve`, a verified fix waits for a person's answer, through the
// `approve` or `reject` update, before the run ends. The wait is a workflow condition: no
// worker slot and no polling while it waits (one timer when there is a timeout). A rejection's
// feedback goes back to the model as the reviewer's words, and the loop goes on.
import {
  condition,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SharedActivities } from '../activities/sandbox.js';
import * as prompts from '../src/agent/prompts.js';
import { awaitingApprovalStatus, runningStatus, type PatchForReport } from '../src/agent/report.js';
import { reviewVerdict, verifiedStop, type FixReview, type FixVerdict } from '../src/agent/turn.js';
import type { Phase } from '../src/agent/runState.js';
import { isWorkspaceAt, workspaceMark, type WorkspaceLog, type WorkspaceMark } from '../src/agent/workspace.js';
import { approveUpdate, rejectUpdate, type ApprovalAnswer } from '../src/temporal/definitions.js';
import { approvalActivityRetry } from '../src/temporal/retryPolicies.js';
import { statusAttribute } from './progress.js';

/** The patch is computed on the run's queue: its private queue when the input names one (see src/agent/runQueues.ts). */
function sharedActivities(privateQueue: string | undefined) {
  return proxyActivities<SharedActivities>({
    ...(privateQueue ? { taskQueue: privateQueue } : {}),
    startToCloseTimeout: '5 minutes',
    retry: approvalActivityRetry,
  });
}

export interface ApprovalOptions {
  enabled: boolean;
  timeoutMinutes?: number;
  /** The run's patchAllChanges: the patch shown is the report's. */
  allChanges?: boolean;
  /** The run's private queue, if its input names one. */
  privateQueue?: string;
  stopRequested: () => string | null;
  setPhase: (phase: Phase) => void;
}

export class ApprovalGate {
  private waiting: { patch: string; since: number } | null = null;
  private answer: ApprovalAnswer | null = null;
  /** The latest patch computed for approval, whole as computePatch returns it, and the workspace it is the patch of. */
  private computed: { patch: PatchForReport; workspace: WorkspaceMark } | null = null;

  constructor(private readonly options: ApprovalOptions) {}

  register(): void {
    setHandler(approveUpdate, () => this.take({ decision: 'approved' }), { validator: () => this.checkWaiting() });
    setHandler(rejectUpdate, (feedback: string) => this.take({ decision: 'rejected', feedback: feedback.trim() }), {
      validator: (feedback: string) => {
        this.checkWaiting();
        if (typeof feedback !== 'string' || !feedback.trim()) {
          throw new Error(
            'A rejection needs feedback for the model: say what to change, e.g. reject <id> "keep the public API unchanged".',
          );
        }
      },
    });
  }

  /** The patch awaiting approval, for the status query (null when not waiting). */
  get awaiting(): { patch: string; since: number } | null {
    return this.waiting;
  }

  /** The patch computed for approval when `workspace` is still exactly the one it was computed from, for the report; else null. */
  patchComputedFor(workspace: WorkspaceLog): PatchForReport | null {
    return this.computed && isWorkspaceAt(workspace, this.computed.workspace) ? this.computed.patch : null;
  }

  /** After finish: the verification's answer, and with approval on, a person's. */
  async review(verdict: FixVerdict, workspace: WorkspaceLog | undefined): Promise<FixReview> {
    if (!verdict.fixed || !this.options.enabled) return reviewVerdict(verdict);

    let patch = '';
    if (workspace?.mutations.length) {
      const computed = await sharedActivities(this.options.privateQueue).computePatch.executeWithOptions(
        { summary: 'compute the patch to approve' },
        [
          {
            snapshotId: workspace.snapshotId,
            mutations: workspace.mutations,
            ...(this.options.allChanges ? { allChanges: true } : {}),
          },
        ],
      );
      this.computed = { patch: computed, workspace: workspaceMark(workspace) };
      patch = computed.patch; // a large patch is shown by its beginning
    }
    const timeout = this.options.timeoutMinutes;
    const answer = await this.awaitAnswer(patch);
    if (answer?.decision === 'approved') {
      return {
        accepted: true,
        message: prompts.fixVerifiedAndApproved,
        stop: { ...verifiedStop, detail: 'the fix was verified and approved' },
      };
    }
    if (answer?.decision === 'rejected')
      return { accepted: false, message: prompts.fixRejected(answer.feedback ?? ''), stop: null };
    const stop = this.options.stopRequested();
    if (stop)
      return {
        accepted: false,
        message: 'The run was stopped while the fix awaited approval.',
        stop: { condition: 'stop_signal', detail: stop },
      };
    return {
      accepted: false,
      message: 'No one approved the fix in time.',
      stop: { condition: 'not_approved', detail: `the verified fix was not approved within ${timeout} minutes` },
    };
  }

  /**
   * Shows `patch` as awaiting approval and waits for a person's answer: null when the run was
   * stopped or the timeout passed first. (The parent of parallel attempts asks about its kept fix.)
   */
  async awaitAnswer(patch: string): Promise<ApprovalAnswer | null> {
    const timeout = this.options.timeoutMinutes;
    this.waiting = { patch, since: Date.now() };
    this.answer = null;
    this.options.setPhase('awaiting_approval');
    upsertSearchAttributes([statusAttribute(awaitingApprovalStatus)]);
    setCurrentDetails(
      `phase: awaiting_approval · a verified fix waits${timeout === undefined ? '' : ` up to ${timeout} minutes`} for the update ` +
        `\`approve\`, or \`reject\` with feedback\n\n${patch}`,
    );
    const answered = () => this.answer !== null || this.options.stopRequested() !== null;
    if (timeout === undefined) await condition(answered);
    else await condition(answered, timeout * 60_000);

    const answer = this.answer as ApprovalAnswer | null;
    this.waiting = null;
    this.answer = null;
    upsertSearchAttributes([statusAttribute(runningStatus)]);
    this.options.setPhase('acting');
    return answer;
  }

  private take(answer: ApprovalAnswer): ApprovalAnswer {
    this.answer = answer;
    return answer;
  }

  private checkWaiting(): void {
    if (!this.waiting)
      throw new Error(
        'This run is not awaiting approval: only a verified fix of a run started with approve can be approved or rejected.',
      );
    if (this.answer) throw new Error(`This fix was already ${this.answer.decision}.`);
  }
}
