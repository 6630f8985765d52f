// The sandboxes of one worker host: their containers and workspace folders. Activities call
// this; it knows nothing of Temporal.
import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
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
import { truncateObservation } from '../agent/observations.js';
import { formatTestSummary, summarizeTestOutput, type TestSummary } from '../agent/testResults.js';
import type { ToolInput } from '../agent/tools.js';
import {
  createSandboxContainer,
  findSandboxContainer,
  labels,
  removeContainer,
  type SandboxUser,
} from './container.js';
import { EnvironmentBuilder } from './environmentImage.js';
import { manifestCandidates, planEnvironment, withBuildSteps } from './environmentPlan.js';
import { EnvironmentConfigError, type EnvironmentPlan } from './environmentPlanTypes.js';
import { execInSandbox, type ExecResult } from './exec.js';
import { editFileForTool, listFiles, readTextForTool, ToolInputError, writeFileForTool } from './fileTools.js';
import { removeFolder } from './ownerAccess.js';
import { normalizeRelativePath, PathRefusedError, resolveInsideWorkspace } from './paths.js';
import { formatSearchResults, maxSearchLinesRead } from './searchResults.js';
import type { ContentStore } from './store.js';
import { confineToRepoRoots, RepoOutsideRootsError } from './repoRoots.js';
import { detectTestCommand, testCommandFor } from './testCommand.js';
import { gitListedFiles, ignoredFolders, readTree, TreeTooLargeError, walk, type Tree } from './tree.js';
import { WorkspaceFolder } from './workspaceFolder.js';

/** Raised when the container or the workspace is not what the workflow expects. */
export class SandboxNeedsPrepareError extends Error {}

/** Raised for a repository that cannot be debugged as given (the message names the field). */
export class RepositoryInputError extends Error {}

export const defaultTestFileGlobs = [
  '**/test_*.py',
  '**/*_test.py',
  '**/conftest.py',
  '**/tests/**',
  '**/test/**',
  '**/__tests__/**',
  '**/*.test.*',
  '**/*.spec.*',
  '**/*_test.go',
];

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
}

export class SandboxHost {
  readonly user: SandboxUser;
  private readonly folders = new Map<string, WorkspaceFolder>();
  /** Results of mutating calls already applied, so that a retried activity is a no-op. */
  private readonly journals = new Map<string, Map<string, JournalEntry>>();
  /** The preparation under way for each sandbox (settled, never rejected): the next one waits for it. */
  private readonly preparations = new Map<string, Promise<void>>();

  readonly environments: EnvironmentBuilder;

  constructor(readonly options: SandboxHostOptions) {
    const uid = process.getuid?.() ?? 1000;
    this.user = uid === 0 ? { uid: 1000, gid: 1000 } : { uid, gid: process.getgid?.() ?? uid };
    this.environments = new EnvironmentBuilder({
      docker: options.docker,
      store: options.store,
      baseImage: options.image,
      home: options.environmentRoot ?? join(dirname(resolve(options.workspaceRoot)), 'environment-builds'),
      toolchainDir: options.toolchainDir,
    });
  }

