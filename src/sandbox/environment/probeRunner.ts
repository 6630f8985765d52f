// Runs an environment's probes (probes.ts) in its image before a run uses it: one short-lived
// container, hardened as the sandbox is (no network, non-root, read-only root, no capabilities),
// with only the repository files the probes read copied into a read-only /workspace. A probe reads
// nothing but the image and those files and reaches nothing: the same image (by its id), probes and
// files pass again, so a pass is remembered (keptAnswers.ts) and a reused image is not probed twice.
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { removeContainer } from '../container/container.js';
import { sandboxContainerEnv } from '../container/sandboxEnv.js';
import { outputEnd } from '../container/outputEnd.js';
import { LineMergedOutput } from '../container/lineMergedOutput.js';
import type { ContentStore } from '../store/contentStore.js';
import type { KeptAnswers } from './keptAnswers.js';
import type { ImageLookups } from './imageLookups.js';
import type { EnvironmentProbe } from './planTypes.js';

export interface ProbeRun {
  docker: Docker;
  store: ContentStore;
  /** Where the probe's copy of the files is written. */
  home: string;
  image: string;
  containerEnv: string[];
  /** Folders of /workspace the image fills (node_modules): the probes see the image's copy there, as the sandbox does. */
  nodeModules?: string[];
  snapshotId: string;
  probes: EnvironmentProbe[];
  labels: Record<string, string>;
  signal?: AbortSignal;
  /** The passes remembered on this host, each kept under the hash of what decided it (the image's id, the probes, the files they read, the mounts); without it, the probes always run. */
  passes?: KeptAnswers;
  /** The preparation's lookups, which have usually asked about the image already. */
  images: ImageLookups;
  /** Runs the removal of the probe's container and files after the answer is out (the builder's clean-ups); without it, before. */
  cleanUpLater?: (cleanUp: () => Promise<void>) => void;
}

/** How long the probes may take, in a container of their own or at the end of a build. */
export const probeTimeLimitSeconds = 60;
const probeTimeoutMs = probeTimeLimitSeconds * 1000;

/** The line the script prints after a probe that failed, with its index: which advice the report quotes. */
const failedMark = '@@durable-debugger-probe-failed:';

/** What failed probes printed (which module came from where), and the advice of each one that failed. */
export interface ProbeFailure {
  output: string;
  advice: string[];
}

/** What a failed probe means for the user: which module came from where, and what to do in its ecosystem. */
export function explainProbeFailure(failure: ProbeFailure): string {
  return [
    "The environment would run the tests against another copy of the repository's own code, not the workspace:",
    failure.output,
    ...failure.advice,
  ].join('\n');
}

