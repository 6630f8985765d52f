// A real sandbox for tests that exercise the SandboxHost directly (no Temporal): a scratch
// repository, a content store and a workspace root in a temporary folder, and a container on
// the real Docker engine, labelled with a scope of its own so that only it is ever removed.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { sandboxLimitsSchema, type SandboxLimits } from '../../src/agent/input.js';
import type { SandboxSettings, ToolOutcome } from '../../src/agent/sandboxProtocol.js';
import type { WorkspaceLog } from '../../src/agent/workspace.js';
import {
  connectDocker,
  findSandboxContainer,
  labels,
  listProjectContainers,
  removeContainer,
} from '../../src/sandbox/container/container.js';
import { SandboxHost, type ExecHooks } from '../../src/sandbox/sandboxHost.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';

export interface TestSandboxOptions {
  /** Repository files by relative path. */
  files?: Record<string, string>;
  /** Repository symlinks: relative path -> target. */
  symlinks?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
  testCommand?: string;
  /** Runs on the repository folder after its files are written, before the snapshot (e.g. `git init`). */
  prepareRepository?: (repo: string) => Promise<void>;
}

export interface ToolCallOptions {
  callId?: string;
  hooks?: ExecHooks;
  /** Overrides the sandbox's command timeout for this call. */
  commandTimeoutSeconds?: number;
}

export interface TestSandbox {
  host: SandboxHost;
  docker: Docker;
  sandboxId: string;
  /** The workspace folder on the host. */
  workspace: string;
  /** The user's checkout the sandbox was snapshotted from. */
  repository: string;
  /** The run's mutation log, kept as the workflow keeps it: every call appends its mutations. */
  log: WorkspaceLog;
  snapshotId: string;
  limits: SandboxLimits;
  settings: SandboxSettings;
  /** Runs one tool call as the workflow would, with a fresh call id unless one is given. */
  tool(name: string, input: Record<string, unknown>, options?: ToolCallOptions): Promise<ToolOutcome>;
  /** run_command with the given shell command. */
  run(command: string, options?: ToolCallOptions): Promise<ToolOutcome>;
  container(): Promise<Docker.Container>;
  /** Processes of the sandbox user in the container that can still run (zombies left out), seen from the host (`docker top`). */
  sandboxUserProcesses(): Promise<string[]>;
  stop(): Promise<void>;
}

const scope = `test-sandbox-${process.pid}`;
let counter = 0;

export async function startTestSandbox(options: TestSandboxOptions = {}): Promise<TestSandbox> {
  const home = await mkdtemp(join(tmpdir(), 'durable-debugger-sandbox-'));
  const repo = join(home, 'repo');
  await mkdir(repo);
  for (const [path, content] of Object.entries(options.files ?? { 'README.md': 'a scratch repository\n' })) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  for (const [path, target] of Object.entries(options.symlinks ?? {})) await symlink(target, join(repo, path));
  await options.prepareRepository?.(repo);

  const docker = connectDocker();
  const host = new SandboxHost({
    docker,
    store: new FolderStore(join(home, 'store')),
    workspaceRoot: join(home, 'workspaces'),
    hostId: 'test-host',
    image: process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1',
    scope,
  });
  const snapshot = await host.snapshotRepository(repo, options.testCommand ?? 'true');
  const limits = sandboxLimitsSchema.parse({ commandTimeoutSeconds: 10, ...options.limits });
  counter += 1;
  const sandboxId = `test-${process.pid}-${counter}`;
  const workflowId = `test-workflow-${sandboxId}`;
  await host.prepare({
    sandboxId,
    workflowId,
    runId: 'test-run',
    log: { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId },
    limits,
  });
  const settings: SandboxSettings = {
    testCommand: snapshot.testCommand,
    allowTestEdits: false,
    limits,
    observation: { maxBytes: 16_000, maxLines: 400 },
  };
  let calls = 0;
  const sandbox: TestSandbox = {
    host,
    docker,
    sandboxId,
    workspace: join(home, 'workspaces', sandboxId, 'workspace'),
    repository: repo,
    log: { snapshotId: snapshot.snapshotId, mutations: [], digest: snapshot.snapshotId },
    snapshotId: snapshot.snapshotId,
    limits,
    settings,
    async tool(name, input, callOptions = {}) {
      calls += 1;
      const outcome = await host.runTool(
        {
          sandboxId,
          iteration: calls,
          call: { id: callOptions.callId ?? `toolu_test_${calls}`, name, input },
          expectedDigest: sandbox.log.digest,
          settings: callOptions.commandTimeoutSeconds
            ? { ...settings, limits: { ...limits, commandTimeoutSeconds: callOptions.commandTimeoutSeconds } }
            : settings,
        },
        callOptions.hooks,
      );
      sandbox.log = {
        ...sandbox.log,
        mutations: [...sandbox.log.mutations, ...outcome.mutations],
        digest: outcome.digest,
      };
      return outcome;
    },
    run(command, options) {
      return sandbox.tool('run_command', { command }, options);
    },
    async container() {
      const info = await findSandboxContainer(docker, sandboxId);
      if (!info) throw new Error(`no container for sandbox ${sandboxId}`);
      return docker.getContainer(info.Id);
    },
    async sandboxUserProcesses() {
      // A killed process stays a zombie until the container's init reaps it; it can no longer run.
      const top = (await (await sandbox.container()).top({ ps_args: '-o uid,pid,stat,args' })) as {
        Processes?: string[][];
      };
      return (top.Processes ?? [])
        .filter((row) => row[0] === String(host.user.uid) && !row[2]?.startsWith('Z'))
        .map((row) => row.join(' '));
    },
    async stop() {
      await host.destroy(sandboxId);
      await rm(home, { recursive: true, force: true });
    },
  };
  return sandbox;
}

/** Removes any container this test process's sandboxes left behind; returns how many there were. */
export async function removeLeftoverTestSandboxes(): Promise<number> {
  const docker = connectDocker();
  const leftovers = (await listProjectContainers(docker)).filter(
    (container) => container.Labels[labels.scope] === scope,
  );
  for (const container of leftovers) await removeContainer(docker, container.Id);
  return leftovers.length;
}
