// Builds (or reuses) the Docker image a repository's sandbox runs: the sandbox base image plus
// the repository's dependencies, installed once in a build container, then committed. What runs
// there is untrusted (install scripts, sdist builds, setup commands, Dockerfile RUN steps): the
// container has no network of its own, only the registry proxy (buildNetwork.ts), no
// capabilities beyond owning its files, no new privileges, and the host's package settings as a
// read-only folder that never enters the image (buildSettings.ts). The image's tag is a hash of
// everything that decides its content, the settings included, so a second run reuses it.
import { createHash, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import type { InstallScriptProblem, PreparedEnvironment } from '../../agent/environment.js';
import { labels, projectLabel, removeContainer } from '../container/container.js';
import { BuildNetworks, openBuildNetwork, networkHolderPrefix, proxyPort } from './buildNetwork.js';
import { openBuildCgroup } from './buildCgroup.js';
import { buildSettings, secretRedactor, settingsMountPoint, type BuildSettings } from './buildSettings.js';
import { readHostPackageSettings, warmHostPackageSettings, type HostPackageSettings } from './hostPackageSettings.js';
import { ImagePolicy } from './imagePolicy.js';
import { inputFileContent, readManifests, readSourceFiles } from './manifests.js';
import { explainInstallFailure, planEnvironment } from './plan.js';
import { explainProbeFailure, runProbes } from './probeRunner.js';
import { BuildChecksOutput, withBuildChecks } from './buildChecks.js';
import { KeptAnswers } from './keptAnswers.js';
import { ImageLookups } from './imageLookups.js';
import { ImageEvents } from './imageEvents.js';
import { RememberedPreparations } from './rememberedPreparations.js';
import { WarmLayers } from './warmLayers.js';
import { PreviousBuilds, type PreviousBuild, type RepositoryBuild } from './previousBuilds.js';
import { parseInstallScriptsLabel, parseInstallScriptsLine } from './node/installScripts.js';
import { SandboxPythons } from './python/pythonImages.js';
import { rustupToolchainsFolder } from './rust/rustupToolchains.js';
import { suiteImage, suiteSetupCommand } from './debian/suiteImages.js';
import { defaultToolchainDir, fetchToolchain } from './toolchain.js';
import { safeProjectVersion } from '../workspace/projectVersion.js';
import {
  EnvironmentBuildError,
  EnvironmentConfigError,
  projectVersionVariable,
  repositoryConfigFile,
  repositoryDockerfile,
  installers,
  type EnvironmentChoice,
  type EnvironmentPlan,
  type Installer,
  type SourcesWarmup,
} from './planTypes.js';
import type { ContentStore } from '../store/contentStore.js';
import { removeFolder } from '../workspace/ownerAccess.js';
import { buildContainerEnv } from '../container/sandboxEnv.js';
import { WorkspaceFolder } from '../workspace/workspaceFolder.js';
import { outputEnd } from '../container/outputEnd.js';
import { LineMergedOutput } from '../container/lineMergedOutput.js';

export const environmentRepository = 'durable-debugger-env';
export const buildContainerPrefix = 'durable-debugger-env-build-';
export const environmentLabels = {
  kind: 'durable-debugger.environment.kind',
  description: 'durable-debugger.environment.description',
  packages: 'durable-debugger.environment.packages',
  /** The dependencies' install scripts that failed or were skipped (JSON), for the report of every run that reuses the image. */
  installScripts: 'durable-debugger.environment.install-scripts',
  /** How the project itself was installed ("natsize 1.2.3 installed editable from /workspace"), for the report. */
  project: 'durable-debugger.environment.project',
} as const;

export { EnvironmentBuildError };

/** What a build may do to the root filesystem it installs into: own, chown and write its files. Nothing else. */
const buildCapabilities = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'];

/** A request as its preparation carries it: with what it asked Docker so far. */
type Preparation = EnvironmentRequest & { images: ImageLookups; hostSettings?: Promise<HostPackageSettings> };

export interface EnvironmentRequest {
  snapshotId: string;
  choice: EnvironmentChoice;
  /** The version of the user's checkout (git describe on the host at snapshot time), for the project's own install. */
  projectVersion?: string;
  /**
   * The repository's path as the run's input names it: with the owner's scope, what finds the same
   * repository's previous project image for a project install that builds on it (projectInstall.previousBuild).
   */
  repository?: string;
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
  /** The images repository files may name (DURABLE_DEBUGGER_ALLOWED_IMAGES); default: ours only. */
  imagePolicy?: ImagePolicy;
  /**
   * 'registries' (always, in the product): builds reach the package registries and nothing else.
   * 'host' exists only so that the environment bench can measure what the proxy costs.
   */
  network?: 'registries' | 'host';
  /** Waits for one of the host's build slots (src/sandbox/container/hostCapacity.ts); the result gives it back. */
  buildSlot?: (signal?: AbortSignal) => Promise<() => void>;
  /** DURABLE_DEBUGGER_SETUP_CREDENTIALS: a repository's setup commands get the registries' credentials (default: not). */
  setupCredentials?: boolean;
}

export interface BuildHooks {
  /** Each line the installer prints, as it prints it (activity heartbeats). */
  onLine?: (line: string) => void;
  /** How long each step of a preparation took (the environment bench's breakdown); `project ` prefixes the project's own install. */
  onPhase?: (phase: BuildPhase, ms: number) => void;
  signal?: AbortSignal;
}

/** The steps of a preparation the bench times apart. */
export type BuildPhase =
  | 'remembered'
  | 'plan'
  | 'lookup'
  | 'toolchain'
  | 'inputs'
  | 'network'
  | 'previous build'
  | 'container start'
  | 'install'
  | 'commit'
  | 'clean-up'
  | 'probes'
  | `project ${string}`
  | `toolchain image ${string}`;

/** Runs `step`, telling hooks.onPhase how long it took (whether it succeeded or not). */
async function timed<T>(hooks: BuildHooks, phase: BuildPhase, step: () => Promise<T>): Promise<T> {
  if (!hooks.onPhase) return step();
  const started = performance.now();
  try {
    return await step();
  } finally {
    hooks.onPhase(phase, performance.now() - started);
  }
}

const keptLines = 40;

export class EnvironmentBuilder {
  private readonly pythons: SandboxPythons;
  /** What a snapshot's sources name for a warm-up, kept per snapshot (the summary is all a cached run reads). */
  private readonly sourceSummaries: KeptAnswers;
  /** The warm layers made on each dependencies' image, and for what (a new snapshot's is made on the nearest). */
  private readonly warmLayers: WarmLayers;
  /** Each repository's last project image, for a project install that builds on its own previous build. */
  private readonly previousBuilds: PreviousBuilds;
  /** The registry proxy and its holder container, kept warm between this worker's builds. */
  private readonly networks = new BuildNetworks();
  /** Builds' clean-ups (their containers and input folders removed), done after the build has returned. */
  private readonly cleanUps = new Set<Promise<void>>();
  /** The engine's image events, watched while this builder lives: what tells the preparations below are still good. */
  private readonly imageEvents: ImageEvents;
  /** What cached preparations returned, for the same request while nothing they read has changed. */
  private readonly remembered: RememberedPreparations;

  constructor(readonly options: EnvironmentBuilderOptions) {
    this.pythons = new SandboxPythons(
      options.docker,
      options.baseImage,
      new KeptAnswers(join(options.home, 'python-versions')),
    );
    this.sourceSummaries = new KeptAnswers(join(options.home, 'source-summaries'));
    const imageExists = (image: string) =>
      options.docker
        .getImage(image)
        .inspect()
        .then(
          () => true,
          () => false,
        );
    this.warmLayers = new WarmLayers(new KeptAnswers(join(options.home, 'warm-layers')), imageExists);
    this.previousBuilds = new PreviousBuilds(new KeptAnswers(join(options.home, 'previous-builds')), imageExists);
    this.imageEvents = new ImageEvents(options.docker);
    this.remembered = new RememberedPreparations(this.imageEvents);
    warmHostPackageSettings();
  }

  /**
   * Reads the snapshot's manifests and decides what to install, on a sandbox image whose Python the
   * repository allows; null when nothing needs installing.
   */
  async plan(
    snapshotId: string,
    choice: EnvironmentChoice,
    images = new ImageLookups(this.options.docker),
  ): Promise<EnvironmentPlan | null> {
    const { store } = this.options;
    const tree = await store.getTree(snapshotId);
    const files = tree.entries.map((entry) => entry.path);
    const manifests = await readManifests(store, tree.entries);
    return this.pythons.onAllowedPython(planEnvironment(files, manifests, choice), files, manifests, images);
  }

  async prepare(environmentRequest: EnvironmentRequest, hooks: BuildHooks = {}): Promise<PreparedEnvironment | null> {
    const request: Preparation = { ...environmentRequest, images: new ImageLookups(this.options.docker) };
    const started = performance.now();
    const [startedAt, conditions] = await Promise.all([this.imageEvents.watched(), this.conditionsOf(request)]);
    const remembered = this.remembered.find(request, conditions);
    if (remembered !== undefined) {
      hooks.onPhase?.('remembered', performance.now() - started);
      return remembered;
    }
    const environment = await this.prepareAnew(request, hooks);
    this.remembered.keep(request, { environment, conditions, images: request.images.images(), startedAt });
    return environment;
  }

  /**
   * What a preparation reads beyond its request and the images: the day (Node's LTS), the host's
   * package settings (hashed: they hold credentials), the folders of fetched toolchains and of
   * rustup's (a tool fetched or installed since).
   */
  private async conditionsOf(request: Preparation): Promise<string> {
    request.hostSettings ??= readHostPackageSettings(process.env);
    const settings = createHash('sha256')
      .update(JSON.stringify(await request.hostSettings))
      .digest('hex');
    const folders = [this.options.toolchainDir ?? defaultToolchainDir(), rustupToolchainsFolder()].map(
      (folder) => statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? 0,
    );
    return JSON.stringify([new Date().toISOString().slice(0, 10), settings, folders]);
  }

  private async prepareAnew(request: Preparation, hooks: BuildHooks): Promise<PreparedEnvironment | null> {
    const planned = await timed(hooks, 'plan', () => this.plan(request.snapshotId, request.choice, request.images));
    if (!planned) return null;
    const plan = withBuildChecks(planned);
    const dependencies = await this.onBaseImage(plan, request, hooks);
    const prepared = await this.withProjectInstalled(plan, dependencies, request, hooks);
    // Built or reused, the image must run the tests against the workspace: checked for this run's
    // repository, unless its build checked it (plan.checks).
    const failure = await timed(hooks, 'probes', () =>
      runProbes({
        docker: this.options.docker,
        store: this.options.store,
        home: join(this.options.home, 'env-builds'),
        passes: new KeptAnswers(join(this.options.home, 'probes-passed')),
        images: request.images,
        image: prepared.image,
        containerEnv: prepared.containerEnv,
        nodeModules: plan.nodeModules,
        snapshotId: request.snapshotId,
        probes: plan.probes,
        labels: { ...ownerLabels(request), [environmentLabels.kind]: 'probe' },
        signal: hooks.signal,
        cleanUpLater: (cleanUp) => this.cleanUpLater(cleanUp),
      }),
    );
    if (failure) throw new EnvironmentBuildError(explainProbeFailure(failure));
    return {
      ...prepared,
      ...(plan.nodeModules ? { nodeModules: plan.nodeModules } : {}),
      ...(plan.writableCopies ? { writableCopies: plan.writableCopies } : {}),
    };
  }

  /**
   * The plan's image on its basePlan's (a toolchain image that every repository asking the same
   * toolchain shares; itself on its own basePlan's, Debian's compilers), made first when it is not
   * there yet: the time of all is the build's.
   */
  private async onBaseImage(
    plan: EnvironmentPlan,
    request: Preparation,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment> {
    if (!plan.basePlan) return this.prepareImage(plan, request, hooks);
    const base = await this.onBaseImage(plan.basePlan, request, {
      ...hooks,
      // Every base below the plan's own image counts as its toolchain image.
      onPhase:
        hooks.onPhase &&
        ((phase, ms) => hooks.onPhase?.(phase.startsWith('toolchain image ') ? phase : `toolchain image ${phase}`, ms)),
    });
    const own = await this.prepareImage({ ...plan, baseImage: base.image, basePlan: undefined }, request, hooks);
    // The toolchain's notes are the base's (the Go release it fetched): the report names them first.
    const toolchain = [...(base.toolchain ?? []), ...(own.toolchain ?? [])];
    return {
      ...own,
      ...(toolchain.length ? { toolchain } : {}),
      ...(base.reused ? {} : { reused: false, buildMs: own.buildMs + base.buildMs }),
    };
  }

  /**
   * The project's own install (plan.projectInstall) on the image of its dependencies. It reads the
   * whole repository (a setup.py may read any file; the backend's metadata names the readme, the
   * version file, the extension's sources), so it is an image per snapshot; a thin one, made in
   * seconds on the dependencies' image, which every snapshot keeps reusing.
   */
  private async withProjectInstalled(
    plan: EnvironmentPlan,
    dependencies: PreparedEnvironment,
    request: Preparation,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment> {
    if (!plan.projectInstall) return dependencies;
    const warm = plan.projectInstall.warmup
      ? await this.withSourcesWarmup(plan.projectInstall.warmup, dependencies, request, hooks)
      : null;
    const baseImage = (warm ?? dependencies).image;
    const { previousBuild: folder } = plan.projectInstall;
    const repositoryBuild: RepositoryBuild | null =
      folder && request.repository
        ? { scope: request.owner.scope, repository: request.repository, dependencies: baseImage, folder }
        : null;
    const previous = repositoryBuild && (await this.previousBuilds.of(repositoryBuild));
    const installed = await this.prepareImage(
      {
        ...plan,
        baseImage,
        files: {},
        script: `${projectVersionVariable}=${safeProjectVersion(request.projectVersion)}\n${plan.projectInstall.script}`,
        needsRepository: true,
        // Python's install runs the venv's own pip; Go's warm-up needs nothing the image lacks.
        toolchains: [],
        toolchainNotes: [],
        projectInstall: undefined,
      },
      request,
      { ...hooks, onPhase: hooks.onPhase && ((phase, ms) => hooks.onPhase?.(`project ${phase}`, ms)) },
      previous && folder ? { image: previous, folder } : undefined,
    );
    if (repositoryBuild && !installed.reused) await this.previousBuilds.made(repositoryBuild, installed.image);
    const toolchain = [...(dependencies.toolchain ?? []), ...(installed.toolchain ?? [])];
    return {
      ...installed,
      reused: dependencies.reused && (warm?.reused ?? true) && installed.reused,
      buildMs: dependencies.buildMs + (warm?.buildMs ?? 0) + installed.buildMs,
      packages: installed.packages ?? dependencies.packages,
      toolchain: toolchain.length ? toolchain : undefined,
      installScripts: dependencies.installScripts,
    };
  }

  /**
   * The layer a warm-up makes from what the sources name (planTypes' SourcesWarmup), on the
   * dependencies' image; null when they name nothing. The sources are read only for a snapshot
   * whose summary is not kept yet.
   */
  private async withSourcesWarmup(
    warmup: SourcesWarmup,
    dependencies: PreparedEnvironment,
    request: Preparation,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment | null> {
    const summary = await timed(hooks, 'project sources', async () => {
      const key = createHash('sha256').update(`${warmup.name}\n${request.snapshotId}`).digest('hex');
      const kept = await this.sourceSummaries.get(key);
      if (kept !== null) return kept;
      const { store } = this.options;
      const found = warmup.summary(
        await readSourceFiles(store, (await store.getTree(request.snapshotId)).entries, warmup.reads),
      );
      await this.sourceSummaries.keep(key, found);
      return found;
    });
    const plan = warmup.plan(summary);
    if (!plan) return null;
    const { base, known } = await this.warmLayers.baseFor(dependencies.image, warmup.name, summary);
    const warm = await this.prepareImage({ ...plan, baseImage: base }, request, {
      ...hooks,
      onPhase: hooks.onPhase && ((phase, ms) => hooks.onPhase?.(`project warm-up ${phase}`, ms)),
    });
    if (!known)
      await this.warmLayers.made(dependencies.image, warmup.name, {
        summary,
        image: warm.image,
        base: base === dependencies.image ? null : base,
      });
    return warm;
  }

  private async prepareImage(
    plan: EnvironmentPlan,
    request: Preparation,
    hooks: BuildHooks,
    previousBuild?: PreviousBuild,
  ): Promise<PreparedEnvironment> {
    if (plan.dockerfile) return this.prepareDockerfile(plan, plan.dockerfile, request, hooks);
    const baseImage = plan.baseImage ?? suiteImage(this.options.baseImage, plan.debianSuite);
    // An image the run's input names is the user's choice; one from durable-debugger.json (an image or
    // setup plan) is the repository's. Other plans' bases are ours: a Python variant, this plan's own dependencies.
    if (
      (plan.kind === 'image' || plan.kind === 'custom') &&
      plan.baseImage &&
      plan.baseImage !== request.choice.image
    ) {
      const refusal = this.imagePolicy.refusal(plan.baseImage, repositoryConfigFile);
      if (refusal) throw new EnvironmentConfigError(refusal);
    }
    const base = await request.images.inspect(baseImage);
    if (!base && !plan.baseImage && plan.debianSuite)
      throw new EnvironmentBuildError(
        `The environment builds on the sandbox image from Debian ${plan.debianSuite} (${baseImage}), which is not built on this Docker engine: build it once, as root, with ${suiteSetupCommand(plan.debianSuite)}.`,
      );
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
    const toolchain = await timed(hooks, 'toolchain', () =>
      fetchToolchain(plan.toolchains, this.options.toolchainDir ?? defaultToolchainDir()),
    );
    const settings = await this.settingsFor(request, {
      installers: installersOf(plan),
      // Setup commands are the repository's code: the registries' credentials only when the user opts in.
      credentials: plan.kind !== 'custom' || (this.options.setupCredentials ?? false),
    });
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          base: base.Id,
          script: plan.script,
          files: plan.files,
          env: plan.containerEnv,
          toolchain: toolchain.names,
          repository: plan.needsRepository ? request.snapshotId : null,
          settings: settings.digest,
        }),
      )
      .digest('hex')
      .slice(0, 16);
    const image = `${environmentRepository}:${key}`;
    const toolchainNotes = [...toolchain.notes, ...(plan.toolchainNotes ?? [])];
    const described = (installScripts: InstallScriptProblem[], project?: string) => ({
      ...(toolchainNotes.length || project ? { toolchain: [...toolchainNotes, ...(project ? [project] : [])] } : {}),
      ...(installScripts.length ? { installScripts } : {}),
    });
    const reused = async (): Promise<PreparedEnvironment | null> => {
      const existing = await request.images.inspect(image);
      if (!existing) return null;
      const labelsOf = existing.Config.Labels ?? {};
      const packages = labelsOf[environmentLabels.packages];
      const project = labelsOf[environmentLabels.project];
      return {
        image,
        containerEnv: plan.containerEnv,
        kind: plan.kind,
        description: plan.description,
        reused: true,
        buildMs: 0,
        packages: packages ? Number(packages) : null,
        ...described(parseInstallScriptsLabel(labelsOf[environmentLabels.installScripts]), project),
      };
    };
    const found = await timed(hooks, 'lookup', reused);
    if (found) return found;
    return this.withBuildSlot(hooks, async () => {
      // A build that held the slot meanwhile may have made this very image.
      const madeMeanwhile = await reused();
      if (madeMeanwhile) return madeMeanwhile;
      if (toolchainNotes.length) hooks.onLine?.(`toolchain: ${toolchainNotes.join(', ')}`);
      const started = Date.now();
      const built = await this.build(plan, baseImage, image, toolchain, settings, request, hooks, previousBuild);
      return {
        image,
        containerEnv: plan.containerEnv,
        kind: plan.kind,
        description: plan.description,
        reused: false,
        buildMs: Date.now() - started,
        packages: built.packages,
        ...described(built.installScripts, built.project),
      };
    });
  }

  /**
   * The previous build's folder, from a stopped container of its image into the build's, before the
   * build starts. The worker passes the archive on and never unpacks it: it holds the repository's files.
   */
  private async putPreviousBuild(
    container: Docker.Container,
    previous: PreviousBuild,
    request: EnvironmentRequest,
  ): Promise<void> {
    const source = await this.options.docker.createContainer({
      name: `${buildContainerPrefix}previous-${randomBytes(3).toString('hex')}`,
      Image: previous.image,
      Cmd: ['true'],
      NetworkDisabled: true,
      Labels: ownerLabels(request),
      HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'none', Config: {} } },
    });
    try {
      const archive = await source.getArchive({ path: previous.folder });
      await container.putArchive(archive, { path: dirname(previous.folder) });
    } finally {
      await source.remove({ force: true }).catch(() => undefined);
    }
  }

  /** Runs a build in one of the host's build slots, saying so while it waits for one. */
  private async withBuildSlot<T>(hooks: BuildHooks, build: () => Promise<T>): Promise<T> {
    if (!this.options.buildSlot) return build();
    const waiting = setTimeout(() => hooks.onLine?.('waiting for an environment build slot on this host'), 1_000);
    let release: () => void;
    try {
      release = await this.options.buildSlot(hooks.signal);
    } finally {
      clearTimeout(waiting);
    }
    try {
      return await build();
    } finally {
      release();
    }
  }

  private get imagePolicy(): ImagePolicy {
    return this.options.imagePolicy ?? new ImagePolicy(this.options.baseImage);
  }

  private get confined(): boolean {
    return (this.options.network ?? 'registries') === 'registries';
  }

  /**
   * The host's package settings a build's installers need (pip's for Python, npm's for Node, both for
   * setup commands), read once per preparation.
   */
  private async settingsFor(
    request: Preparation,
    wanted: { installers: readonly Installer[]; credentials?: boolean },
  ): Promise<BuildSettings> {
    request.hostSettings ??= readHostPackageSettings(process.env);
    const host = await request.hostSettings;
    return buildSettings(host, { ...wanted, proxyUrl: this.confined ? `http://127.0.0.1:${proxyPort}` : null });
  }

  /**
   * The network a build runs on: the registry proxy, through a holder container whose network
   * the build joins; or, for the bench's comparison only, the host's. Refused connections become
   * lines of the build's output, so a failed install says what it tried to reach.
   */
  private async openNetwork(
    settings: BuildSettings,
    request: EnvironmentRequest,
    log: (line: string) => void,
    runsInstallers: boolean,
  ): Promise<{
    networkMode: string;
    refused: string[];
    returning(): void;
    close(reusable?: boolean): Promise<void>;
  }> {
    // A build that runs no installer (a toolchain image unpacking what the host fetched) gets no network at all.
    if (!runsInstallers || !this.confined)
      return {
        networkMode: runsInstallers ? 'host' : 'none',
        close: async () => undefined,
        returning: () => undefined,
        refused: [],
      };
    const { owner } = request;
    const lease = await this.networks.lease(
      settings.registries,
      settings.upstream,
      (target) => log(`durable-debugger: refused a connection to ${target}: builds reach only the package registries`),
      () =>
        openBuildNetwork({
          docker: this.options.docker,
          image: this.options.baseImage,
          // Short: a unix socket's path has at most 107 bytes. Under the builder's home, which Docker sees as the worker does.
          folder: join(this.options.home, `proxy-${randomBytes(4).toString('hex')}`),
          name: `${networkHolderPrefix}${randomBytes(4).toString('hex')}`,
          // Kept for this worker's next builds, so no run's: the reaper must not take it with the run that opened it.
          labels: {
            [labels.project]: projectLabel,
            [labels.host]: owner.host,
            [labels.scope]: owner.scope,
            [labels.created]: new Date().toISOString(),
            [environmentLabels.kind]: 'network',
          },
          allowed: settings.registries,
          upstream: settings.upstream,
        }),
    );
    return {
      networkMode: lease.networkMode,
      refused: lease.refused,
      returning: () => lease.returning(),
      close: (reusable) => lease.release(!!reusable),
    };
  }

  /** Waits for the builds' clean-ups and closes the build networks kept warm between builds (a worker that stops). */
  async close(): Promise<void> {
    this.imageEvents.close();
    await Promise.all([...this.cleanUps]);
    await this.networks.close();
  }

  /**
   * Removes a build's container (and its writable layer: seconds for a large install) after the
   * build has returned, then gives its network back, which is kept only once the container is gone.
   */
  private cleanUpLater(cleanUp: () => Promise<void>): void {
    const done: Promise<void> = cleanUp()
      .catch(() => undefined) // what is left carries its run's labels: the reaper removes it
      .finally(() => this.cleanUps.delete(done));
    this.cleanUps.add(done);
  }

  /**
   * The repository's own Dockerfile, built once (never pulling its FROM images, which must be
   * allowed) and then reused as the others are. Its RUN steps join the registry proxy's network;
   * they get the proxy as Docker's predefined proxy build arguments, which no image keeps, and
   * none of the host's package settings (Docker's builder could only bake them in).
   */
  private async prepareDockerfile(
    plan: EnvironmentPlan,
    dockerfile: NonNullable<EnvironmentPlan['dockerfile']>,
    request: Preparation,
    hooks: BuildHooks,
  ): Promise<PreparedEnvironment> {
    const bases: string[] = [];
    const named = [
      ...dockerfile.fromImages.map((image) => ({ image, where: 'FROM' })),
      ...dockerfile.copiedImages.map((image) => ({ image, where: 'COPY --from' })),
    ];
    for (const { image: from, where } of named) {
      const refusal = this.imagePolicy.refusal(from, `${repositoryDockerfile} (${where})`);
      if (refusal) throw new EnvironmentConfigError(refusal);
      const info = await request.images.inspect(from);
      if (!info) {
        throw new EnvironmentBuildError(
          `${repositoryDockerfile} builds ${where === 'FROM' ? 'FROM ' : 'with COPY --from='}${from}, which is not on this Docker engine: durable-debugger never pulls images. Pull or build it first (docker pull ${from}), or base the file on an image that is here, such as ${this.options.baseImage}.`,
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
      const info = await request.images.inspect(image);
      if (!info) throw new Error(`the environment's image ${image} is not on this Docker engine`);
      // The sandbox sets PATH itself: the image's own PATH (a venv, a toolchain) is passed on.
      const path = (info.Config.Env ?? []).find((variable) => variable.startsWith('PATH='));
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
    const exists = async () => (await request.images.inspect(image)) !== null;
    if (await exists()) return prepared(true, 0);
    return this.withBuildSlot(hooks, async () =>
      (await exists()) ? prepared(true, 0) : this.buildDockerfile(plan, dockerfile, image, request, hooks, prepared),
    );
  }

  private async buildDockerfile(
    plan: EnvironmentPlan,
    dockerfile: NonNullable<EnvironmentPlan['dockerfile']>,
    image: string,
    request: Preparation,
    hooks: BuildHooks,
    prepared: (reused: boolean, buildMs: number) => Promise<PreparedEnvironment>,
  ): Promise<PreparedEnvironment> {
    const { docker, store } = this.options;
    const started = Date.now();
    const buildsRoot = join(this.options.home, 'env-builds');
    await mkdir(buildsRoot, { recursive: true });
    const inputDir = await mkdtemp(join(buildsRoot, 'dockerfile-'));
    const lines: string[] = [];
    // Every installer's registries; of the settings, only the proxy (a Dockerfile gets no files of the host).
    const settings = await this.settingsFor(request, { installers });
    const redact = secretRedactor(settings.secrets);
    const log = (output: string) => {
      const line = redact(output);
      lines.push(line);
      if (lines.length > keptLines) lines.shift();
      hooks.onLine?.(line);
    };
    const network = await this.openNetwork(settings, request, log, true);
    // Docker's build API has no pids limit: RUN steps get it from a cgroup parent of their own.
    const cgroup = await openBuildCgroup(
      docker,
      `durable-debugger-build-${randomBytes(6).toString('hex')}`,
      buildPidsLimit,
    );
    if (cgroup.note) log(`durable-debugger: ${cgroup.note}`);
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
          networkmode: network.networkMode,
          // Docker's predefined proxy arguments: RUN steps see them, the image keeps none of them.
          buildargs: settings.variables.HTTPS_PROXY
            ? Object.fromEntries(
                ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'].map((name) => [
                  name,
                  settings.variables[name] as string,
                ]),
              )
            : {},
          // RUN steps are capped as the other builds are: memory without swap, CPU, and pids through a cgroup of their own.
          memory: buildMemoryBytes,
          memswap: buildMemoryBytes,
          cpuperiod: cpuPeriodMicroseconds,
          cpuquota: buildCpus * cpuPeriodMicroseconds,
          ...(cgroup.parent ? { cgroupparent: cgroup.parent } : {}),
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
              for (const line of (event.stream ?? event.error ?? '').split(/\r?\n/)) if (line.trim()) log(line);
            },
          );
        });
      } finally {
        hooks.signal?.removeEventListener('abort', abort);
      }
      if (hooks.signal?.aborted) throw new Error('the environment build was cancelled');
      if (failure !== null || !(await request.images.inspect(image))) {
        throw new EnvironmentBuildError(
          `Building ${repositoryDockerfile} failed (${failure ?? 'no image was made'}).${refusedNote(network.refused)} The build's last lines:\n${lines.join('\n')}`,
        );
      }
      return prepared(false, Date.now() - started);
    } finally {
      await network.close();
      await cgroup.close();
      await rm(inputDir, { recursive: true, force: true });
    }
  }

  private async build(
    plan: EnvironmentPlan,
    baseImage: string,
    image: string,
    toolchain: { dir: string; binds: string[] },
    settings: BuildSettings,
    request: EnvironmentRequest,
    hooks: BuildHooks,
    previousBuild?: PreviousBuild,
  ): Promise<{ packages: number | null; installScripts: InstallScriptProblem[]; project?: string }> {
    const { docker, store } = this.options;
    const buildsRoot = join(this.options.home, 'env-builds');
    await mkdir(buildsRoot, { recursive: true });
    const inputDir = await mkdtemp(join(buildsRoot, 'input-'));
    const lines: string[] = [];
    let packages: number | null = null;
    let installScripts: InstallScriptProblem[] = [];
    let project: string | undefined;
    const checks = new BuildChecksOutput();
    // Everything the build prints leaves it (the report's last lines, heartbeats): no secret it received goes along.
    const redact = secretRedactor(settings.secrets);
    const log = (output: string) => {
      const line = redact(output);
      if (checks.read(line)) return;
      const count = line.match(/^packages: (\d+)$/);
      if (count) packages = Number(count[1]);
      const installed = line.match(/^project: (.{1,300})$/);
      if (installed) project = installed[1];
      const scripts = parseInstallScriptsLine(line);
      if (scripts) {
        installScripts = scripts.problems;
        return; // the runner's summary is for the report; its own lines said it all
      }
      lines.push(line);
      if (lines.length > keptLines) lines.shift();
      hooks.onLine?.(line);
    };
    let container: Docker.Container | undefined;
    let network: Awaited<ReturnType<EnvironmentBuilder['openNetwork']>> | undefined;
    /** The build container has exited: the first process of its own PID namespace gone, the kernel killed the rest. */
    let exited = false;
    let phaseStarted = performance.now();
    /** Ends the phase under way, timed from the end of the one before. */
    const phaseDone = (phase: BuildPhase) => {
      const now = performance.now();
      hooks.onPhase?.(phase, now - phaseStarted);
      phaseStarted = now;
    };
    try {
      // Folders of their own: the plan's input files and the settings.
      await mkdir(join(inputDir, 'input'));
      for (const [path, text] of Object.entries(plan.files)) {
        await mkdir(dirname(join(inputDir, 'input', path)), { recursive: true });
        await writeFile(join(inputDir, 'input', path), inputFileContent(path, text));
      }
      // The settings folder: mounted read-only, so nothing of it is in the committed image.
      const settingsDir = join(inputDir, 'settings');
      await mkdir(settingsDir, { recursive: true });
      for (const [name, text] of Object.entries(settings.files)) await writeFile(join(settingsDir, name), text);
      // Mount points of the find-links folders exist already: the read-only folder cannot get new ones.
      for (const name of Object.keys(settings.folders)) await mkdir(join(settingsDir, name));
      // Inside the container the mount shows this folder's own mode: readable by any user a setup command switches to.
      await chmod(settingsDir, 0o755);
      const binds = [
        `${inputDir}/input:/env-input:ro`,
        `${toolchain.dir}:/toolchain:ro`,
        ...toolchain.binds,
        `${settingsDir}:${settingsMountPoint}:ro`,
        ...Object.entries(settings.folders).map(([name, path]) => `${path}:${settingsMountPoint}/${name}:ro`),
        // The registries' routes (registryRoutes.ts): a file of this build's own, read-only, never the
        // holder's, which builds that share the holder's network would share.
        ...(settings.files.hosts ? [`${join(settingsDir, 'hosts')}:/etc/hosts:ro`] : []),
      ];
      if (plan.needsRepository) {
        const copy = new WorkspaceFolder(join(inputDir, 'workspace'), store, { uid: 0, gid: 0 });
        await copy.rebuild(request.snapshotId, []);
        binds.push(`${copy.path}:/workspace:rw`);
      }
      phaseDone('inputs');
      network = await this.openNetwork(settings, request, log, installersOf(plan).length > 0);
      phaseDone('network');
      const [repo, tag] = image.split(':') as [string, string];
      container = await docker.createContainer({
        name: `${buildContainerPrefix}${tag}-${randomBytes(3).toString('hex')}`,
        Image: baseImage,
        // The settings are exported by the shell, never the container's Env: `docker commit` keeps that.
        Cmd: ['sh', '-c', `. ${settingsMountPoint}/env.sh\n${plan.script}`],
        User: '0:0',
        WorkingDir: '/',
        Env: buildContainerEnv,
        Labels: {
          ...ownerLabels(request),
          [environmentLabels.kind]: plan.kind,
          [environmentLabels.description]: plan.description,
        },
        HostConfig: {
          NetworkMode: network.networkMode,
          // Root owns what it installs, and nothing more: no raw sockets, devices, chroot, setuid binaries.
          CapDrop: ['ALL'],
          CapAdd: buildCapabilities,
          SecurityOpt: ['no-new-privileges'],
          Binds: binds,
          Memory: buildMemoryBytes,
          NanoCpus: buildCpus * 1e9,
          PidsLimit: buildPidsLimit,
          LogConfig: { Type: 'none', Config: {} },
        },
      });
      let partial = '';
      const onText = (text: string) => {
        partial += text;
        const parts = partial.split(/\r?\n|\r/);
        partial = parts.pop() ?? '';
        for (const line of parts) if (line.trim()) log(line);
      };
      if (previousBuild) {
        // Only time is lost without it: the build then starts from nothing, as a first one does.
        await this.putPreviousBuild(container, previousBuild, request).catch((error: unknown) =>
          log(
            `durable-debugger: the previous snapshot's ${previousBuild.folder} could not be copied (${(error as Error).message.slice(0, 200)}): building from the start`,
          ),
        );
        phaseDone('previous build');
      }
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const allOutput = outputEnd(stream);
      const merged = new LineMergedOutput((chunk) => onText(chunk.toString('utf8')));
      container.modem.demuxStream(stream, merged.stdout, merged.stderr);
      await container.start();
      phaseDone('container start');
      const abort = () => void container?.kill().catch(() => undefined);
      hooks.signal?.addEventListener('abort', abort);
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      exited = true;
      hooks.signal?.removeEventListener('abort', abort);
      await allOutput();
      merged.flush();
      onText('\n');
      phaseDone('install');
      if (hooks.signal?.aborted) throw new Error('the environment build was cancelled');
      if (StatusCode !== 0) {
        const failed = checks.failure(plan.checks ?? [], StatusCode);
        if (failed) throw new EnvironmentBuildError(explainProbeFailure(failed));
        throw new EnvironmentBuildError(
          explainInstallFailure(plan.description, StatusCode, lines) + refusedNote(network.refused),
        );
      }
      await container.commit({
        _query: { container: container.id, repo, tag, comment: plan.description },
        _body: {
          Cmd: ['sleep', 'infinity'],
          Labels: {
            // The build container's owner labels, emptied: Docker would copy them into the image, and
            // every container made from it (`docker run` of the image) would pass for that run's
            // sandbox, which the reaper removes once the run is closed, and name another user's run.
            ...Object.fromEntries(Object.keys(ownerLabels(request)).map((label) => [label, ''])),
            ...(packages === null ? {} : { [environmentLabels.packages]: String(packages) }),
            ...(installScripts.length ? { [environmentLabels.installScripts]: JSON.stringify(installScripts) } : {}),
            ...(project ? { [environmentLabels.project]: project } : {}),
          },
        },
      });
      phaseDone('commit');
      return { packages, installScripts, project };
    } finally {
      const built = container;
      const leased = network;
      // Kept for the next build once no process of this one is left in the network: at once when the
      // container has exited (the next build, such as the project's own install, need not wait for its
      // removal), else once it is removed.
      if (exited) await leased?.close(true);
      else leased?.returning();
      this.cleanUpLater(async () => {
        try {
          if (built) await removeContainer(docker, built.id);
          if (!exited) await leased?.close(true);
        } catch (error) {
          if (!exited) await leased?.close(false);
          throw error;
        } finally {
          // The setup ran as root on the repository's copy: a worker that is not root needs root to remove it.
          await removeFolder(inputDir, { docker, image: baseImage });
        }
      });
      phaseDone('clean-up');
    }
  }
}

/** The labels that tie a container of the environment step to its run: the reaper removes one a crashed worker left behind. */
/** The installers a build runs: the plan's own; setup commands may run any. */
function installersOf(plan: EnvironmentPlan): readonly Installer[] {
  return plan.kind === 'custom' ? installers : (plan.installers ?? []);
}

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

const buildMemoryBytes = 4096 * 1024 * 1024;
/** A build gets what a sandbox gets by default: an install cannot take every core of the host. */
const buildCpus = 2;
const cpuPeriodMicroseconds = 100_000;
const buildPidsLimit = 4096;

/** For a failed build: the hosts it tried to reach that are no registries. */
function refusedNote(refused: string[]): string {
  if (refused.length === 0) return '';
  const hosts = [...new Set(refused)];
  return ` The build tried to reach ${hosts.slice(0, 5).join(', ')}${hosts.length > 5 ? ', …' : ''}, which ${hosts.length === 1 ? 'is not a package registry' : 'are not package registries'}: builds reach only the registries named by this machine's package settings (pip config, .npmrc; see docs/environments.md).`;
}
