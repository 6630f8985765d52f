// The queue of runs waiting for a sandbox host: one workflow per task queue, started by the first
// run that asks. It places runs one at a time, in start order within a priority, each on a host
// with room (its claim waits on the claim queue until some host has room, src/worker.ts), and
// holds back a user or the whole queue at its limit (src/agent/admission.ts has the rules). A run
// waits for its placement as a signal, costing nothing. Its line in the Web UI counts the queue.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClaimActivities, HostActivities } from '../activities/sandbox.js';
import type { SandboxQueueActivities } from '../activities/sandboxQueue.js';
import {
  admit,
  describeQueue,
  emptyAdmission,
  enqueue,
  nextRequest,
  placingDone,
  release,
  requeue,
  type AdmissionState,
  type SandboxRequest,
} from '../src/agent/admission.js';
import { sandboxIdFor } from '../src/agent/ids.js';
import type { SandboxPlacement } from '../src/agent/runState.js';
import {
  sandboxClaimQueueFor,
  sandboxPlacedSignal,
  sandboxQueueQuery,
  sandboxReleaseSignal,
  sandboxRequestSignal,
} from '../src/temporal/definitions.js';
import { sharedActivityRetry } from '../src/temporal/retryPolicies.js';

const queueActivities = proxyActivities<SandboxQueueActivities>({
  startToCloseTimeout: '1 minute',
  retry: sharedActivityRetry,
});

/** While a limit holds runs back, the queue looks this often for runs that ended without giving their sandbox back. */
const endedRunsCheck = '1 minute';
/** The queue continues as new after this many placements (or when Temporal suggests it), so its history stays short. */
const placementsPerWorkflowRun = 500;

export async function sandboxAdmission(carried?: AdmissionState): Promise<void> {
  const state = carried ?? emptyAdmission();
  const placedAtStart = state.placed;
  setHandler(sandboxRequestSignal, (request, limits) => {
    enqueue(state, request, limits);
    setCurrentDetails(describeQueue(state));
  });
  setHandler(sandboxReleaseSignal, (workflowId) => {
    release(state, workflowId);
    setCurrentDetails(describeQueue(state));
  });
  setHandler(sandboxQueueQuery, () => state);

  for (;;) {
    const longEnough = () =>
      workflowInfo().continueAsNewSuggested || state.placed - placedAtStart >= placementsPerWorkflowRun;
    const heldBack = () => state.waiting.length > 0 && nextRequest(state) === null;
    const canGo = () => nextRequest(state) !== null || longEnough();
    // Without a limit holding runs back there is nothing to look at: no timer.
    const ready = heldBack() ? await condition(canGo, endedRunsCheck) : (await condition(canGo), true);
    if (longEnough()) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof sandboxAdmission>(state);
    }
    if (!ready) {
      // Runs that ended without giving their sandbox back (terminated) no longer hold one.
      if (heldBack()) {
        const ended = await queueActivities.endedRuns({ workflowIds: Object.keys(state.holding) });
        for (const workflowId of ended) release(state, workflowId);
      }
      continue;
    }
    await place(state, nextRequest(state) as SandboxRequest);
    setCurrentDetails(describeQueue(state));
  }
}

/** Claims a host with room for the run (waiting for one if need be) and tells the run where it is. */
async function place(state: AdmissionState, request: SandboxRequest): Promise<void> {
  admit(state, request, Date.now());
  const sandboxId = sandboxIdFor(request.workflowId);
  const claims = proxyActivities<ClaimActivities>({
    taskQueue: sandboxClaimQueueFor(workflowInfo().taskQueue),
    startToCloseTimeout: '1 minute',
    retry: sharedActivityRetry,
    priority: { priorityKey: request.priority },
  });
  let placement: SandboxPlacement;
  try {
    const claimed = await claims.claimSandbox.executeWithOptions({ summary: `a host for ${request.workflowId}` }, [
      { sandboxId, workflowId: request.workflowId },
    ]);
    placement = { sandboxId, ...claimed };
  } catch {
    // The claim failed (its retries spent): the run goes back to its place, unless it stopped waiting.
    if (state.holding[request.workflowId]) requeue(state, request);
    await sleep('5 seconds');
    return;
  } finally {
    placingDone(state);
  }
  // A run that stopped waiting meanwhile is gone from the queue: its sandbox is given back at once.
  const stillWanted = Boolean(state.holding[request.workflowId]);
  const told =
    stillWanted &&
    (await getExternalWorkflowHandle(request.workflowId)
      .signal(sandboxPlacedSignal, placement)
      .then(
        () => true,
        () => false,
      ));
  if (told) return;
  release(state, request.workflowId);
  const host = proxyActivities<HostActivities>({
    taskQueue: placement.taskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '1 minute',
  });
  await host.destroySandbox({ sandboxId }).catch(() => undefined);
}
