// The end of every run: the final test run (unless the suite already ran on this workspace),
// the patch, the final status as a search attribute, and the report. A step of it that fails
// becomes a problem stated in the report.
import { patched, workflowInfo } from '@temporalio/workflow';
import type { Stop } from '../src/agent/budgets.js';
import type { DebugInput } from '../src/agent/input.js';
import { statusFor, type DebugReport, type PatchForReport } from '../src/agent/report.js';
import { buildReport, shrinkForCheckpoint, testsAfterRun } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import type { TestSummary } from '../src/agent/testResults.js';
import type { ApprovalGate } from './approval.js';
import { failureMessage } from './failures.js';
import type { RunProgress } from './progress.js';
import type { SandboxSteps } from './sandboxSteps.js';
import { sharedOf } from './sharedActivities.js';

export async function endRun(
  run: {
    state: RunState;
    input: DebugInput;
    sandbox: SandboxSteps;
    progress: RunProgress;
    approval?: Pick<ApprovalGate, 'patchComputedFor'>;
  },
  stop: Stop,
): Promise<DebugReport> {
  const { state, sandbox, progress } = run;
  progress.setPhase('reporting');
  shrinkForCheckpoint(state);
  const problems: string[] = [];
  const after = testsAfterRun(state, stop);
  const testsAfter: TestSummary | null =
    after === 'none'
      ? null
      : after !== 'run'
        ? after.known
        : await sandbox.runTestSuite('final test run', { fresh: true }).catch((error: unknown) => {
            problems.push(`the final test run failed: ${failureMessage(error)}`);
            return null;
          });
  let patch: PatchForReport = { patch: '', fullPatch: null };
  const workspace = state.workspace;
  // The patch shown for approval is the report's when the workspace has not changed since
  // (runs recorded before this reuse computed it again, and replay the same way).
  const computedForApproval = workspace ? run.approval?.patchComputedFor(workspace) : null;
  if (computedForApproval && patched('report-reuses-the-patch-computed-for-approval')) {
    patch = computedForApproval;
  } else if (workspace && workspace.mutations.length > 0) {
    patch = await sharedOf(run.input)
      .computePatch.executeWithOptions({ summary: 'compute the patch' }, [
        {
          snapshotId: workspace.snapshotId,
          mutations: workspace.mutations,
          ...(run.input.patchAllChanges ? { allChanges: true } : {}),
        },
      ])
      .catch((error: unknown) => {
        problems.push(`the patch could not be computed: ${failureMessage(error)}`);
        return patch;
      });
  }
  progress.setPhase('done');
  progress.publishEnd(statusFor(stop.condition));
  return buildReport(state, run.input, {
    workflowId: workflowInfo().workflowId,
    stop,
    testsAfter,
    patch,
    problems,
    now: Date.now(),
  });
}
