// Builds (or reuses) the Docker image a repository's sandbox runs: the sandbox base image plus
// the repository's dependencies, installed once in a build container that alone may reach the
// package registries (host network, the host's CA bundle and package settings), then committed.
// The image's tag is a hash of everything that decides its content, so a second run reuses it.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { InstallScriptProblem, PreparedEnvironment } from '../../agent/environment.js';
import { labels, projectLabel, removeContainer } from '../container.js';
import { explainInstallFailure, explainProbeFailure, manifestCandidates, planEnvironment } from './plan.js';
import { runProbes } from './probeRunner.js';
import { parseInstallScriptsLabel, parseInstallScriptsLine } from './installScripts.js';
import { npmForNode } from './nodeVersion.js';
import { SandboxPythons } from './pythonImages.js';
import {
  EnvironmentBuildError,
  packedToolsFolder,
  repositoryDockerfile,
  type EnvironmentChoice,
  type EnvironmentPlan,
  type PackedTool,
  type Toolchain,
} from './planTypes.js';
import type { ContentStore } from '../store/contentStore.js';
import { removeFolder } from '../ownerAccess.js';
import { WorkspaceFolder } from '../workspaceFolder.js';

const run = promisify(execFile);

export const environmentRepository = 'durable-debugger-env';
export const buildContainerPrefix = 'durable-debugger-env-build-';
export const environmentLabels = {
  kind: 'durable-debugger.environment.kind',
  description: 'durable-debugger.environment.description',
  packages: 'durable-debugger.environment.packages',
  /** The dependencies' install scripts that failed or were skipped (JSON), for the report of every run that reuses the image. */
  installScripts: 'durable-debugger.environment.install-scripts',
} as const;

export { EnvironmentBuildError };

export interface EnvironmentRequest {
  snapshotId: string;
  choice: EnvironmentChoice;
  owner: { workflowId: string; runId: string; host: string; scope: string };
}

export interface EnvironmentBuilderOptions {
  docker: Docker;
  store: ContentStore;
  baseImage: string;
  /** Where build inputs are written while a build runs. */
  home: string;
  /** Where the toolchains (pip wheel, node and npm packages) are kept; shared by every worker of the machine. */
  toolchainDir?: string;
}

export interface BuildHooks {
  /** Each line the installer prints, as it prints it (activity heartbeats). */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
}

const keptLines = 40;

export class EnvironmentBuilder {
  private readonly pythons: SandboxPythons;

  constructor(readonly options: EnvironmentBuilderOptions) {
    this.pythons = new SandboxPythons(options.docker, options.baseImage);
  }

  /**
   * Reads the snapshot's manifests and decides what to install, on a sandbox image whose Python the
   * repository allows; null when nothing needs installing.
   */
  async plan(snapshotId: string, choice: EnvironmentChoice): Promise<EnvironmentPlan | null> {
    const { store } = this.options;
    const tree = await store.getTree(snapshotId);
    const files = tree.entries.map((entry) => entry.path);
    const manifests: Record<string, string> = {};
    for (const path of manifestCandidates(files)) {
      const entry = tree.entries.find((candidate) => candidate.path === path);
      if (entry?.kind === 'file') manifests[path] = (await store.getBlob(entry.blob)).toString('utf8');
    }
    return this.pythons.onAllowedPython(planEnvironment(files, manifests, choice), files, manifests);
  }

  async prepare(request: EnvironmentRequest, hooks: BuildHooks = {}): Promise<PreparedEnvironment | null> {
    const plan = await this.plan(request.snapshotId, request.choice);
    if (!plan) return null;
    const prepared = await this.prepareImage(plan, request, hooks);
    // Built or reused, the image must run the tests against the workspace: checked for this run's repository.
    const failure = await runProbes({
      docker: this.options.docker,
      store: this.options.store,
      home: join(this.options.home, 'env-builds'),
      image: prepared.image,
      containerEnv: prepared.containerEnv,
      snapshotId: request.snapshotId,
      probes: plan.probes,
      labels: { ...ownerLabels(request), [environmentLabels.kind]: 'probe' },
      signal: hooks.signal,
    });
    if (failure) throw new EnvironmentBuildError(explainProbeFailure(failure));
    return prepared;
  }

