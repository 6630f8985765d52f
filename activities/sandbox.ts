// Sandbox activities: thin adapters from Temporal to the SandboxHost. Host activities run on
// the worker-specific task queue of the worker that holds the container; shared ones run on
// any worker (they only need the shared content store).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DebugInput } from '../src/agent/input.js';
import type { PatchForReport } from '../src/agent/report.js';
import type { RunState } from '../src/agent/runState.js';
import { savedStateQuery } from '../src/temporal/definitions.js';
import type {
  PrepareSandboxRequest,
  PrepareSandboxResult,
  RepositorySnapshot,
  SandboxSettings,
  ToolOutcome,
  ToolRequest,
} from '../src/agent/sandboxProtocol.js';
import { sandboxNeedsPrepare } from '../src/agent/sandboxProtocol.js';
import type { TestSummary } from '../src/agent/testResults.js';
import type { Mutation } from '../src/agent/workspace.js';
import { findSandboxContainer, removeContainer } from '../src/sandbox/container/container.js';
import { DamagedContentError } from '../src/sandbox/store/contentStore.js';
import { computePatch, patchForReport } from '../src/sandbox/workspace/patch.js';
import { environmentFailure, type PreparedEnvironment } from '../src/agent/environment.js';
import { EnvironmentBuildError, type EnvironmentRequest } from '../src/sandbox/environment/imageBuilder.js';
import { EnvironmentConfigError } from '../src/sandbox/environment/planTypes.js';
import {
  RepositoryInputError,
  SandboxNeedsPrepareError,
  type ExecHooks,
  type SandboxHost,
} from '../src/sandbox/sandboxHost.js';
import type { WorkerMetrics } from '../src/temporal/metrics.js';
import type { RunEnds } from '../src/temporal/closedRuns.js';

/**
 * Host work heartbeats once it has gone on for a second, not as it starts: each heartbeat is a
 * write on the server (one per tool call made an iteration about 5 ms slower on this machine,
 * bench/dispatchFloor.ts), and a call that ends sooner needs none (the heartbeat timeout is 20 s).
 */
const firstHeartbeatAfterMs = 1_000;

function execHooks(): ExecHooks {
  const context = Context.current();
  return {
    onProgress: (elapsedMs) => {
      if (elapsedMs >= firstHeartbeatAfterMs) context.heartbeat({ elapsedMs });
    },
    signal: context.cancellationSignal,
  };
}

async function translateFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxNeedsPrepareError) {
      throw ApplicationFailure.nonRetryable(error.message, sandboxNeedsPrepare);
    }
    if (error instanceof EnvironmentBuildError || error instanceof EnvironmentConfigError) {
      throw ApplicationFailure.nonRetryable(error.message, environmentFailure);
    }
    if (error instanceof RepositoryInputError) throw ApplicationFailure.nonRetryable(error.message, 'InvalidInput');
    // A damaged store entry stays damaged: retries would only delay the report that names it.
    if (error instanceof DamagedContentError) throw ApplicationFailure.nonRetryable(error.message, 'DamagedContent');
    throw error;
  }
}

/**
 * Activities that must run on the worker that holds the sandbox; `onToolRun` is told how long each
 * tool took in the host; `runEnds` says whether a run has closed and gives back its queue place.
 */
export function createHostActivities(
  host: SandboxHost,
  onToolRun?: (tool: string, ms: number) => void,
  metrics?: WorkerMetrics,
  runEnds?: RunEnds,
) {
  return {
    async prepareSandbox(request: PrepareSandboxRequest): Promise<PrepareSandboxResult> {
      // Heartbeats while it works: rebuilding a large repository takes longer than the heartbeat timeout.
      const prepared = await translateFailures(() => host.prepare(request, execHooks()));
      // A run terminated while its container was made never destroys it nor leaves the sandbox
      // queue: both go now, as the next sweep would take them back.
      const ended = prepared.containerCreated ? await runEnds?.reason(request.workflowId).catch(() => null) : null;
      if (ended && runEnds) {
        await host.destroy(request.sandboxId);
        await runEnds.releasePlace(request.workflowId).catch(() => undefined);
        throw ApplicationFailure.nonRetryable(
          `the run closed (${ended}) while its sandbox was made: removed it`,
          'RunClosed',
        );
      }
      return prepared;
    },
    /**
     * Builds (or reuses) the image with the repository's dependencies; the only step with network.
     * Heartbeats carry the installer's latest line, so a long install shows progress in the Web UI.
     */
    async prepareEnvironment(request: {
      snapshotId: string;
      choice: EnvironmentRequest['choice'];
      projectVersion?: string;
      repository?: string;
      workflowId: string;
      runId: string;
    }): Promise<PreparedEnvironment | null> {
      const context = Context.current();
      let lastLine = '';
      const ticker = setInterval(() => context.heartbeat({ lastLine }), 5_000);
      try {
        const prepared = await translateFailures(() =>
          host.environments.prepare(
            {
              snapshotId: request.snapshotId,
              choice: request.choice,
              projectVersion: request.projectVersion,
              repository: request.repository,
              owner: {
                workflowId: request.workflowId,
                runId: request.runId,
                host: host.options.hostId,
                scope: host.options.scope,
              },
            },
            {
              onLine: (line) => {
                lastLine = line.slice(0, 300);
                context.heartbeat({ lastLine });
              },
              signal: context.cancellationSignal,
            },
          ),
        );
        metrics?.environment(prepared);
        return prepared;
      } finally {
        clearInterval(ticker);
      }
    },
    async runTool(request: ToolRequest): Promise<ToolOutcome> {
      const started = performance.now();
      const outcome = await translateFailures(() => host.runTool(request, execHooks()));
      onToolRun?.(request.call.name, performance.now() - started);
      metrics?.toolCall(request.call.name, performance.now() - started);
      return outcome;
    },
    async runTestSuite(request: {
      sandboxId: string;
      expectedDigest: string;
      settings: SandboxSettings;
    }): Promise<TestSummary> {
      const started = performance.now();
      const summary = await translateFailures(() =>
        host.runTestSuite(request.sandboxId, request.expectedDigest, request.settings, execHooks()),
      );
      metrics?.testRun(performance.now() - started);
      return summary;
    },
    async destroySandbox(request: { sandboxId: string }): Promise<{ containerRemoved: boolean }> {
      return host.destroy(request.sandboxId);
    },
  };
}