  /** Reads a repository into the content store. */
  async snapshotRepository(repo: string, testCommand: string | undefined): Promise<RepositorySnapshot> {
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
      if (error instanceof TreeTooLargeError) throw new RepositoryInputError(`repo: "${repo}" is too large: ${error.message}`);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') throw new RepositoryInputError(`repo: "${repo}" cannot be read (${code})`);
      throw error;
    }
    await this.options.store.putTree(tree);
    const files = tree.entries.map((entry) => entry.path);
    const packageJson = files.includes('package.json') ? await readFile(join(root, 'package.json'), 'utf8') : null;
    // The repository's own choice (durable-debugger.json), then its environment's (npm test), then detection.
    const environment = await this.environmentPlanOf(root, files);
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
    };
  }

  private async environmentPlanOf(root: string, files: string[]): Promise<EnvironmentPlan | null> {
    const manifests: Record<string, string> = {};
    for (const path of manifestCandidates(files)) manifests[path] = await readFile(join(root, path), 'utf8');
    try {
      return planEnvironment(files, manifests);
    } catch (error) {
      if (error instanceof EnvironmentConfigError) throw new RepositoryInputError(`repo: ${error.message}`);
      throw error;
    }
  }

  private folder(sandboxId: string): WorkspaceFolder {
    let folder = this.folders.get(sandboxId);
    if (!folder) {
      folder = new WorkspaceFolder(join(this.options.workspaceRoot, sandboxId, 'workspace'), this.options.store, this.user);
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

  /** Runs `work` after the sandbox's earlier preparation has settled, reporting progress while it waits. */
  private async oneAtATime<T>(sandboxId: string, step: () => void, work: () => Promise<T>): Promise<T> {
    const previous = this.preparations.get(sandboxId);
    const waited = previous ? whileWaiting(previous, step) : Promise.resolve();
    const current = waited.then(work);
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.preparations.set(sandboxId, settled);
    try {
      return await current;
    } finally {
      if (this.preparations.get(sandboxId) === settled) this.preparations.delete(sandboxId);
    }
  }

  private async prepareNow(request: PrepareSandboxRequest, onEntry: () => void): Promise<PrepareSandboxResult> {
    const folder = this.folder(request.sandboxId);
    onEntry();
    const current = await folder.readIfPresent(onEntry);
    let rebuiltBecause: string | undefined;
    const rebuild = !current || current.digest !== request.log.digest;
    if (rebuild) {
      rebuiltBecause = !current
        ? request.log.mutations.length === 0
          ? undefined
          : 'the workspace was not on this worker'
        : 'the workspace differed from the run’s mutation log';
      const rebuilt = await folder.rebuild(request.log.snapshotId, request.log.mutations, onEntry);
      if (rebuilt.digest !== request.log.digest) {
        throw new Error(
          `Replaying the mutation log gave workspace ${rebuilt.digest.slice(0, 12)}, expected ${request.log.digest.slice(0, 12)}`,
        );
      }
      this.journal(request.sandboxId).clear();
    }
    const { docker } = this.options;
    const existing = await findSandboxContainer(docker, request.sandboxId);
    // A rebuilt folder is a new directory: a running container still has the old one mounted.
    const usable = !rebuild && existing && existing.State === 'running' && existing.Labels[labels.host] === this.options.hostId;
    if (existing && !usable) await removeContainer(docker, existing.Id);
    if (!usable) {
      await createSandboxContainer(docker, {
        sandboxId: request.sandboxId,
        image: request.environment?.image ?? this.options.image,
        env: request.environment?.containerEnv,
        workspaceDir: folder.path,
        limits: request.limits,
        labels: { workflowId: request.workflowId, runId: request.runId, host: this.options.hostId, scope: this.options.scope },
      });
      await writeFile(join(this.options.workspaceRoot, request.sandboxId, 'owner.json'), JSON.stringify({ workflowId: request.workflowId, scope: this.options.scope }));
    }
    return { rebuiltBecause, containerCreated: !usable, host: this.options.hostId };
  }

  private async runningContainer(sandboxId: string): Promise<Docker.Container> {
    const info = await findSandboxContainer(this.options.docker, sandboxId);
    if (!info || info.State !== 'running' || info.Labels[labels.host] !== this.options.hostId) {
      throw new SandboxNeedsPrepareError(`the sandbox container is ${info ? info.State : 'gone'}`);
    }
    return this.options.docker.getContainer(info.Id);
  }

  /**
   * Runs one tool call. The workspace must be at the digest the workflow expects; a call that
   * was already applied (a retried activity) returns its recorded outcome instead of running twice.
   */
  async runTool(request: ToolRequest, hooks: ExecHooks = {}): Promise<ToolOutcome> {
    const container = await this.runningContainer(request.sandboxId);
    const folder = this.folder(request.sandboxId);
    const before = await folder.readIfPresent();
    if (!before) throw new SandboxNeedsPrepareError('the workspace folder is missing');
    const journal = this.journal(request.sandboxId);
    if (before.digest !== request.expectedDigest) {
      const done = journal.get(request.call.id);
      if (done && done.digestAfter === before.digest) return done.outcome;
      throw new SandboxNeedsPrepareError('the workspace differs from the run’s mutation log');
    }
    const outcome = await this.execute(container, folder, before, request, hooks);
    if (outcome.mutations.length > 0) {
      journal.set(request.call.id, { digestAfter: outcome.digest, outcome });
      if (journal.size > 100) journal.delete(journal.keys().next().value as string);
    }
    return outcome;
  }

  private async execute(
    container: Docker.Container,
    folder: WorkspaceFolder,
    before: Tree,
    request: ToolRequest,
    hooks: ExecHooks,
  ): Promise<ToolOutcome> {
    const { call, settings } = request;
    const workspace = folder.path;
    const reply = (content: string, isError = false) => ({
      content: truncateObservation(content, settings.observation),
      isError,
      mutations: [],
      digest: before.digest,
    });
    try {
      switch (call.name) {
        case 'list_files':
          return reply(await listFiles(workspace, (call.input as ToolInput<'list_files'>).path, await folder.ignoredCheck()));
        case 'read_file':
          return reply(await readTextForTool(workspace, call.input as ToolInput<'read_file'>));
        case 'search_code':
          return reply(await this.searchCode(container, workspace, before, call.input as ToolInput<'search_code'>, settings, hooks));
        case 'edit_file':
        case 'write_file': {
          const input = call.input as ToolInput<'edit_file'> | ToolInput<'write_file'>;
          const relative = normalizeRelativePath(input.path);
          if (!settings.allowTestEdits && isTestFile(relative, settings)) {
            return {
              ...reply(
                `Refused: "${relative}" is a test file, and this run does not allow changing tests (allowTestEdits is off). The tests describe the intended behaviour; fix the code under test instead.`,
                true,
              ),
              refusedBy: 'test-file-guardrail',
            };
          }
          const message =
            call.name === 'edit_file'
              ? await editFileForTool(workspace, input as ToolInput<'edit_file'>)
              : await writeFileForTool(workspace, input as ToolInput<'write_file'>);
          await folder.giveToSandboxUser(relative);
          const { tree, mutations } = await folder.capture(before, call.id);
          return { content: message, isError: false, mutations, digest: tree.digest };
        }
        case 'run_tests':
        case 'run_command': {
          const command =
            call.name === 'run_tests'
              ? testCommandFor(settings.testCommand, checkedTestTarget((call.input as ToolInput<'run_tests'>).path))
              : (call.input as ToolInput<'run_command'>).command;
          const result = await this.exec(container, command, settings, hooks);
          const testSummary =
            call.name === 'run_tests' ? summarizeTestOutput(result.output, result.exitCode, result.timedOut) : undefined;
          let { tree, mutations } = await folder.capture(before, call.id);
          let note = '';
          const forbidden = settings.allowTestEdits ? [] : mutations.filter((m) => isTestFile(m.path, settings));
          if (forbidden.length > 0) {
            await folder.restore(before, forbidden.map((m) => m.path));
            ({ tree, mutations } = await folder.capture(before, call.id));
            note = `\n\nNote: the command changed test files, which this run does not allow; they were restored: ${forbidden.map((m) => m.path).join(', ')}.`;
          }
          const body = describeExec(result, settings);
          const content = testSummary ? `${formatTestSummary(testSummary)}\n\n${body}` : body;
          return {
            content: truncateObservation(content, settings.observation) + note,
            isError: false,
            mutations,
            digest: tree.digest,
            testSummary,
          };
        }
        default:
          return reply(`The tool "${call.name}" does not run in the sandbox.`, true);
      }
    } catch (error) {
      if (error instanceof PathRefusedError || error instanceof ToolInputError) return reply(error.message, true);
      throw error;
    }
  }

  /** Runs the test command for the workflow itself (baseline and verification). */
  async runTestSuite(
    sandboxId: string,
    expectedDigest: string,
    settings: SandboxSettings,
    hooks: ExecHooks = {},
  ): Promise<TestSummary> {
    const container = await this.runningContainer(sandboxId);
    const folder = this.folder(sandboxId);
    const before = await folder.readIfPresent();
    if (!before) throw new SandboxNeedsPrepareError('the workspace folder is missing');
    if (before.digest !== expectedDigest) throw new SandboxNeedsPrepareError('the workspace differs from the run’s mutation log');
    const result = await this.exec(container, settings.testCommand, settings, hooks);
    // The workflow's own test runs must leave the workspace as it was.
    const { mutations } = await folder.capture(before, 'verification');
    if (mutations.length > 0) await folder.restore(before, mutations.map((m) => m.path));
    return summarizeTestOutput(result.output, result.exitCode, result.timedOut);
  }

  /** grep in the sandbox (a hostile pattern cannot stall the worker); see searchResults.ts for what is shown. */
  private async searchCode(
    container: Docker.Container,
    workspace: string,
    tree: Tree,
    input: ToolInput<'search_code'>,
    settings: SandboxSettings,
    hooks: ExecHooks,
  ): Promise<string> {
    // grep follows a symlink named on its command line: check the path on the host first.
    const target = (await resolveInsideWorkspace(workspace, input.path ?? '')).relative || '.';
    const excluded = [...ignoredFolders].map((folder) => `--exclude-dir=${folder}`).join(' ');
    const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    // -Z ends each file name with a NUL, so names with colons are read back exactly.
    const command = `grep -rnEZ --binary-files=without-match ${excluded} -e ${quote(input.pattern)} -- ${quote(target)} | head -n ${maxSearchLinesRead}`;
    const result = await this.exec(container, command, { ...settings, limits: { ...settings.limits, commandTimeoutSeconds: 30 } }, hooks);
    if (result.timedOut) return 'The search timed out; narrow the pattern or the path.';
    return formatSearchResults(result.output, tree, target, input.pattern);
  }

  private async exec(container: Docker.Container, command: string, settings: SandboxSettings, hooks: ExecHooks): Promise<ExecResult> {
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
      if (await hasStopped(container)) throw new SandboxNeedsPrepareError('the sandbox container stopped while the command ran');
      throw error;
    }
    // A container killed from outside ends the command too, with an exit code that is not the
    // command's: the command must run again in a prepared sandbox, not be reported. The engine
    // records the container's end a moment after the exec's, so a killed-looking end waits for it.
    const killedLooking = result.exitCode === null || result.exitCode === 137;
    if (await hasStopped(container, killedLooking ? containerStopSettleMs : 0)) {
      throw new SandboxNeedsPrepareError('the sandbox container stopped while the command ran');
    }
    return result;
  }

  async destroy(sandboxId: string): Promise<{ containerRemoved: boolean }> {
    const existing = await findSandboxContainer(this.options.docker, sandboxId);
    if (existing) await removeContainer(this.options.docker, existing.Id);
    await removeFolder(join(this.options.workspaceRoot, sandboxId));
    this.folders.delete(sandboxId);
    this.journals.delete(sandboxId);
    return { containerRemoved: Boolean(existing) };
  }
}

