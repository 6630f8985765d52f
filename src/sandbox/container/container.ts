// The sandbox container: one long-lived, hardened container per run, with the workspace
// bind-mounted at /workspace. Commands run in it through `docker exec`.
import Docker from 'dockerode';
import type { SandboxLimits } from '../../agent/input.js';
import { sandboxContainerEnv } from './sandboxEnv.js';
import { withinDeadline } from './dockerDeadline.js';

export const projectLabel = 'durable-debugger';
export const labels = {
  project: 'durable-debugger.project',
  sandboxId: 'durable-debugger.sandbox-id',
  workflowId: 'durable-debugger.workflow-id',
  runId: 'durable-debugger.run-id',
  host: 'durable-debugger.host',
  /** The Temporal server and namespace the run belongs to: the reaper only judges its own. */
  scope: 'durable-debugger.scope',
  created: 'durable-debugger.created',
} as const;

export const workspaceMountPoint = '/workspace';

/** The user commands run as: never root. The container's idle main process runs as `nobody`. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/**
 * dockerode honours DOCKER_HOST (unix://, tcp://, with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH).
 * Podman's Docker-compatible socket differs (checked with rootful Podman 4.3): it refuses to
 * start a container with CapDrop ALL unless `nproc` is limited at or below its own limit, and
 * under a read-only root it mounts writable tmpfs on /run and /var/tmp.
 */
export function connectDocker(): Docker {
  return new Docker();
}

export function containerName(sandboxId: string): string {
  return `durable-debugger-${sandboxId}`;
}

export interface ContainerSpec {
  sandboxId: string;
  image: string;
  workspaceDir: string;
  limits: SandboxLimits;
  /** Variables the image's environment needs (see the environment step). */
  env?: string[];
  /** Container paths where a volume of this container's own takes the image's content (nodeModulesMounts.ts). */
  imageCopies?: string[];
  labels: { workflowId: string; runId: string; host: string; scope: string };
}

export async function createSandboxContainer(docker: Docker, spec: ContainerSpec): Promise<Docker.Container> {
  const container = await withinDeadline(
    'creating the sandbox container',
    (abortSignal) => docker.createContainer({ ...containerOptions(spec), abortSignal }),
    containerSetUpDeadlineMs,
  );
  await withinDeadline(
    'starting the sandbox container',
    (abortSignal) => container.start({ abortSignal }),
    containerSetUpDeadlineMs,
  );
  return container;
}

/** Docker fills the image copies' volumes while it creates and starts the container: a large `node_modules` takes a while. */
const containerSetUpDeadlineMs = 10 * 60_000;

function containerOptions(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const megabyte = 1024 * 1024;
  return {
    name: containerName(spec.sandboxId),
    Image: spec.image,
    // The main process only keeps the container alive; commands come through exec as the
    // sandbox user, so killing all of that user's processes never stops the container.
    Cmd: ['sleep', 'infinity'],
    User: '65534:65534',
    WorkingDir: workspaceMountPoint,
    Hostname: 'sandbox',
    // What CI leaves a job, nothing that changes what programs do (sandboxEnv.ts).
    Env: sandboxContainerEnv(spec.env),
    Labels: {
      [labels.project]: projectLabel,
      [labels.sandboxId]: spec.sandboxId,
      [labels.workflowId]: spec.labels.workflowId,
      [labels.runId]: spec.labels.runId,
      [labels.host]: spec.labels.host,
      [labels.scope]: spec.labels.scope,
      [labels.created]: new Date().toISOString(),
    },
    // Network mode none: loopback only. (NetworkDisabled would also leave /etc/hosts empty, and
    // test runners that serve on `localhost`, such as vitest, could not start.)
    HostConfig: {
      NetworkMode: 'none',
      Memory: spec.limits.memoryMb * megabyte,
      MemorySwap: spec.limits.memoryMb * megabyte,
      PidsLimit: spec.limits.pids,
      NanoCpus: Math.round(spec.limits.cpus * 1e9),
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      // exec: go test runs the test programs it links under /tmp (Docker's tmpfs is noexec unless told);
      // the writable /workspace runs programs all the same, so noexec here kept nothing out.
      Tmpfs: { '/tmp': `rw,exec,nosuid,nodev,size=${spec.limits.tmpMb}m,mode=1777` },
      Binds: [`${spec.workspaceDir}:${workspaceMountPoint}:rw`],
      // Anonymous volumes: Docker fills each from the image, and removeContainer removes them with it.
      Mounts: (spec.imageCopies ?? []).map((target) => ({ Type: 'volume' as const, Source: '', Target: target })),
      Init: true,
      IpcMode: 'private',
      Ulimits: [
        { Name: 'fsize', Soft: spec.limits.fileSizeMb * megabyte, Hard: spec.limits.fileSizeMb * megabyte },
        { Name: 'nofile', Soft: 1024, Hard: 1024 },
      ],
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
    },
  };
}

export async function findSandboxContainer(
  docker: Docker,
  sandboxId: string,
): Promise<Docker.ContainerInfo | undefined> {
  const found = await withinDeadline('looking up the sandbox container', (abortSignal) =>
    docker.listContainers({ all: true, filters: { label: [`${labels.sandboxId}=${sandboxId}`] }, abortSignal }),
  );
  return found[0];
}

export async function listProjectContainers(docker: Docker): Promise<Docker.ContainerInfo[]> {
  return withinDeadline('listing sandbox containers', (abortSignal) =>
    docker.listContainers({ all: true, filters: { label: [`${labels.project}=${projectLabel}`] }, abortSignal }),
  );
}

export async function removeContainer(docker: Docker, id: string): Promise<void> {
  try {
    await withinDeadline('removing a container', (abortSignal) =>
      docker.getContainer(id).remove({ force: true, v: true, abortSignal }),
    );
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== 404 && status !== 409) throw error; // gone already, or removal already under way
  }
}
