// Where a run's sandbox lives: a worker host with room for it. A run asks the sandbox queue of
// its task queue (workflows/sandboxAdmission.ts), which places runs in start order within a
// priority, each on a host with room, and signals where. While it waits the run costs nothing
// (no model call, no sandbox) but a look at its place every half minute, and says so in its
// status and the Web UI ("waiting for a sandbox host: 3 queued, 2 ahead"). Waiting is not working
// time: the time budget does not count it unless the run's input says so. A sandbox whose host
// is gone moves at once to a host with room, ahead of the queue (it was placed before).
import {
  condition,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClaimActivities } from '../activities/sandbox.js';
import type { SandboxQueueActivities } from '../activities/sandboxQueue.js';
import { defaultPriority, describeWait, type SandboxRequest } from '../src/agent/admission.js';
import { sandboxIdFor } from '../src/agent/ids.js';
import type { DebugInput } from '../src/agent/input.js';
import { activityQueueOf } from '../src/agent/runQueues.js';
import type { RunState, SandboxPlacement } from '../src/agent/runState.js';
import {
  sandboxAdmissionIdFor,
  sandboxClaimQueueFor,
  sandboxPlacedSignal,
  sandboxReleaseSignal,
} from '../src/temporal/definitions.js';
import { sharedActivityRetry } from '../src/temporal/retryPolicies.js';
import { shared } from './sharedActivities.js';

/** Runs recorded before hosts had a capacity claimed a host on the shared task queue, from any worker. */
export const hostCapacityPatch = 'sandbox-host-capacity';

/** A run not placed this soon is waiting: it says so, and looks at its place this often. */
const quietWaitMs = 2_000;
const placeLookupEveryMs = 30_000;

/** On the run's queue: its private queue when its input names one (src/agent/runQueues.ts), else the workflow's. */
function queueActivitiesOf(input: DebugInput) {
  return proxyActivities<SandboxQueueActivities>({
    ...(input.privateQueue ? { taskQueue: input.privateQueue } : {}),
    startToCloseTimeout: '1 minute',
    retry: sharedActivityRetry,
  });
}

export class SandboxClaim {
  /** Set while the run waits for a host with room: what status and the Web UI show. */
  waitingFor: string | null = null;
  private asked = false;
  /**
   * Where the queue placed the sandbox, until the run takes it (in `claim`): the run's own
   * `state.sandbox` is set only there, so that a placement arriving early (while the run
   * snapshots its repository) never skips the environment and sandbox preparation.
   */
  private placement: SandboxPlacement | null = null;

  constructor(
    private readonly state: RunState,
    private readonly input: DebugInput,
  ) {
    setHandler(sandboxPlacedSignal, (placement) => {
      this.placement ??= placement;
    });
  }

  /**
   * Places the sandbox on a host with room (`move`: its earlier host is gone). Returns false
   * when a stop ended the wait before the run was placed.
   */
  async claim(move: boolean): Promise<boolean> {
    const state = this.state;
    const workflowId = workflowInfo().workflowId;
    const sandboxId = sandboxIdFor(workflowId);
    if (!patched(hostCapacityPatch)) {
      const placement = await shared.claimSandboxHost.executeWithOptions(
        { summary: 'choose a worker for the sandbox' },
        [],
      );
      state.sandbox = { sandboxId, ...placement };
      return true;
    }
    if (move) {
      const placement = await claimActivities(this.queue()).claimSandbox.executeWithOptions(
        { summary: 'move the sandbox to a host with room' },
        [{ sandboxId, workflowId }],
      );
      state.sandbox = { sandboxId, ...placement };
      return true;
    }
    return this.waitInQueue();
  }

  /**
   * Takes the run's place in the queue, first thing (the queue orders runs by their start, so
   * that the runs waiting at once are placed in start order); the run waits in `claim`.
   */
  async ask(): Promise<void> {
    if (this.asked || this.state.sandbox || this.placement || !patched(hostCapacityPatch)) return;
    this.asked = true;
    await queueActivitiesOf(this.input).requestSandbox.executeWithOptions({ summary: 'ask for a sandbox host' }, [
      { taskQueue: this.queue(), request: this.request() },
    ]);
  }

  /** The queue whose hosts place the sandbox: the starter's private queue, else the workflow's (the deployment's). */
  private queue(): string {
    return activityQueueOf(this.input, workflowInfo().taskQueue);
  }

  private request(): SandboxRequest {
    const info = workflowInfo();
    return {
      workflowId: info.workflowId,
      user: this.input.user ?? 'unknown',
      priority: this.input.priority ?? defaultPriority,
      startedAt: info.startTime.getTime(),
    };
  }

  /** Waits for the placement the queue signals (or a stop). */
  private async waitInQueue(): Promise<boolean> {
    const state = this.state;
    const request = this.request();
    await this.ask();
    const asked = Date.now();
    const settled = () => this.placement !== null || state.stopRequested !== null;
    for (let quiet = true; !(await condition(settled, quiet ? quietWaitMs : placeLookupEveryMs)); quiet = false) {
      const place = await queueActivitiesOf(this.input).sandboxQueuePlace.executeWithOptions(
        { summary: 'place in the queue' },
        [{ taskQueue: this.queue(), request }],
      );
      this.waitingFor = describeWait(place);
      setCurrentDetails(this.waitingFor);
    }
    this.waitingFor = null;
    if (!this.input.countWaitingTime) state.waitedForHostMs = (state.waitedForHostMs ?? 0) + (Date.now() - asked);
    if (this.placement) {
      state.sandbox = this.placement;
      return true;
    }
    // Stopped while waiting: the run leaves the queue (a placement that crosses this is given back).
    await this.release();
    return false;
  }

  /** The run leaves the queue, or gives its sandbox back: the queue may place another run (of this user) now. */
  async release(): Promise<void> {
    if (!(this.asked || this.state.sandbox) || !patched(hostCapacityPatch)) return;
    const admission = getExternalWorkflowHandle(sandboxAdmissionIdFor(this.queue()));
    await admission.signal(sandboxReleaseSignal, workflowInfo().workflowId).catch(() => undefined);
  }
}

/** A move goes first among the claims (the run was placed before). */
function claimActivities(queue: string) {
  return proxyActivities<ClaimActivities>({
    taskQueue: sandboxClaimQueueFor(queue),
    startToCloseTimeout: '1 minute',
    retry: sharedActivityRetry,
    priority: { priorityKey: 1 },
  });
}