/** Name of a file of globs (one per line) that the agent must not see, such as fixture answers or secrets. */
export const hiddenFilesList = '.durable-debugger-ignore';

async function withoutHiddenFiles(root: string, paths: string[]): Promise<string[]> {
  const list = await readFile(join(root, hiddenFilesList), 'utf8').catch(() => null);
  if (list === null) return paths;
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
    const stopped = await container.inspect().then(
      (info) => !info.State.Running,
      () => true,
    );
    if (stopped || Date.now() >= deadline) return stopped;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function isTestFile(relative: string, settings: SandboxSettings): boolean {
  const globs = settings.testFileGlobs ?? defaultTestFileGlobs;
  return picomatch(globs, { dot: true })(relative) || picomatch(globs, { dot: true, basename: true })(relative);
}

/** A run_tests target is a path (optionally with a ::test id) that must stay inside the workspace. */
function checkedTestTarget(target: string | undefined): string | undefined {
  if (!target) return undefined;
  const [file, ...rest] = target.split('::');
  const relative = normalizeRelativePath(file ?? '');
  return [relative, ...rest].join('::');
}

function describeExec(result: ExecResult, settings: SandboxSettings): string {
  const lines: string[] = [];
  if (result.timedOut) {
    lines.push(
      `The command timed out after ${settings.limits.commandTimeoutSeconds} s and was stopped, together with everything it started.`,
    );
  } else if (result.exitCode === 137) {
    lines.push('The command was killed (exit code 137): it most likely ran out of memory.');
  } else {
    lines.push(`Exit code: ${result.exitCode}`);
  }
  if (result.droppedBytes > 0) {
    lines.push(`The command printed ${result.outputBytes} bytes; ${result.droppedBytes} bytes from the middle were dropped.`);
  }
  lines.push('', result.output.trimEnd() || '(no output)');
  return lines.join('\n');
}