/** Runs the probes; null when they pass. */
export async function runProbes(run: ProbeRun): Promise<ProbeFailure | null> {
  if (run.probes.length === 0) return null;
  const { docker, store } = run;
  const tree = await store.getTree(run.snapshotId);
  const wanted = new Set(run.probes.flatMap((probe) => probe.files));
  const read = tree.entries.flatMap((entry) => (entry.kind === 'file' && wanted.has(entry.path) ? [entry] : []));
  const imageId = async () => {
    const info = await run.images.inspect(run.image);
    if (!info) throw new Error(`the image ${run.image} to probe is not on this Docker engine`);
    return info.Id;
  };
  const key = run.passes
    ? createHash('sha256')
        .update(
          JSON.stringify({
            image: await imageId(),
            env: run.containerEnv,
            nodeModules: run.nodeModules ?? [],
            probes: run.probes.map((probe) => probe.script),
            files: read.map((entry) => [entry.path, entry.blob]),
          }),
        )
        .digest('hex')
    : null;
  if (key && (await run.passes?.get(key)) !== null) return null;
  await mkdir(run.home, { recursive: true });
  const workspace = await mkdtemp(join(run.home, 'probe-'));
  let container: Docker.Container | undefined;
  try {
    await chmod(workspace, 0o755);
    for (const entry of read) {
      await mkdir(dirname(join(workspace, entry.path)), { recursive: true, mode: 0o755 });
      await writeFile(join(workspace, entry.path), await store.getBlob(entry.blob), { mode: 0o644 });
    }
    // The read-only folder has its mount points already: Docker could not make them in it.
    for (const folder of run.nodeModules ?? []) await mkdir(join(workspace, folder), { recursive: true, mode: 0o755 });
    // Readable by the probe's user whatever the worker's umask (the CLI's is 077): modes given at creation are masked.
    await readableByAll(workspace);
    const script = probesScript(run.probes);
    container = await docker.createContainer({
      Image: run.image,
      Cmd: ['sh', '-c', script],
      User: '65534:65534',
      WorkingDir: '/',
      Env: sandboxContainerEnv(run.containerEnv),
      Labels: run.labels,
      HostConfig: {
        NetworkMode: 'none',
        Memory: 512 * 1024 * 1024,
        PidsLimit: 128,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
        Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m,mode=1777' },
        Binds: [`${workspace}:/workspace:ro`],
        Mounts: (run.nodeModules ?? []).map((folder) => ({
          Type: 'volume' as const,
          Source: '',
          Target: `/workspace/${folder}`,
        })),
        LogConfig: { Type: 'none', Config: {} },
      },
    });
    let output = '';
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const allOutput = outputEnd(stream);
    const merged = new LineMergedOutput((chunk) => {
      if (output.length < 20_000) output += chunk.toString('utf8');
    });
    container.modem.demuxStream(stream, merged.stdout, merged.stderr);
    await container.start();
    const kill = () => void container?.kill().catch(() => undefined);
    const timer = setTimeout(kill, probeTimeoutMs);
    run.signal?.addEventListener('abort', kill);
    let statusCode: number;
    try {
      ({ StatusCode: statusCode } = (await container.wait()) as { StatusCode: number });
    } finally {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', kill);
    }
    await allOutput();
    merged.flush();
    if (run.signal?.aborted) throw new Error('the environment check was cancelled');
    if (statusCode === 0) {
      if (key) await run.passes?.keep(key);
      return null;
    }
    return probeFailure(output, run.probes, statusCode);
  } finally {
    const probed = container;
    const cleanUp = async () => {
      try {
        if (probed) await removeContainer(docker, probed.id);
      } finally {
        await rm(workspace, { recursive: true, force: true });
      }
    };
    if (run.cleanUpLater) run.cleanUpLater(cleanUp);
    else await cleanUp();
  }
}

/** The probes as one script: each in a subshell, all of them run, so the output names every module that came from elsewhere. */
export function probesScript(probes: EnvironmentProbe[]): string {
  return [
    'status=0',
    ...probes.map((probe, index) => `(\n${probe.script}\n) || { status=1; echo "${failedMark}${index}"; }`),
    'exit $status',
  ].join('\n');
}

/** What a failed run of probesScript printed, and the advice of each probe that failed. */
export function probeFailure(output: string, probes: EnvironmentProbe[], exitCode: number): ProbeFailure {
  const failed = new Set(
    [...output.matchAll(new RegExp(`^${failedMark}(\\d+)$`, 'gm'))].map((match) => Number(match[1])),
  );
  const printed = output
    .split('\n')
    .filter((line) => !line.startsWith(failedMark))
    .join('\n')
    .trim();
  return {
    output: printed || `the check exited with ${exitCode} and printed nothing`,
    // Every probe's advice when the marks were lost (a killed check): better too much than none.
    advice: [
      ...new Set(probes.filter((_, index) => failed.size === 0 || failed.has(index)).map((probe) => probe.advice)),
    ],
  };
}

/** Folders 0755 and files 0644 below `folder`: the probe's copy holds nothing secret beyond what it reads. */
async function readableByAll(folder: string): Promise<void> {
  await chmod(folder, 0o755);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) await readableByAll(path);
    else if (entry.isFile()) await chmod(path, 0o644);
  }
}
