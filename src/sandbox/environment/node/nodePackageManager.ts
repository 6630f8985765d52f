// The package manager that installs a Node repository, in the version that wrote its lockfile:
// the repository's own release (.yarnrc.yml `yarnPath`, .yarnrc `yarn-path`), else package.json
// `packageManager` (corepack's rules: name@version, optionally +algorithm.hash) or
// `devEngines.packageManager`, else the lockfile's kind and format. Bun is a binary in an npm
// package (@oven/bun-linux-x64), packed as the others are. Pure.
import semver from 'semver';
import { EnvironmentConfigError, environmentPaths, type PackedTool } from '../planTypes.js';
import { excerpt, quoted } from '../excerpt.js';

export type ManagerName = 'npm' | 'pnpm' | 'yarn' | 'bun';

export interface NodePackageManager {
  name: ManagerName;
  /** Yarn 2 and later (berry): another command line and lockfile than yarn 1. */
  berry: boolean;
  lockfile?: string;
  /** Packed from the registry and unpacked into /usr/local (npm itself: only when the repository names a version). */
  tool?: ManagerTool;
  /** Bun beside another manager, when the test script runs it (as CI's setup-bun beside `npm ci`). */
  testRunner?: ManagerTool;
  /** The repository's own release of the manager (yarnPath), run by node. */
  release?: string;
  /** The install command, as its users type it. */
  install: string;
  /** What turns dependencies' install scripts off, for the install again when it failed with them (they then run one by one). */
  scriptsOff: string;
  /** The folders holding one installed package each, as shell globs: what the build counts (links left out). */
  packageFolders: string;
  env: string[];
  /** Repository files the manager reads besides package.json and the lockfile (settings, its release, patches). */
  files: string[];
  /** For people: "yarn 4.4.1 (.yarnrc.yml yarnPath .yarn/releases/yarn-4.4.1.cjs)"; absent when nothing was chosen. */
  note?: string;
}

/** A manager packed from the registry and unpacked into /usr/local: its command, and its bin file in the package. */
export type ManagerTool = PackedTool & { command: string; bin: string };

const lockfiles: Record<ManagerName, string[]> = {
  npm: ['package-lock.json', 'npm-shrinkwrap.json'],
  pnpm: ['pnpm-lock.yaml'],
  yarn: ['yarn.lock'],
  // bun.lock (text) since Bun 1.2; bun.lockb (binary) before, which later releases still read.
  bun: ['bun.lock', 'bun.lockb'],
};

/** The managers this tool runs: the names `packageManager` and `devEngines` may give. */
const managerNames: readonly string[] = Object.keys(lockfiles);

/** pnpm's hooks (readPackage, afterAllResolved), which a lockfile made with them records by checksum. */
const pnpmfiles = ['.pnpmfile.cjs', '.pnpmfile.mjs'];

/** A patch in patches/, where `pnpm patch-commit` and patch-package write them. */
export const isPatchFile = (path: string): boolean => /^patches\/[^/]+\.patch$/.test(path);

/** The manager's settings and files a repository may have besides its manifests. */
export function isPackageManagerFile(path: string): boolean {
  return (
    ['.npmrc', '.yarnrc', '.yarnrc.yml', 'bunfig.toml', ...pnpmfiles].includes(path) ||
    /^\.yarn\/(releases|plugins|patches)\/./.test(path) ||
    isPatchFile(path)
  );
}

/**
 * pnpm's files: pnpm-workspace.yaml, which holds pnpm 10's settings even without a workspace (what
 * `pnpm patch-commit` and `pnpm approve-builds` write: patchedDependencies, onlyBuiltDependencies,
 * catalogs), its hooks file, and the patches pnpm-workspace.yaml, the lockfile or package.json name:
 * a frozen install refuses a lockfile whose patches or hooks are not the ones it was made with.
 */
