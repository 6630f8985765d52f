// What a Rust repository's manifests say: the packages and workspace members (Cargo.toml files),
// the lockfile, the toolchain file (rust-toolchain.toml or the older rust-toolchain), and the
// oldest Rust its packages allow (rust-version, edition).
import { parse } from 'smol-toml';

export const toolchainFiles = ['rust-toolchain.toml', 'rust-toolchain'] as const;

export interface RustProject {
  /** Folders (relative, '' for the root) whose Cargo.toml is read: the root and every package below it. */
  packageFolders: string[];
  /** The packages' names (Cargo.toml [package] name) by folder. */
  names: Record<string, string>;
  workspace: boolean;
  lockfile: boolean;
  /** Cargo.lock's `version = N` (3, 4); undefined for the older formats that name none. */
  lockfileVersion?: number;
  /** rust-toolchain.toml [toolchain] channel, or rust-toolchain's line: where it came from, and what it says. */
  channel?: { file: string; channel: string };
  /** The highest rust-version of the packages (the oldest Rust all of them allow). */
  rustVersion?: string;
  /** The newest edition the packages use. */
  edition?: string;
}

/** A Cargo.toml of the repository: the root's, or a package's below it (not in target/ or a vendored copy). */
export function isCargoManifest(path: string): boolean {
  const parts = path.split('/');
  return (
    parts.at(-1) === 'Cargo.toml' &&
    parts.length <= 6 &&
    !parts.some((part) => part === 'target' || part === 'vendor' || part.startsWith('.'))
  );
}

function tableOf(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function parsed(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined) return null;
  try {
    return parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export function readRustProject(files: string[], manifests: Record<string, string>): RustProject | null {
  const root = parsed(manifests['Cargo.toml']);
  if (!root) return null;
  const rootWorkspace = tableOf(root.workspace);
  const workspacePackage = tableOf(rootWorkspace.package);
  const packageFolders = files
    .filter((path) => isCargoManifest(path) && manifests[path] !== undefined)
    .map((path) => path.slice(0, -'Cargo.toml'.length).replace(/\/$/, ''))
    .sort();
  const names: Record<string, string> = {};
  let rustVersion: string | undefined;
  let edition: string | undefined;
  for (const folder of packageFolders) {
    const manifest = parsed(manifests[folder ? `${folder}/Cargo.toml` : 'Cargo.toml']);
    const pkg = tableOf(manifest?.package);
    if (typeof pkg.name === 'string') names[folder] = pkg.name;
    // `rust-version.workspace = true` inherits the workspace's.
    const inherited = (field: string) => {
      const value = pkg[field];
      return tableOf(value).workspace === true ? workspacePackage[field] : value;
    };
    const version = inherited('rust-version');
    if (typeof version === 'string' && /^\d+(\.\d+){0,2}$/.test(version))
      if (!rustVersion || compareVersions(version, rustVersion) > 0) rustVersion = version;
    const packageEdition = inherited('edition');
    if (typeof packageEdition === 'string' && /^\d{4}$/.test(packageEdition))
      if (!edition || packageEdition > edition) edition = packageEdition;
  }
  return {
    packageFolders,
    names,
    workspace: root.workspace !== undefined,
    lockfile: manifests['Cargo.lock'] !== undefined,
    lockfileVersion: lockfileVersion(manifests['Cargo.lock']),
    channel: toolchainChannel(manifests),
    rustVersion,
    edition,
  };
}

/** The top-level `version = N` of a Cargo.lock. */
function lockfileVersion(text: string | undefined): number | undefined {
  const version = text?.match(/^version\s*=\s*(\d+)\s*$/m)?.[1];
  return version ? Number(version) : undefined;
}

/** rust-toolchain.toml's `[toolchain] channel`, else the older rust-toolchain file (a line, or the same TOML). */
function toolchainChannel(manifests: Record<string, string>): RustProject['channel'] {
  for (const file of toolchainFiles) {
    const text = manifests[file];
    if (text === undefined) continue;
    const channel = tableOf(parsed(text)?.toolchain).channel;
    if (typeof channel === 'string' && channel.trim()) return { file, channel: channel.trim() };
    const line = text.trim();
    if (/^[\w.-]+$/.test(line)) return { file, channel: line };
  }
  return undefined;
}

/** -1, 0 or 1 as a is older, the same or newer, by numbers ("1.70" = "1.70.0"). */
export function compareVersions(a: string, b: string): number {
  const numbers = (version: string) =>
    version
      .split(/[.-]/)
      .slice(0, 3)
      .map((part) => Number(part) || 0);
  const [x, y] = [numbers(a), numbers(b)];
  for (let index = 0; index < 3; index++) {
    const difference = (x[index] ?? 0) - (y[index] ?? 0);
    if (difference) return Math.sign(difference);
  }
  return 0;
}