  private async prepareImage(
    plan: EnvironmentPlan,
    request: EnvironmentRequest,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment> {
    const { docker } = this.options;
    if (plan.dockerfile) return this.prepareDockerfile(plan, plan.dockerfile, request, hooks);
    const baseImage = plan.baseImage ?? this.options.baseImage;
    const base = await docker
      .getImage(baseImage)
      .inspect()
      .catch(() => null);
    if (!base)
      throw new EnvironmentBuildError(
        `The environment's image ${baseImage} is not on this Docker engine: pull or build it first (docker pull ${baseImage}).`,
      );
    if (plan.kind === 'image') {
      return {
        image: baseImage,
        containerEnv: plan.containerEnv,
        kind: plan.kind,
        description: plan.description,
        reused: true,
        buildMs: 0,
        packages: null,
      };
    }
    const toolchain = await this.toolchain(plan.toolchains);
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          base: base.Id,
          script: plan.script,
          files: plan.files,
          env: plan.containerEnv,
          toolchain: toolchain.names,
          repository: plan.needsRepository ? request.snapshotId : null,
        }),
      )
      .digest('hex')
      .slice(0, 16);
    const image = `${environmentRepository}:${key}`;
    const existing = await docker
      .getImage(image)
      .inspect()
      .catch(() => null);
    const toolchainNotes = [...toolchain.notes, ...(plan.toolchainNotes ?? [])];
    const described = (installScripts: InstallScriptProblem[]) => ({
      ...(toolchainNotes.length ? { toolchain: toolchainNotes } : {}),
      ...(installScripts.length ? { installScripts } : {}),
    });
    if (existing) {
      const labelsOf = existing.Config.Labels ?? {};
      const packages = labelsOf[environmentLabels.packages];
      return {
        image,
        containerEnv: plan.containerEnv,
        kind: plan.kind,
        description: plan.description,
        reused: true,
        buildMs: 0,
        packages: packages ? Number(packages) : null,
        ...described(parseInstallScriptsLabel(labelsOf[environmentLabels.installScripts])),
      };
    }
    if (toolchainNotes.length) hooks.onLine?.(`toolchain: ${toolchainNotes.join(', ')}`);
    const started = Date.now();
    const built = await this.build(plan, baseImage, image, toolchain, request, hooks);
    return {
      image,
      containerEnv: plan.containerEnv,
      kind: plan.kind,
      description: plan.description,
      reused: false,
      buildMs: Date.now() - started,
      packages: built.packages,
      ...described(built.installScripts),
    };
  }

  /** The repository's own Dockerfile, built once (never pulling its FROM images) and then reused as the others are. */
  private async prepareDockerfile(
    plan: EnvironmentPlan,
    dockerfile: NonNullable<EnvironmentPlan['dockerfile']>,
    request: EnvironmentRequest,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment> {
    const { docker, store } = this.options;
    const bases: string[] = [];
    for (const from of dockerfile.fromImages) {
      const info = await docker
        .getImage(from)
        .inspect()
        .catch(() => null);
      if (!info) {
        throw new EnvironmentBuildError(
          `${repositoryDockerfile} builds FROM ${from}, which is not on this Docker engine: durable-debugger never pulls images. Pull or build it first (docker pull ${from}), or base the file on an image that is here, such as ${this.options.baseImage}.`,
        );
      }
      bases.push(info.Id);
    }
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          dockerfile: dockerfile.text,
          bases,
          repository: plan.needsRepository ? request.snapshotId : null,
        }),
      )
      .digest('hex')
      .slice(0, 16);
    const image = `${environmentRepository}:${key}`;
    const prepared = async (reused: boolean, buildMs: number): Promise<PreparedEnvironment> => {
      // The sandbox sets PATH itself: the image's own PATH (a venv, a toolchain) is passed on.
      const path = ((await docker.getImage(image).inspect()).Config.Env ?? []).find((variable) =>
        variable.startsWith('PATH='),
      );
      return {
        image,
        containerEnv: path ? [path] : [],
        kind: plan.kind,
        description: plan.description,
        reused,
        buildMs,
        packages: null,
      };
    };
    if (
      await docker
        .getImage(image)
        .inspect()
        .catch(() => null)
    )
      return prepared(true, 0);

    const started = Date.now();
    const buildsRoot = join(this.options.home, 'env-builds');
    await mkdir(buildsRoot, { recursive: true });
    const inputDir = await mkdtemp(join(buildsRoot, 'dockerfile-'));
    try {
      const context = join(inputDir, 'context');
      if (plan.needsRepository)
        await new WorkspaceFolder(context, store, { uid: 0, gid: 0 }).rebuild(request.snapshotId, []);
      else await mkdir(context, { recursive: true });
      // The sandbox runs `sleep infinity` and execs its commands: an ENTRYPOINT of the file would be in the way.
      const buildFile = '.durable-debugger-build.Dockerfile';
      await writeFile(join(context, buildFile), `${dockerfile.text}\nENTRYPOINT []\nCMD ["sleep", "infinity"]\n`);
      const stream = await docker.buildImage(
        { context, src: await readdir(context) },
        {
          t: image,
          dockerfile: buildFile,
          // Only the build reaches the network (as the other environment builds do); nothing is pulled.
          networkmode: 'host',
          pull: false,
          rm: true,
          forcerm: true,
          labels: {
            [labels.project]: projectLabel,
            [environmentLabels.kind]: plan.kind,
            [environmentLabels.description]: plan.description,
          },
        },
      );
      const lines: string[] = [];
      let failure: string | null = null;
      const abort = () => (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
      hooks.signal?.addEventListener('abort', abort);
      try {
        await new Promise<void>((resolve, reject) => {
          docker.modem.followProgress(
            stream,
            (error: Error | null) => (error ? reject(error) : resolve()),
            (event: { stream?: string; error?: string }) => {
              if (event.error) failure = event.error;
              for (const line of (event.stream ?? event.error ?? '').split(/\r?\n/)) {
                if (!line.trim()) continue;
                lines.push(line);
                if (lines.length > keptLines) lines.shift();
                hooks.onLine?.(line);
              }
            },
          );
        });
      } finally {
        hooks.signal?.removeEventListener('abort', abort);
      }
      if (hooks.signal?.aborted) throw new Error('the environment build was cancelled');
      if (
        failure !== null ||
        !(await docker
          .getImage(image)
          .inspect()
          .catch(() => null))
      ) {
        throw new EnvironmentBuildError(
          `Building ${repositoryDockerfile} failed (${failure ?? 'no image was made'}). The build's last lines:\n${lines.join('\n')}`,
        );
      }
      return prepared(false, Date.now() - started);
    } finally {
      await rm(inputDir, { recursive: true, force: true });
    }
  }

  private async build(
    plan: EnvironmentPlan,
    baseImage: string,
    image: string,
    toolchain: { dir: string; binds: string[] },
    request: EnvironmentRequest,
    hooks: BuildHooks,
  ): Promise<{ packages: number | null; installScripts: InstallScriptProblem[] }> {
    const { docker, store } = this.options;
    const buildsRoot = join(this.options.home, 'env-builds');
    await mkdir(buildsRoot, { recursive: true });
    const inputDir = await mkdtemp(join(buildsRoot, 'input-'));
    let container: Docker.Container | undefined;
    try {
      for (const [path, text] of Object.entries(plan.files)) {
        await mkdir(dirname(join(inputDir, path)), { recursive: true });
        await writeFile(join(inputDir, path), text);
      }
      const settingsEnv = await hostPackageSettings.env();
      const binds = [
        `${inputDir}:/env-input:ro`,
        `${toolchain.dir}:/toolchain:ro`,
        ...toolchain.binds,
        ...hostPackageSettings.binds(),
      ];
      if (plan.needsRepository) {
        const copy = new WorkspaceFolder(join(inputDir, 'workspace'), store, { uid: 0, gid: 0 });
        await copy.rebuild(request.snapshotId, []);
        binds.push(`${copy.path}:/workspace:rw`);
      }
      const [repo, tag] = image.split(':') as [string, string];
      container = await docker.createContainer({
        name: `${buildContainerPrefix}${tag}-${randomBytes(3).toString('hex')}`,
        Image: baseImage,
        Cmd: ['sh', '-c', plan.script],
        User: '0:0',
        WorkingDir: '/',
        Env: [
          'HOME=/root',
          'LANG=C.UTF-8',
          'PATH=/usr/local/bin:/usr/bin:/bin',
          'PYTHONDONTWRITEBYTECODE=1',
          ...settingsEnv,
        ],
        // The build container belongs to the run: the reaper removes one a crashed worker left behind.
        Labels: {
          [labels.project]: projectLabel,
          [labels.workflowId]: request.owner.workflowId,
          [labels.runId]: request.owner.runId,
          [labels.host]: request.owner.host,
          [labels.scope]: request.owner.scope,
          [labels.created]: new Date().toISOString(),
          [environmentLabels.kind]: plan.kind,
          [environmentLabels.description]: plan.description,
        },
        HostConfig: {
          NetworkMode: 'host',
          Binds: binds,
          Memory: 4096 * 1024 * 1024,
          PidsLimit: 4096,
          LogConfig: { Type: 'none', Config: {} },
        },
      });
      const lines: string[] = [];
      let packages: number | null = null;
      let installScripts: InstallScriptProblem[] = [];
      let partial = '';
      const onText = (text: string) => {
        partial += text;
        const parts = partial.split(/\r?\n|\r/);
        partial = parts.pop() ?? '';
        for (const line of parts) {
          if (!line.trim()) continue;
          const count = line.match(/^packages: (\d+)$/);
          if (count) packages = Number(count[1]);
          const scripts = parseInstallScriptsLine(line);
          if (scripts) {
            installScripts = scripts.problems;
            continue; // the runner's summary is for the report; its own lines said it all
          }
          lines.push(line);
          if (lines.length > keptLines) lines.shift();
          hooks.onLine?.(line);
        }
      };
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          onText(chunk.toString('utf8'));
          done();
        },
      });
      container.modem.demuxStream(stream, sink, sink);
      await container.start();
      const abort = () => void container?.kill().catch(() => undefined);
      hooks.signal?.addEventListener('abort', abort);
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      hooks.signal?.removeEventListener('abort', abort);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the last output may trail the exit
      onText('\n');
      if (hooks.signal?.aborted) throw new Error('the environment build was cancelled');
      if (StatusCode !== 0) {
        throw new EnvironmentBuildError(explainInstallFailure(plan.description, StatusCode, lines));
      }
      await container.commit({
        _query: { container: container.id, repo, tag, comment: plan.description },
        _body: {
          Cmd: ['sleep', 'infinity'],
          Labels: {
            ...(packages === null ? {} : { [environmentLabels.packages]: String(packages) }),
            ...(installScripts.length ? { [environmentLabels.installScripts]: JSON.stringify(installScripts) } : {}),
          },
        },
      });
      return { packages, installScripts };
    } finally {
      if (container) await removeContainer(docker, container.id);
      // The setup ran as root on the repository's copy: a worker that is not root needs root to remove it.
      await removeFolder(inputDir, { docker, image: baseImage });
    }
  }

  /**
   * The toolchain files the build needs, fetched once on this host from the registries (with the host's
   * settings): pip's wheel in the shared folder, and each packed tool bound at /env-toolchain/<as>.
   * `names` (the fetched files' own names, so their versions) go into the image key; `notes` into the report.
   */
  private async toolchain(
    needs: Toolchain[],
  ): Promise<{ dir: string; names: string[]; binds: string[]; notes: string[] }> {
    const dir =
      this.options.toolchainDir ??
      join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'durable-debugger', 'toolchain');
    await mkdir(dir, { recursive: true });
    const names: string[] = [];
    const binds: string[] = [];
    const notes: string[] = [];
    let nodeVersion: string | undefined;
    for (const need of needs) {
      if (need === 'pip') {
        names.push(
          await fetchOnce(dir, 'pip.whl', 'pip-version', async (scratch) => {
            await run(
              'python3',
              ['-m', 'pip', 'download', 'pip', '--no-deps', '--only-binary', ':all:', '-d', scratch],
              { timeout: 300_000 },
            );
            return (await readdir(scratch)).find((name) => name.endsWith('.whl'));
          }),
        );
        continue;
      }
      const spec = need.matchingNode ? npmForNode(nodeVersion ?? '20.0.0') : need.spec;
      const file = packedFileName(spec);
      const what = `${spec}${need.reason ? ` (${need.label}, ${need.reason})` : ''}`;
      const name = await fetchOnce(
        dir,
        file,
        `${file}-version`,
        async (scratch) => {
          await run('npm', ['pack', spec, '--pack-destination', scratch], { timeout: 600_000 });
          return (await readdir(scratch)).find((each) => each.endsWith('.tgz'));
        },
        what,
      );
      if (need.hash) await verifyPackedHash(join(dir, file), need, spec);
      const version = name.match(/-(\d+\.\d+\.\d+(?:-[\w.]+)?)\.tgz$/)?.[1] ?? spec;
      if (need.label === 'node') nodeVersion = version;
      names.push(name);
      binds.push(`${join(dir, file)}:${packedToolsFolder}/${need.as}:ro`);
      notes.push(`${need.label} ${version}${need.reason ? ` (${need.reason})` : ''}`);
    }
    return { dir, names, binds, notes };
  }
}