function pnpmFiles(manifests: Record<string, string>): string[] {
  const naming = [manifests['pnpm-workspace.yaml'], manifests['pnpm-lock.yaml'], manifests['package.json']].join('\n');
  const patches = Object.keys(manifests).filter((path) => isPatchFile(path) && naming.includes(path));
  return [...['pnpm-workspace.yaml', ...pnpmfiles].filter((path) => manifests[path] !== undefined), ...patches.sort()];
}

interface Requested {
  name: ManagerName;
  /** An exact version (packageManager) or a range (devEngines). */
  version: string;
  hash?: { algorithm: string; hex: string };
  where: string;
}

/** package.json `packageManager` as corepack reads it, or `devEngines.packageManager`; null when neither names one. */
export function requestedPackageManager(manifest: Record<string, unknown>): Requested | null {
  const field = manifest.packageManager;
  if (typeof field === 'string' && field.trim()) {
    const match = field.trim().match(/^(@?[^@\s]+)@([^+\s]+)(?:\+(sha1|sha224|sha256|sha512)\.([0-9a-f]+))?$/);
    if (!match)
      throw new EnvironmentConfigError(
        `package.json packageManager ${quoted(field)} is not name@version (optionally +sha512.<hash>), as corepack reads it`,
      );
    const [, name, version, algorithm, hex] = match as [string, string, string, string?, string?];
    if (!managerNames.includes(name)) return null; // deno...: installed as npm would
    if (!semver.valid(version))
      throw new EnvironmentConfigError(
        `package.json packageManager ${quoted(field)} must name an exact version (corepack accepts no range or URL here)`,
      );
    return {
      name: name as ManagerName,
      version,
      ...(algorithm && hex ? { hash: { algorithm, hex } } : {}),
      where: 'packageManager',
    };
  }
  const devEngines = manifest.devEngines as Record<string, unknown> | undefined;
  const entries = devEngines?.packageManager;
  const entry = (Array.isArray(entries) ? entries : [entries]).find(
    (each): each is { name: string; version?: unknown } =>
      !!each && typeof each === 'object' && managerNames.includes((each as { name?: string }).name ?? ''),
  );
  if (!entry) return null;
  const version = typeof entry.version === 'string' && semver.validRange(entry.version) ? entry.version : '*';
  return { name: entry.name as ManagerName, version, where: 'devEngines.packageManager' };
}