/** Activities any worker can run. */
export function createSharedActivities(host: SandboxHost, hostTaskQueue: string, temporal: Client) {
  return {
    /**
     * The saved state of an earlier run, read through its `savedState` query (it replays if
     * closed), and how long it ran, so that a run resuming it keeps counting its time budget.
     */
    async loadSavedState(request: {
      workflowId: string;
    }): Promise<{ input: DebugInput; state: RunState; elapsedMs: number }> {
      try {
        const handle = temporal.workflow.getHandle(request.workflowId);
        const { input, state } = await handle.query(savedStateQuery);
        if (!state) {
          throw ApplicationFailure.nonRetryable(
            `resumeFrom: "${request.workflowId}" ran ${input.attempts} parallel attempts: resume it with attempts ${input.attempts}, or resume one attempt (${request.workflowId}-attempt-<k>) with attempts 1`,
            'InvalidInput',
          );
        }
        const closedAt = (await handle.describe()).closeTime?.getTime() ?? Date.now();
        return { input, state, elapsedMs: Math.max(0, closedAt - state.startedAt) };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) {
          throw ApplicationFailure.nonRetryable(
            `resumeFrom: no run with workflow id "${request.workflowId}"`,
            'InvalidInput',
          );
        }
        throw error;
      }
    },
    async snapshotRepository(request: { repo: string; testCommand?: string }): Promise<RepositorySnapshot> {
      return translateFailures(() => host.snapshotRepository(request.repo, request.testCommand));
    },
    /** Picks this worker to hold a sandbox (runs recorded before host capacity; newer ones claim on the claim queue). */
    async claimSandboxHost(): Promise<{ taskQueue: string; host: string }> {
      return { taskQueue: hostTaskQueue, host: host.options.hostId };
    },
    /** The run's patch; one too large for the report is kept in the content store (see patchForReport). */
    async computePatch(request: {
      snapshotId: string;
      mutations: Mutation[];
      /** Keep the changes of files the agent never edited too (see computePatch). */
      allChanges?: boolean;
    }): Promise<PatchForReport> {
      const { store } = host.options;
      const options = { allChanges: request.allChanges ?? false };
      return translateFailures(async () =>
        patchForReport(store, await computePatch(store, request.snapshotId, request.mutations, options)),
      );
    },
    /** Removes a sandbox's container from any worker, when its own worker cannot be reached. */
    async removeSandboxContainer(request: { sandboxId: string }): Promise<{ containerRemoved: boolean }> {
      const existing = await findSandboxContainer(host.options.docker, request.sandboxId);
      if (existing) await removeContainer(host.options.docker, existing.Id);
      return { containerRemoved: Boolean(existing) };
    },
  };
}

/**
 * The claim of a sandbox host, on the claim queue: a worker polls it only while it has room
 * (src/worker.ts), and the sandbox counts against this host from here until it is destroyed.
 */
export function createClaimActivities(host: SandboxHost, hostTaskQueue: string) {
  return {
    async claimSandbox(request: {
      sandboxId: string;
      workflowId: string;
    }): Promise<{ taskQueue: string; host: string }> {
      host.capacity.hold(request.sandboxId, request.workflowId);
      return { taskQueue: hostTaskQueue, host: host.options.hostId };
    },
  };
}

export type HostActivities = ReturnType<typeof createHostActivities>;
export type ClaimActivities = ReturnType<typeof createClaimActivities>;
export type SharedActivities = ReturnType<typeof createSharedActivities>;