/** The file a packed tool is kept as in the toolchain folder: one per spec (`pnpm@9` → pnpm-9.tgz), whatever version it fetched. */
export function packedFileName(spec: string): string {
  const plain = spec.replace(/^@/, '').replace(/[/@]/g, '-');
  if (/^[\w.-]+$/.test(plain)) return `${plain}.tgz`;
  // A range (">=20.5.0 <21"): its characters are no file name's; a hash keeps different ranges apart.
  const hash = createHash('sha256').update(spec).digest('hex').slice(0, 10);
  return `${plain.replace(/[^\w.-]+/g, '_')}-${hash}.tgz`;
}

/**
 * The hash package.json packageManager pins (corepack: `yarn@4.4.1+sha512.<hex>`): corepack hashes what it
 * downloads, the package's tarball, or for yarn 2+ its single yarn.js (packed here as bin/yarn.js).
 */
export async function verifyPackedHash(path: string, tool: PackedTool, spec: string): Promise<void> {
  const { algorithm, hex } = tool.hash as NonNullable<PackedTool['hash']>;
  const digest = (data: Buffer) => createHash(algorithm).update(data).digest('hex');
  if (digest(await readFile(path)) === hex) return;
  const yarnJs = await run('tar', ['xzf', path, '-O', 'package/bin/yarn.js'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    (result) => result.stdout as Buffer,
    () => null,
  );
  if (yarnJs && digest(yarnJs) === hex) return;
  throw new EnvironmentBuildError(
    `package.json packageManager pins ${spec} with ${algorithm} ${hex.slice(0, 16)}…, and the registry's ${spec} has another hash: the pin or the registry is wrong. Fix the pin (corepack use ${spec.replace(/^@yarnpkg\/cli-dist/, 'yarn')}) or remove its +${algorithm} part.`,
  );
}

/** The labels that tie a container of the environment step to its run: the reaper removes one a crashed worker left behind. */
function ownerLabels(request: EnvironmentRequest): Record<string, string> {
  return {
    [labels.project]: projectLabel,
    [labels.workflowId]: request.owner.workflowId,
    [labels.runId]: request.owner.runId,
    [labels.host]: request.owner.host,
    [labels.scope]: request.owner.scope,
    [labels.created]: new Date().toISOString(),
  };
}

/** Fetches a toolchain file into `dir/target` unless it is there; returns the fetched file's original name (its version). */
async function fetchOnce(
  dir: string,
  target: string,
  versionFile: string,
  fetch: (scratch: string) => Promise<string | undefined>,
  what = target.split('.')[0],
): Promise<string> {
  const recorded = await readFile(join(dir, versionFile), 'utf8').catch(() => null);
  if (recorded && existsSync(join(dir, target))) return recorded.trim();
  const scratch = await mkdtemp(join(dir, 'fetch-'));
  try {
    let name: string | undefined;
    try {
      name = await fetch(scratch);
    } catch (error) {
      const failure = error as { stderr?: string; message: string };
      const output = (failure.stderr || failure.message).trim().split('\n').slice(-5).join(' ');
      if (/ETARGET|No matching version/.test(output))
        throw new EnvironmentBuildError(
          `The package registry has no release of ${what}: check the version the repository names (${output}).`,
        );
      throw new EnvironmentBuildError(
        `Could not fetch ${what} for the environment from the package registry (${output}). Check the network and the registry settings (pip config, .npmrc, HTTPS_PROXY).`,
      );
    }
    if (!name) throw new EnvironmentBuildError(`Fetching ${target} for the environment produced no file`);
    await rename(join(scratch, name), join(dir, target));
    await writeFile(join(dir, versionFile), name);
    return name;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The host's package settings, as users' machines have them, passed to the build container. */
export const hostPackageSettings = {
  passedVariables:
    /^(PIP_\w+|NPM_CONFIG_\w+|npm_config_\w+|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|NODE_EXTRA_CA_CERTS|REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR|CURL_CA_BUNDLE)$/,

  async env(): Promise<string[]> {
    const fromPipConfig = await pipConfig();
    const variables = new Map<string, string>();
    for (const [key, value] of Object.entries(fromPipConfig))
      variables.set(`PIP_${key.toUpperCase().replace(/-/g, '_')}`, value);
    for (const [key, value] of Object.entries(process.env))
      if (value && this.passedVariables.test(key)) variables.set(key, value);
    // Node's installers (npm, pnpm, yarn) trust only Node's own CA list: a bundle the host names for
    // pip or OpenSSL (a company proxy's CA, often only in pip's config) is the one they need too.
    const bundle = ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'PIP_CERT']
      .map((key) => variables.get(key))
      .find((path) => path?.startsWith('/'));
    if (!variables.has('NODE_EXTRA_CA_CERTS') && bundle) variables.set('NODE_EXTRA_CA_CERTS', bundle);
    return [...variables].map(([key, value]) => `${key}=${value}`);
  },

  /** Read-only mounts of the CA bundles, find-links folders and .npmrc the settings name (those that exist). */
  binds(): string[] {
    const paths = new Set<string>();
    for (const key of ['PIP_CERT', 'REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'CURL_CA_BUNDLE']) {
      const value = process.env[key];
      if (value) paths.add(value);
    }
    for (const value of [
      cachedPipConfig?.cert,
      ...(cachedPipConfig?.['find-links']?.split(/\s+/) ?? []),
      ...(process.env.PIP_FIND_LINKS?.split(/\s+/) ?? []),
    ]) {
      if (value && value.startsWith('/')) paths.add(value);
    }
    const binds = [...paths]
      .filter((path) => path.startsWith('/') && existsSync(path))
      .map((path) => `${path}:${path}:ro`);
    const npmrc = process.env.NPM_CONFIG_USERCONFIG ?? join(homedir(), '.npmrc');
    if (existsSync(npmrc) && statSync(npmrc).isFile()) binds.push(`${npmrc}:/root/.npmrc:ro`);
    return binds;
  },
};

let cachedPipConfig: Record<string, string> | null = null;

/** pip's own configuration on this host (`pip config list`): index-url, cert, find-links, ... */
async function pipConfig(): Promise<Record<string, string>> {
  if (cachedPipConfig) return cachedPipConfig;
  const config: Record<string, string> = {};
  const output = await run('python3', ['-m', 'pip', 'config', 'list'], { timeout: 30_000 }).then(
    (result) => result.stdout,
    () => '',
  );
  for (const line of output.split('\n')) {
    const match = line.match(/^(?:global|install|download|:env:)\.([\w-]+)='(.*)'$/);
    if (
      match &&
      ['index-url', 'extra-index-url', 'cert', 'find-links', 'trusted-host', 'default-timeout'].includes(
        match[1] as string,
      )
    ) {
      config[match[1] as string] = match[2] as string;
    }
  }
  cachedPipConfig = config;
  return config;
}
