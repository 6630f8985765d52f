// The sandbox as the loop's environment: where it lives (a worker that holds the container),
// how it is prepared and rebuilt from the snapshot and the workspace log, how it moves when its
// worker is gone, how a tool and the test suite run in it, and how it is destroyed.
import {
  ApplicationFailure,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { HostActivities } from '../activities/sandbox.js';
import { environmentActivityRetry, sandboxActivityRetry } from '../src/temporal/retryPolicies.js';
import { describeEnvironment, environmentForSandbox } from '../src/agent/environment.js';
import type { DebugInput } from '../src/agent/input.js';
import { sandboxLimitsOf, sandboxSettings, workspaceDigest } from '../src/agent/run.js';
import type { RunState } from '../src/agent/runState.js';
import { sandboxNeedsPrepare, type RepositorySnapshot, type ToolOutcome } from '../src/agent/sandboxProtocol.js';
import type { TestSummary } from '../src/agent/testResults.js';
import { describeToolCall } from '../src/agent/tools.js';
import { judgeFix, type FixVerdict, type RunnableCall } from '../src/agent/turn.js';
import { isFailureOfType, isHostUnreachable } from './failures.js';
import { SandboxClaim } from './sandboxClaim.js';
import { sharedOf } from './sharedActivities.js';

export { shared } from './sharedActivities.js';

/** Sandbox activities go to the worker that holds the container; if it is gone, they time out waiting to start. */
function hostActivities(hostTaskQueue: string, commandTimeoutSeconds: number) {
  return proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: `${commandTimeoutSeconds + 120} seconds`,
    heartbeatTimeout: '20 seconds',
    retry: sandboxActivityRetry,
  });
}

/** The environment step: long (installs), with heartbeats carrying the installer's output; a failed install is not retried. */
function environmentActivities(hostTaskQueue: string) {
  return proxyActivities<HostActivities>({
    taskQueue: hostTaskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: environmentActivityRetry,
  });
}

/** Marks the histories whose verification and final test run prepare a fresh sandbox first. */
const freshSuitePatch = 'suite-runs-in-a-fresh-sandbox';

/** Sandbox work is tried this often; a lost host is looked for again this often while preparing. */
const maxSandboxAttempts = 5;
const maxPrepareAttempts = 3;

export class SandboxSteps {
  private preparing: Promise<void> | null = null;
  /** Where the sandbox lives; while it waits for a host with room, `claim.waitingFor` says so. */
  readonly claim: SandboxClaim;

  constructor(
    private readonly state: RunState,
    private readonly input: DebugInput,
  ) {
    this.claim = new SandboxClaim(state, input);
  }

  /** Places the sandbox on a worker host with room, and prepares it there; false when a stop ended the wait for one. */
  async move(): Promise<boolean> {
    if (!(await this.claim.claim(this.state.sandbox !== undefined))) return false;
    await prepareEnvironment(this.state, this.input);
    await this.prepare();
    return true;
  }

  /** Not an async function, for the reason withSandbox gives. */
  runTool(call: RunnableCall): Promise<ToolOutcome> {
    const state = this.state;
    return this.withSandbox((activities, sandboxId) =>
      activities.runTool.executeWithOptions(
        { summary: `iteration ${state.iteration} · ${describeToolCall(call.name, call.input)}` },
        [
          {
            sandboxId,
            iteration: state.iteration,
            call: { id: call.id, name: call.name, input: call.input },
            expectedDigest: workspaceDigest(state),
            settings: sandboxSettings(state, this.input),
          },
        ],
      ),
    );
  }

  /**
   * The workflow's own run of the whole suite (it is what the report and the verification count).
   * `fresh`: after the model's work, in a fresh sandbox (the snapshot, the log replayed, a new
   * container), which the run's later steps then use: what it counts is what the patch holds, not
   * what the model's commands left in files the log never records (bytecode, build output, links),
   * nor the changes the patch leaves out, which it undoes (and the log records the undoing).
   */
  async runTestSuite(purpose: string, options: { fresh?: boolean } = {}): Promise<TestSummary> {
    if (options.fresh && patched(freshSuitePatch)) await this.prepare(true);
    const digest = workspaceDigest(this.state);
    const summary = await this.withSandbox((activities, sandboxId) =>
      activities.runTestSuite.executeWithOptions({ summary: purpose }, [
        { sandboxId, expectedDigest: digest, settings: sandboxSettings(this.state, this.input) },
      ]),
    );
    this.state.lastSuiteRun = { digest, summary };
    return summary;
  }

  /** After finish: the suite runs on the workspace, fresh, and its result against the baseline is the verdict. */
  async verify(): Promise<FixVerdict> {
    const logged = this.state.workspace?.mutations.length ?? 0;
    const after = await this.runTestSuite(`iteration ${this.state.iteration} · verify the fix`, { fresh: true });
    const undone = this.state.workspace?.mutations.slice(logged).filter((change) => change.madeBy === 'verification');
    return judgeFix(
      this.state.baseline as TestSummary,
      after,
      undone?.map((change) => change.path),
    );
  }

  async destroy(): Promise<void> {
    const placement = this.state.sandbox;
    if (placement) await destroyContainer(placement, this.input);
    await this.claim.release();
  }

