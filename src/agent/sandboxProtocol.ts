// What the workflow and the sandbox activities exchange. Requests carry only the workspace
// digest the workflow expects, never the whole mutation log, so history grows linearly.
import type { RepositoryLimits, SandboxLimits } from './input.js';
import type { ObservationLimits } from './observations.js';
import type { TestSummary } from './testResults.js';
import type { Mutation, WorkspaceLog } from './workspace.js';

export interface RepositorySnapshot {
  snapshotId: string;
  repositoryName: string;
  fileCount: number;
  totalBytes: number;
  testCommand: string;
  /** What the environment step will install, read from the manifests ("python · pip install -r requirements.txt"). */
  environment?: string;
  /** Sandbox limits the repository's durable-debugger.json raises (`sandbox`), within repositoryLimitCeilings. */
  sandboxLimits?: RepositoryLimits;
  /** The checkout's version (git describe, PEP 440) for the project's own install; absent when it has none to make. */
  projectVersion?: string;
}

export interface SandboxSettings {
  testCommand: string;
  allowTestEdits: boolean;
  testFileGlobs?: string[];
  limits: SandboxLimits;
  observation: ObservationLimits;
}

export interface PrepareSandboxRequest {
  sandboxId: string;
  workflowId: string;
  runId: string;
  log: WorkspaceLog;
  limits: SandboxLimits;
  /** The environment image (with its variables) the container runs; the base image when absent. */
  environment?: { image: string; containerEnv: string[]; nodeModules?: string[]; writableCopies?: string[] };
  /**
   * Made again even if the current workspace and container match the log: a new folder from the
   * snapshot and the log, a new container from the image. Nothing the model's commands left outside
   * the log (ignored files: bytecode, build output, links) is in it. What the workflow's own test runs
   * after the model's work run in.
   */
  fresh?: boolean;
  /**
   * With `fresh`: the changes the patch leaves out (what only test runs changed, binary files a
   * command left) are undone in it, so that the suite runs on what the patch holds. The result
   * says what was undone, for the workflow's log.
   */
  undoByProducts?: boolean;
}

export interface PrepareSandboxResult {
  /** Why the workspace had to be rebuilt from the snapshot and the log, if it was. */
  rebuiltBecause?: string;
  containerCreated: boolean;
  host: string;
  /** The mutations that undid what the patch leaves out (undoByProducts), and the workspace's digest after them. */
  undone?: { mutations: Mutation[]; digest: string };
}

export interface ToolRequest {
  sandboxId: string;
  iteration: number;
  call: { id: string; name: string; input: Record<string, unknown> };
  expectedDigest: string;
  settings: SandboxSettings;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Changes to the workspace, in order; empty for reads. */
  mutations: Mutation[];
  /** The workspace digest after the call. */
  digest: string;
  testSummary?: TestSummary;
  /** Set when the call was refused by a guardrail (e.g. an edit of a test file). */
  refusedBy?: 'test-file-guardrail';
}

/** The failure type a sandbox activity raises when its workspace or container must be prepared again. */
export const sandboxNeedsPrepare = 'SandboxNeedsPrepare';