/** The yarn release the repository commits and points its settings at, if any. */
function yarnRelease(manifests: Record<string, string>): { path: string; where: string; berry: boolean } | null {
  const berrySetting = manifests['.yarnrc.yml']?.match(/^yarnPath:\s*["']?([^"'#\r\n]+?)["']?\s*(#.*)?$/m)?.[1];
  const classicSetting = manifests['.yarnrc']?.match(/^yarn-path\s+["']?([^"'#\r\n]+?)["']?\s*$/m)?.[1];
  const setting = berrySetting ?? classicSetting;
  if (!setting) return null;
  const where = berrySetting ? '.yarnrc.yml yarnPath' : '.yarnrc yarn-path';
  const path = setting.trim().replace(/^\.\//, '');
  if (path.startsWith('/') || path.split('/').includes('..') || !/^[\w@.+/-]+$/.test(path))
    throw new EnvironmentConfigError(
      `${where} ${quoted(setting)} must be a plain relative path inside the repository (letters, digits, . _ - + @ /)`,
    );
  if (manifests[path] === undefined)
    throw new EnvironmentConfigError(
      `${where} names ${excerpt(path, 200)}, which the repository does not have: commit the release or remove the setting`,
    );
  // Only yarn 2 and later read .yarnrc.yml; yarn 1 reads .yarnrc.
  return { path, where, berry: berrySetting !== undefined };
}

/** The yarn 2+ major whose releases write this lockfile format (__metadata.version), as a range of @yarnpkg/cli-dist. */
function berryForLockfile(lockfile: string): string {
  const version = Number(lockfile.match(/^__metadata:\s*\n\s+version:\s*(\d+)/m)?.[1] ?? 0);
  // Measured: 4 is written by yarn 2, 6 by yarn 3, 8 by yarn 4.0 to 4.13, 9 by 4.14, 10 by 4.15 and later.
  if (version <= 4) return '2';
  if (version <= 6) return '3';
  if (version <= 8) return '>=4.0.0 <4.14.0';
  if (version === 9) return '4.14';
  return '4';
}

/** npm's and yarn's node_modules: a folder per package, scoped ones one level down. */
const hoistedPackageFolders = 'node_modules/[!@.]* node_modules/@*/*';

const berryEnv = ['YARN_NODE_LINKER=node-modules', 'YARN_ENABLE_TELEMETRY=0', 'YARN_ENABLE_GLOBAL_CACHE=0'];

export function nodePackageManager(
  manifests: Record<string, string>,
  cpu: { avx2: boolean } = { avx2: true },
): NodePackageManager {
  const manifest = packageJson(manifests);
  const manager = chosenManager(manifest, manifests, cpu);
  if (manager.name === 'bun' || !testScriptRunsBun(manifest)) return manager;
  return { ...manager, testRunner: bunPackage(cpu, '1', 'the test script runs bun') };
}

function packageJson(manifests: Record<string, string>): Record<string, unknown> {
  try {
    return JSON.parse(manifests['package.json'] ?? '{}') as Record<string, unknown>;
  } catch {
    return {}; // planNode reads package.json first; a bad one never gets here.
  }
}

const testScriptRunsBun = (manifest: Record<string, unknown>) =>
  /(^|[\s;&|(])bunx? /.test(scriptText(manifest, 'test'));

/**
 * Bun's binary in its package for this platform, which the `bun` package's install script copies
 * out (the baseline build on a CPU without AVX2). No hash: corepack hashes no Bun, and a
 * packageManager hash would name the `bun` package, not this one.
 */
function bunPackage(cpu: { avx2: boolean }, version: string, reason?: string): ManagerTool {
  const platform = cpu.avx2 ? 'linux-x64' : 'linux-x64-baseline';
  return {
    spec: `@oven/bun-${platform}@${version}`,
    as: 'bun.tgz',
    label: 'bun',
    ...(reason ? { reason } : {}),
    command: 'bun',
    bin: 'bin/bun',
  };
}

function chosenManager(
  manifest: Record<string, unknown>,
  manifests: Record<string, string>,
  cpu: { avx2: boolean },
): NodePackageManager {
  const requested = requestedPackageManager(manifest);
  const release = yarnRelease(manifests);
  // A test script that runs `bun test` (or any bun command) makes it a Bun repository when it has Bun's
  // lockfile beside another's, or none.
  const byScripts = testScriptRunsBun(manifest) ? 'bun' : undefined;
  const byLockfile = (
    byScripts ? (['bun', 'npm', 'pnpm', 'yarn'] as const) : (['npm', 'pnpm', 'yarn', 'bun'] as const)
  ).find((name) => lockfiles[name].some((file) => manifests[file] !== undefined));
  const name: ManagerName = release ? 'yarn' : (requested?.name ?? byLockfile ?? byScripts ?? 'npm');
  const lockfile = lockfiles[name].find((file) => manifests[file] !== undefined);
  const settings = ['.npmrc', '.yarnrc', '.yarnrc.yml'].filter((file) => manifests[file] !== undefined);
  const reason = requested ? `from ${requested.where}` : undefined;
  const versionOf = (fallback: string) => (requested?.name === name ? requested.version : fallback);
  const tool = (spec: string, command: string, bin: string) => ({
    spec,
    as: `${command}.tgz`,
    label: command,
    ...(requested?.name === name ? { reason } : {}),
    ...(requested?.name === name && requested.hash ? { hash: requested.hash } : {}),
    command,
    bin,
  });

  if (name === 'npm') {
    return {
      name,
      berry: false,
      lockfile,
      ...(requested?.name === 'npm' ? { tool: tool(`npm@${requested.version}`, 'npm', 'bin/npm-cli.js') } : {}),
      install: lockfile ? 'npm ci' : 'npm install',
      scriptsOff: '--ignore-scripts',
      packageFolders: hoistedPackageFolders,
      env: [],
      files: settings.filter((file) => file === '.npmrc'),
    };
  }
  if (name === 'bun') {
    return {
      name,
      berry: false,
      lockfile,
      tool: bunPackage(cpu, versionOf('1'), reason),
      install: lockfile ? 'bun install --frozen-lockfile' : 'bun install',
      scriptsOff: '--ignore-scripts',
      // Bun 1.3's isolated linker (a workspace's default) keeps each package once in node_modules/.bun.
      packageFolders: `node_modules/.bun/*@* ${hoistedPackageFolders}`,
      // Bun's cache goes with the other downloads (its install hard-links or copies out of it).
      env: [`BUN_INSTALL_CACHE_DIR=${environmentPaths.downloads}/bun`],
      files: ['.npmrc', 'bunfig.toml'].filter((file) => manifests[file] !== undefined),
    };
  }
  if (name === 'pnpm') {
    const lockVersion = Number(manifests['pnpm-lock.yaml']?.match(/^lockfileVersion:\s*'?(\d+)/m)?.[1] ?? 9);
    const major = lockVersion >= 9 ? '9' : lockVersion >= 6 ? '8' : '7';
    return {
      name,
      berry: false,
      lockfile,
      tool: tool(`pnpm@${versionOf(major)}`, 'pnpm', 'bin/pnpm.cjs'),
      install: lockfile ? 'pnpm install --frozen-lockfile' : 'pnpm install',
      scriptsOff: '--ignore-scripts',
      // node_modules holds only the root's own dependencies (none, in many workspaces); the virtual store each package once.
      packageFolders: 'node_modules/.pnpm/*@*/',
      env: [],
      files: [...settings.filter((file) => file === '.npmrc'), ...pnpmFiles(manifests)],
    };
  }

  const lockText = lockfile ? (manifests[lockfile] as string) : '';
  const berry = release
    ? release.berry
    : requested?.name === 'yarn'
      ? semver.major(semver.minVersion(requested.version) ?? '1.0.0') >= 2
      : /^__metadata:/m.test(lockText);
  const yarnFiles = [
    ...settings.filter((file) => file !== '.npmrc' || !berry),
    ...Object.keys(manifests).filter((path) => /^\.yarn\/(plugins|patches)\//.test(path)),
    ...(release ? [release.path] : []),
  ];
  const common = {
    name,
    berry,
    lockfile,
    install: berry
      ? `yarn install${lockfile ? ' --immutable' : ''}`
      : `yarn install${lockfile ? ' --frozen-lockfile' : ''} --non-interactive`,
    // Yarn 2+ resolves and links without building; `yarn rebuild` builds afterwards.
    scriptsOff: berry ? '--mode=skip-build' : '--ignore-scripts',
    packageFolders: hoistedPackageFolders,
    env: berry ? berryEnv : [],
    files: yarnFiles,
  };
  if (release) {
    const version = release.path.match(/yarn-(\d+\.\d+\.\d+[^/]*?)\.c?js$/)?.[1];
    return {
      ...common,
      release: release.path,
      note: `yarn${version ? ` ${version}` : ''} (the repository's own release, ${release.where} ${release.path})`,
    };
  }
  return {
    ...common,
    tool: berry
      ? tool(`@yarnpkg/cli-dist@${versionOf(berryForLockfile(lockText))}`, 'yarn', 'bin/yarn.js')
      : tool(`yarn@${versionOf('1')}`, 'yarn', 'bin/yarn.js'),
  };
}

/** package.json's script of that name, or ''. */
export function scriptText(manifest: Record<string, unknown>, name: string): string {
  const scripts = (manifest.scripts ?? {}) as Record<string, unknown>;
  return typeof scripts[name] === 'string' ? (scripts[name] as string) : '';
}
