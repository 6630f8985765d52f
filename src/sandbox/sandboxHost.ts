// The sandboxes of one worker host: their containers and workspace folders. Activities call
// this; it knows nothing of Temporal.
import { lstat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import picomatch from 'picomatch';
import type Docker from 'dockerode';
import type {
  PrepareSandboxRequest,
  PrepareSandboxResult,
  RepositorySnapshot,
  SandboxSettings,
  ToolOutcome,
  ToolRequest,
} from '../agent/sandboxProtocol.js';
import type { RepositoryLimits } from '../agent/input.js';
import { summarizeTestOutput, type TestSummary } from '../agent/testResults.js';
import {
  createSandboxContainer,
  findSandboxContainer,
  labels,
  listProjectContainers,
  removeContainer,
  type SandboxUser,
} from './container/container.js';
import { EnvironmentBuilder } from './environment/imageBuilder.js';
import { ImagePolicy } from './environment/imagePolicy.js';
import { readManifests } from './environment/manifests.js';
import { parseRepositoryConfig, planEnvironment, withBuildSteps } from './environment/plan.js';
import {
  EnvironmentBuildError,
  EnvironmentConfigError,
  repositoryConfigFile,
  type EnvironmentPlan,
} from './environment/planTypes.js';
import { defaultHostCapacity, HostCapacity, type HostCapacityLimits } from './container/hostCapacity.js';
import { execInSandbox, type ExecResult } from './container/exec.js';
import { withinDeadline } from './container/dockerDeadline.js';
import { heapExhausted, readMemoryCounters } from './container/memoryCounters.js';
import { prepareNodeModulesMounts, writableCopyMounts } from './container/nodeModulesMounts.js';
import { removeFolder } from './workspace/ownerAccess.js';
import { undoOfByProducts } from './workspace/patch.js';
import { stopSandboxUserProcesses } from './container/quiesce.js';
import type { ContentStore } from './store/contentStore.js';
import { confineToRepoRoots, RepoOutsideRootsError } from './workspace/repoRoots.js';
import { describeProjectVersion } from './workspace/projectVersion.js';
import { detectTestCommand } from './testCommand.js';
import { runTestsGivingOneMoreTry } from './runnerGaveUp.js';
import {
  FileTooLargeError,
  gitListedFiles,
  readRegularFile,
  readTree,
  TreeTooLargeError,
  walk,
  type Tree,
} from './workspace/tree.js';
import { executeTool } from './toolExecutors.js';
import { WorkspaceFolder } from './workspace/workspaceFolder.js';

/** Raised when the container or the workspace is not what the workflow expects. */
export class SandboxNeedsPrepareError extends Error {}

/** Raised for a repository that cannot be debugged as given (the message names the field). */
export class RepositoryInputError extends Error {}

export { defaultTestFileGlobs } from './toolExecutors.js';

export const snapshotLimits = { maxFiles: 20_000, maxTotalBytes: 200 * 1024 * 1024 };

interface JournalEntry {
  digestAfter: string;
  outcome: ToolOutcome;
}

export interface SandboxHostOptions {
  docker: Docker;
  store: ContentStore;
  /** Where this host keeps its workspace folders. */
  workspaceRoot: string;
  /** Names this host in container labels and in its task queue. */
  hostId: string;
  image: string;
  /** Names the Temporal server and namespace, so the reaper only removes what belongs to it. */
  scope: string;
  /** Where environment builds keep their inputs (default: beside the workspace root). */
  environmentRoot?: string;
  /** Where the environment toolchains are kept (default: ~/.cache/durable-debugger/toolchain). */
  toolchainDir?: string;
  /** Folders that repositories must lie under (DURABLE_DEBUGGER_REPO_ROOTS); absent: any folder. */
  repoRoots?: readonly string[] | null;
  /** Images repository files may build on beyond ours (DURABLE_DEBUGGER_ALLOWED_IMAGES). */
  allowedImages?: readonly string[];
  /** Whether a repository's `setup` commands get the registries' credentials (DURABLE_DEBUGGER_SETUP_CREDENTIALS). */
  setupCredentials?: boolean;
  /** Sandboxes and environment builds held at once (default: from the machine's cores and memory). */
  capacity?: HostCapacityLimits;
}

export class SandboxHost {
  readonly user: SandboxUser;
  private readonly folders = new Map<string, WorkspaceFolder>();
  /** Results of mutating calls already applied, so that a retried activity is a no-op. */
  private readonly journals = new Map<string, Map<string, JournalEntry>>();
  /**
   * The work under way in each sandbox (a preparation, a tool call, a test run; settled, never
   * rejected): the next waits for it. One at a time, so that no command runs in the container while
   * the host touches the folder (quiesce.ts), and no tool call stops another's command.
   */
  private readonly sandboxWork = new Map<string, Promise<void>>();
  /** Each container's OOM-kill count when last looked at, to tell which command ran out of memory. */
  private readonly oomKillsSeen = new Map<string, number>();

  readonly environments: EnvironmentBuilder;
  readonly capacity: HostCapacity;

  constructor(readonly options: SandboxHostOptions) {
    const uid = process.getuid?.() ?? 1000;
    this.user = uid === 0 ? { uid: 1000, gid: 1000 } : { uid, gid: process.getgid?.() ?? uid };
    this.capacity = new HostCapacity(options.capacity ?? defaultHostCapacity());
    this.environments = new EnvironmentBuilder({
      buildSlot: (signal) => this.capacity.environmentBuildSlot(signal),
      docker: options.docker,
      store: options.store,
      baseImage: options.image,
      home: options.environmentRoot ?? join(dirname(resolve(options.workspaceRoot)), 'environment-builds'),
      toolchainDir: options.toolchainDir,
      imagePolicy: new ImagePolicy(options.image, options.allowedImages ?? []),
      setupCredentials: options.setupCredentials ?? false,
    });
  }

  /** Reads a repository into the content store. */
  async snapshotRepository(repo: string, testCommand: string | undefined): Promise<RepositorySnapshot> {
    // Never resolved against this worker's folder (the run's input is checked too; this is the last word).
    if (!isAbsolute(repo)) throw new RepositoryInputError(`repo: "${repo}" is a relative path: give its absolute path`);
    const root = await confineToRepoRoots(repo, this.options.repoRoots ?? null).catch((error: unknown) => {
      throw error instanceof RepoOutsideRootsError ? new RepositoryInputError(error.message) : error;
    });
    const stats = await lstat(root).catch((error: NodeJS.ErrnoException) => error);
    if (stats instanceof Error) {
      if (stats.code === 'ENOENT') throw new RepositoryInputError(`repo: "${repo}" does not exist`);
      throw new RepositoryInputError(`repo: "${repo}" cannot be read (${stats.code})`);
    }
    if (!stats.isDirectory()) throw new RepositoryInputError(`repo: "${repo}" is a file, not a folder`);
    let tree: Tree;
    try {
      const paths = await withoutHiddenFiles(root, (await gitListedFiles(root)) ?? (await walk(root)));
      tree = await readTree(root, {
        limits: snapshotLimits,
        paths,
        onFile: (blob, content) => this.options.store.putBlob(blob, content),
      });
    } catch (error) {
      if (error instanceof TreeTooLargeError)
        throw new RepositoryInputError(`repo: "${repo}" is too large: ${error.message}`);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM')
        throw new RepositoryInputError(`repo: "${repo}" cannot be read (${code})`);
      throw error;
    }
    await this.options.store.putTree(tree);
    const files = tree.entries.map((entry) => entry.path);
    // From the snapshot, never the folder: a manifest that links out of the repository is not read.
    const { plan: environment, sandboxLimits, manifests } = await this.environmentPlanOf(tree);
    const packageJson = manifests['package.json'] ?? null;
    // The repository's own choice (durable-debugger.json), then its environment's (npm test), then detection.
    // Whatever runs the tests, the build they load runs first (durable-debugger.json `build: []` turns it off).
    const detected = testCommand ?? environment?.testCommand ?? detectTestCommand(files, packageJson);
    const command = detected && withBuildSteps(environment?.build ?? [], detected);
    if (!command) {
      throw new RepositoryInputError(
        `testCommand: no test command could be detected in "${repo}" (looked for pytest, package.json, node test files, go.mod, Cargo.toml); pass testCommand`,
      );
    }
    const totalBytes = tree.entries.reduce((sum, entry) => sum + (entry.kind === 'file' ? entry.size : 0), 0);
    return {
      snapshotId: tree.digest,
      repositoryName: basename(resolve(repo)),
      fileCount: files.length,
      totalBytes,
      testCommand: command,
      ...(environment ? { environment: environment.description } : {}),
      ...(sandboxLimits ? { sandboxLimits } : {}),
      // Read here, where .git is: the environment build and the sandbox get the files without it.
      ...(environment?.projectInstall ? { projectVersion: await describeProjectVersion(root) } : {}),
    };
  }

  private async environmentPlanOf(
    tree: Tree,
  ): Promise<{ plan: EnvironmentPlan | null; sandboxLimits?: RepositoryLimits; manifests: Record<string, string> }> {
    const files = tree.entries.map((entry) => entry.path);
    try {
      const manifests = await readManifests(this.options.store, tree.entries);
      const { sandbox } = parseRepositoryConfig(manifests[repositoryConfigFile]);
      return { plan: plannedOrDeferred(() => planEnvironment(files, manifests)), sandboxLimits: sandbox, manifests };
    } catch (error) {
      if (error instanceof EnvironmentConfigError) throw new RepositoryInputError(`repo: ${error.message}`);
      throw error;
    }
  }

  private folder(sandboxId: string): WorkspaceFolder {
    let folder = this.folders.get(sandboxId);
    if (!folder) {
      folder = new WorkspaceFolder(
        join(this.options.workspaceRoot, sandboxId, 'workspace'),
        this.options.store,
        this.user,
      );
      this.folders.set(sandboxId, folder);
    }
    return folder;
  }

  private journal(sandboxId: string): Map<string, JournalEntry> {
    let journal = this.journals.get(sandboxId);
    if (!journal) this.journals.set(sandboxId, (journal = new Map()));
    return journal;
  }

  /**
   * Makes sure the workspace matches the log and a container runs on it; rebuilds what is
   * missing. Reports progress while it works (a large repository takes tens of seconds), and
   * runs one at a time per sandbox: a retried attempt that starts while an earlier one still
   * runs waits for it, then finds the work done, instead of rebuilding the same folder with it.
   */
  async prepare(request: PrepareSandboxRequest, hooks: ExecHooks = {}): Promise<PrepareSandboxResult> {
    const step = progressReporter(hooks);
    return this.oneAtATime(request.sandboxId, step, () => this.prepareNow(request, step));
  }

  /** Runs `work` after the sandbox's earlier work has settled, reporting progress while it waits. */
  private async oneAtATime<T>(sandboxId: string, step: () => void, work: () => Promise<T>): Promise<T> {
    const previous = this.sandboxWork.get(sandboxId);
    const waited = previous ? whileWaiting(previous, step) : Promise.resolve();
    const current = waited.then(work);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.sandboxWork.set(sandboxId, settled);
    try {
      return await current;
    } finally {
      if (this.sandboxWork.get(sandboxId) === settled) this.sandboxWork.delete(sandboxId);
    }
  }

  private async prepareNow(request: PrepareSandboxRequest, onEntry: () => void): Promise<PrepareSandboxResult> {
    const folder = this.folder(request.sandboxId);
    onEntry();
    const { docker } = this.options;
    // Nothing of the sandbox may run while its folder is read or rebuilt (quiesce.ts): a running
    // container of this host is made quiet, any other (stopped, paused, another host's) removed.
    const existing = await findSandboxContainer(docker, request.sandboxId);
    const running =
      existing?.State === 'running' &&
      existing.Labels[labels.host] === this.options.hostId &&
      (await stopSandboxUserProcesses(docker.getContainer(existing.Id), this.user).then(
        () => true,
        () => false,
      ));
    if (existing && !running) await removeContainer(docker, existing.Id);
    // A fresh sandbox does not read the old folder: it is made again whatever that holds.
    const current = request.fresh ? null : await folder.readIfPresent(onEntry);
    let rebuiltBecause: string | undefined;
    let undone: PrepareSandboxResult['undone'];
    const rebuild = !current || current.digest !== request.log.digest;
    if (rebuild) {
      rebuiltBecause = rebuildReason(request, current !== null);
      // A rebuilt folder is a new directory, which a running container would not see; and its
      // processes must be gone before the old folder is removed.
      if (existing && running) await removeContainer(docker, existing.Id);
      const rebuilt = await folder.rebuild(request.log.snapshotId, request.log.mutations, onEntry);
      if (rebuilt.digest !== request.log.digest) {
        throw new Error(
          `Replaying the mutation log gave workspace ${rebuilt.digest.slice(0, 12)}, expected ${request.log.digest.slice(0, 12)}`,
        );
      }
      this.journal(request.sandboxId).clear();
      // The log's digest is that of the log alone: with changes undone, the workflow takes the new one.
      const undo =
        request.fresh && request.undoByProducts ? await undoOfByProducts(this.options.store, request.log) : [];
      if (undo.length > 0) undone = { mutations: undo, digest: (await folder.applyAll(undo, onEntry)).digest };
    }
    const usable = running && !rebuild;
    if (!usable) {
      await createSandboxContainer(docker, {
        sandboxId: request.sandboxId,
        image: request.environment?.image ?? this.options.image,
        env: request.environment?.containerEnv,
        imageCopies: [
          ...(await prepareNodeModulesMounts(folder.path, request.environment?.nodeModules)),
          ...writableCopyMounts(request.environment?.writableCopies),
        ],
        workspaceDir: folder.path,
        limits: request.limits,
        labels: {
          workflowId: request.workflowId,
          runId: request.runId,
          host: this.options.hostId,
          scope: this.options.scope,
        },
      });
      await writeFile(
        join(this.options.workspaceRoot, request.sandboxId, 'owner.json'),
        JSON.stringify({ workflowId: request.workflowId, scope: this.options.scope }),
      );
    }
    return { rebuiltBecause, containerCreated: !usable, host: this.options.hostId, ...(undone ? { undone } : {}) };
  }

  private async runningContainer(sandboxId: string): Promise<Docker.Container> {
    const info = await findSandboxContainer(this.options.docker, sandboxId);
    if (!info || info.State !== 'running' || info.Labels[labels.host] !== this.options.hostId) {
      throw new SandboxNeedsPrepareError(`the sandbox container is ${info ? info.State : 'gone'}`);
    }
    return this.options.docker.getContainer(info.Id);
  }

  /**
   * The running container, with no process of the sandbox user left in it (quiesce.ts): only then
   * may the host touch its workspace folder. A process that cannot be stopped is the sandbox's end.
   */
  private async quietContainer(sandboxId: string): Promise<Docker.Container> {
    const container = await this.runningContainer(sandboxId);
    await this.stopLeftovers(container);
    return container;
  }

  private async stopLeftovers(container: Docker.Container): Promise<void> {
    try {
      await stopSandboxUserProcesses(container, this.user);
    } catch (error) {
      if (await hasStopped(container)) throw new SandboxNeedsPrepareError('the sandbox container stopped');
      throw new SandboxNeedsPrepareError((error as Error).message);
    }
  }

  /**
   * Runs one tool call. The workspace must be at the digest the workflow expects; a call that
   * was already applied (a retried activity) returns its recorded outcome instead of running twice.
   */
  async runTool(request: ToolRequest, hooks: ExecHooks = {}): Promise<ToolOutcome> {
    const step = progressReporter(hooks);
    return this.oneAtATime(request.sandboxId, step, () => {
      step();
      return this.runToolNow(request, hooks);
    });
  }

  private async runToolNow(request: ToolRequest, hooks: ExecHooks): Promise<ToolOutcome> {
    const container = await this.quietContainer(request.sandboxId);
    const folder = this.folder(request.sandboxId);
    const before = await folder.readIfPresent();
    if (!before) throw new SandboxNeedsPrepareError('the workspace folder is missing');
    const journal = this.journal(request.sandboxId);
    if (before.digest !== request.expectedDigest) {
      const done = journal.get(request.call.id);
      if (done && done.digestAfter === before.digest) return done.outcome;
      throw new SandboxNeedsPrepareError('the workspace differs from the run’s mutation log');
    }
    const outcome = await executeTool(request.call, {
      callId: request.call.id,
      folder,
      before,
      settings: request.settings,
      exec: (command, settings) => this.exec(container, command, settings, hooks),
    });
    if (outcome.mutations.length > 0) {
      journal.set(request.call.id, { digestAfter: outcome.digest, outcome });
      if (journal.size > 100) journal.delete(journal.keys().next().value as string);
    }
    return outcome;
  }

  /** Runs the test command for the workflow itself (baseline and verification). */
  async runTestSuite(
    sandboxId: string,
    expectedDigest: string,
    settings: SandboxSettings,
    hooks: ExecHooks = {},
  ): Promise<TestSummary> {
    const step = progressReporter(hooks);
    return this.oneAtATime(sandboxId, step, () => {
      step();
      return this.runTestSuiteNow(sandboxId, expectedDigest, settings, hooks);
    });
  }

  private async runTestSuiteNow(
    sandboxId: string,
    expectedDigest: string,
    settings: SandboxSettings,
    hooks: ExecHooks,
  ): Promise<TestSummary> {
    const container = await this.quietContainer(sandboxId);
    const folder = this.folder(sandboxId);
    const before = await folder.readIfPresent();
    if (!before) throw new SandboxNeedsPrepareError('the workspace folder is missing');
    if (before.digest !== expectedDigest)
      throw new SandboxNeedsPrepareError('the workspace differs from the run’s mutation log');
    const result = await runTestsGivingOneMoreTry(() => this.exec(container, settings.testCommand, settings, hooks));
    // The workflow's own test runs must leave the workspace as it was.
    const { mutations } = await folder.capture(before, 'verification');
    if (mutations.length > 0)
      await folder.restore(
        before,
        mutations.map((m) => m.path),
      );
    return summarizeTestOutput(result.output, result.exitCode, result.timedOut, result.outOfMemory);
  }

  /**
   * Runs a command; when it returns, nothing it started (even what escaped its wrapper) runs any
   * more. Searches too: grep is the environment image's, which the repository's build may have replaced.
   */
  private async exec(
    container: Docker.Container,
    command: string,
    settings: SandboxSettings,
    hooks: ExecHooks,
  ): Promise<ExecResult> {
    const result = await this.execCommand(container, command, settings, hooks);
    await this.stopLeftovers(container);
    return result;
  }

  private async execCommand(
    container: Docker.Container,
    command: string,
    settings: SandboxSettings,
    hooks: ExecHooks,
  ): Promise<ExecResult> {
    let result: ExecResult;
    try {
      result = await execInSandbox(container, command, {
        timeoutMs: settings.limits.commandTimeoutSeconds * 1000,
        maxOutputBytes: settings.limits.maxOutputBytes,
        user: this.user,
        onProgress: hooks.onProgress,
        signal: hooks.signal,
      });
    } catch (error) {
      if (await hasStopped(container))
        throw new SandboxNeedsPrepareError('the sandbox container stopped while the command ran');
      throw error;
    }
    // A container killed from outside ends the command too, with an exit code that is not the
    // command's: the command must run again in a prepared sandbox, not be reported. The engine
    // records the container's end a moment after the exec's, so a killed-looking end waits for it.
    const killedLooking = result.exitCode === null || result.exitCode === 137;
    if (await hasStopped(container, killedLooking ? containerStopSettleMs : 0)) {
      throw new SandboxNeedsPrepareError('the sandbox container stopped while the command ran');
    }
    if (result.exitCode === 0 || result.timedOut) return result;
    const how = await this.outOfMemory(container, result);
    return how ? { ...result, outOfMemory: { how, limitMb: settings.limits.memoryMb } } : result;
  }

  /**
   * Whether a failed command ran out of memory: the container's OOM-kill count went up while it ran
   * (a test runner whose worker was killed exits 1, not 137), or V8 said its heap was full.
   * A container this worker did not create counts from 0: after a worker restart, an earlier kill may be named once.
   */
  private async outOfMemory(container: Docker.Container, result: ExecResult): Promise<'killed' | 'heap' | null> {
    const counters = await readMemoryCounters(container, this.user).catch(() => null);
    const seen = this.oomKillsSeen.get(container.id) ?? 0;
    if (counters && counters.oomKills > seen) {
      this.oomKillsSeen.set(container.id, counters.oomKills);
      return 'killed';
    }
    return heapExhausted(result.output, result.exitCode) ? 'heap' : null;
  }

  async destroy(sandboxId: string): Promise<{ containerRemoved: boolean }> {
    const existing = await findSandboxContainer(this.options.docker, sandboxId);
    if (existing) await removeContainer(this.options.docker, existing.Id);
    await removeFolder(join(this.options.workspaceRoot, sandboxId));
    this.folders.delete(sandboxId);
    this.journals.delete(sandboxId);
    this.capacity.release(sandboxId);
    return { containerRemoved: Boolean(existing) };
  }

  /** A restarted worker counts the sandboxes its containers still hold for their runs (the reaper frees closed runs'). */
  async countHeldSandboxes(): Promise<void> {
    for (const container of await listProjectContainers(this.options.docker)) {
      const sandboxId = container.Labels[labels.sandboxId];
      const workflowId = container.Labels[labels.workflowId];
      if (
        container.Labels[labels.host] !== this.options.hostId ||
        container.Labels[labels.scope] !== this.options.scope
      )
        continue;
      if (sandboxId && workflowId) this.capacity.hold(sandboxId, workflowId);
    }
  }
}

/** Why the workspace was rebuilt, when that is news: never for a fresh sandbox (asked for) or a first preparation. */
function rebuildReason(request: PrepareSandboxRequest, hadFolder: boolean): string | undefined {
  if (request.fresh) return undefined;
  if (hadFolder) return 'the workspace differed from the run’s mutation log';
  return request.log.mutations.length === 0 ? undefined : 'the workspace was not on this worker';
}

/** Name of a file of globs (one per line) that the agent must not see, such as fixture answers or secrets. */
export const hiddenFilesList = '.durable-debugger-ignore';

async function withoutHiddenFiles(root: string, paths: string[]): Promise<string[]> {
  // Not followed if it is a link, not read if it is a device or FIFO, and refused beyond 1 MB.
  const content = await readRegularFile(join(root, hiddenFilesList), 1024 * 1024).catch((error: unknown) => {
    if (error instanceof FileTooLargeError)
      throw new RepositoryInputError(`repo: ${hiddenFilesList} is too large (${error.message})`);
    return null;
  });
  if (content === null) return paths;
  const list = content.toString('utf8');
  const globs = list
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const hidden = picomatch([hiddenFilesList, ...globs], { dot: true, basename: true });
  return paths.filter((path) => !hidden(path));
}

export interface ExecHooks {
  onProgress?: (elapsedMs: number) => void;
  signal?: AbortSignal;
}

/** Calls `step` every interval until `earlier` settles (a cancellation is noticed when the work starts). */
async function whileWaiting(earlier: Promise<void>, step: () => void): Promise<void> {
  const timer = setInterval(() => {
    try {
      step();
    } catch {
      // cancelled: the work's own first step throws
    }
  }, progressEveryMs);
  try {
    await earlier;
  } finally {
    clearInterval(timer);
  }
}

/** How often long host work (a rebuild) reports progress. */
const progressEveryMs = 1000;

/**
 * A callback for every step of long host work: reports progress at most once per interval,
 * and stops the work (throws) once it is cancelled.
 */
function progressReporter(hooks: ExecHooks): () => void {
  const started = Date.now();
  let reportedAt = 0;
  return () => {
    hooks.signal?.throwIfAborted();
    const now = Date.now();
    if (now - reportedAt < progressEveryMs) return;
    reportedAt = now;
    hooks.onProgress?.(now - started);
  };
}

/** How long a command that ended as if killed waits to see whether its container stopped. */
const containerStopSettleMs = 1000;

/** Whether the container is not running, looking again for up to `settleMs` while it still is. */
async function hasStopped(container: Docker.Container, settleMs = 0): Promise<boolean> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const stopped = await withinDeadline('inspecting the sandbox container', (abortSignal) =>
      container.inspect({ abortSignal }),
    ).then(
      (info) => !info.State.Running,
      () => true,
    );
    if (stopped || Date.now() >= deadline) return stopped;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The plan, or null when it names a toolchain no build can have (a Rust the host and Debian lack):
 * the environment step plans again and ends the run with environment_error, saying so, before any
 * model call; the snapshot is no place to end a run.
 */
function plannedOrDeferred(plan: () => EnvironmentPlan | null): EnvironmentPlan | null {
  try {
    return plan();
  } catch (error) {
    if (error instanceof EnvironmentBuildError) return null;
    throw error;
  }
}