  /**
   * Runs sandbox work on the worker that holds the sandbox. If the workspace or container is
   * not as expected, it is prepared again (rebuilt from the snapshot and the log); if that
   * worker cannot be reached, the sandbox moves to another worker.
   */
  private withSandbox<T>(
    work: (activities: ReturnType<typeof hostActivities>, sandboxId: string) => Promise<T>,
    attempt = 1,
  ): Promise<T> {
    const placement = this.state.sandbox;
    if (!placement) return Promise.reject(ApplicationFailure.nonRetryable('The sandbox was not prepared', 'NoSandbox'));
    // Not an async function: on the path every tool call takes, an async layer and its await would
    // add two promises to the workflow task (the SDK captures a stack for each); .catch adds one.
    return work(
      hostActivities(placement.taskQueue, sandboxLimitsOf(this.state, this.input).commandTimeoutSeconds),
      placement.sandboxId,
    ).catch(async (error: unknown) => {
      if (attempt >= maxSandboxAttempts || isCancellation(error)) throw error;
      if (isFailureOfType(error, sandboxNeedsPrepare)) await this.prepare();
      else if (isHostUnreachable(error)) await this.move();
      else throw error;
      return this.withSandbox(work, attempt + 1);
    });
  }

  /** Concurrent reads that all find the sandbox missing share one preparation; a fresh one is made after it. */
  private async prepare(fresh = false): Promise<void> {
    if (fresh) await this.preparing;
    if (!this.preparing) {
      this.preparing = prepareSandbox(this.state, this.input, this.claim, fresh).finally(() => {
        this.preparing = null;
      });
    }
    return this.preparing;
  }
}

/** Builds or reuses the image with the repository's dependencies, on the sandbox's host (the only step with network). */
async function prepareEnvironment(state: RunState, input: DebugInput): Promise<void> {
  const placement = state.sandbox as NonNullable<RunState['sandbox']>;
  const info = workflowInfo();
  state.environment = await environmentActivities(placement.taskQueue).prepareEnvironment.executeWithOptions(
    {
      summary: `environment · ${input.environment ? 'as the run input names it' : (state.snapshot?.environment ?? 'none needed')} · on ${placement.host}`,
    },
    [
      {
        snapshotId: (state.snapshot as RepositorySnapshot).snapshotId,
        choice: input.environment ?? {},
        projectVersion: state.snapshot?.projectVersion,
        repository: input.repo,
        workflowId: info.workflowId,
        runId: info.runId,
      },
    ],
  );
  setCurrentDetails(describeEnvironment(state.environment));
}

/** Makes the container and the workspace (the snapshot with the log replayed) on the host; another host if that one is gone. */
async function prepareSandbox(state: RunState, input: DebugInput, claim: SandboxClaim, fresh: boolean): Promise<void> {
  const workspace = state.workspace;
  if (!state.sandbox || !workspace) throw ApplicationFailure.nonRetryable('Nothing to prepare', 'NoSandbox');
  const info = workflowInfo();
  // What the patch leaves out is undone in a fresh sandbox, unless the patch keeps every change. No
  // patch marker: only the activity's input and what the workflow keeps of its result change, not
  // the commands, and a recorded result replays as it was.
  const undoByProducts = fresh && !input.patchAllChanges;
  for (let attempt = 1; ; attempt++) {
    const current = state.sandbox as NonNullable<RunState['sandbox']>;
    try {
      const prepared = await hostActivities(current.taskQueue, 60).prepareSandbox.executeWithOptions(
        { summary: `prepare ${fresh ? 'a fresh' : 'the'} sandbox on ${current.host}` },
        [
          {
            sandboxId: current.sandboxId,
            workflowId: info.workflowId,
            runId: info.runId,
            log: workspace,
            limits: sandboxLimitsOf(state, input),
            environment: environmentForSandbox(state.environment),
            ...(fresh ? { fresh } : {}),
            ...(undoByProducts ? { undoByProducts } : {}),
          },
        ],
      );
      // The log describes the workspace again: the undoing is part of it.
      if (prepared.undone) {
        workspace.mutations.push(...prepared.undone.mutations);
        workspace.digest = prepared.undone.digest;
      }
      if (prepared.rebuiltBecause) setCurrentDetails(`sandbox rebuilt: ${prepared.rebuiltBecause}`);
      return;
    } catch (error) {
      if (attempt >= maxPrepareAttempts || !isHostUnreachable(error)) throw error;
      await claim.claim(true);
    }
  }
}

/** Destroys the sandbox on its host, or removes its container from any worker when the host is gone. */
async function destroyContainer(placement: NonNullable<RunState['sandbox']>, input: DebugInput): Promise<void> {
  try {
    await hostActivities(placement.taskQueue, 60).destroySandbox.executeWithOptions(
      { summary: 'destroy the sandbox' },
      [{ sandboxId: placement.sandboxId }],
    );
  } catch {
    // Its worker is gone: remove the container from any worker; that worker's startup sweep removes the folder.
    await sharedOf(input)
      .removeSandboxContainer.executeWithOptions({ summary: 'remove the sandbox container' }, [
        { sandboxId: placement.sandboxId },
      ])
      .catch(() => undefined);
  }
}
