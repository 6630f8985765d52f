// The repository's own packages besides the project at its root that a lock installs from folders
// of the repository: a uv workspace's members (`[tool.uv.workspace] members`, each `source = {
// editable = "packages/core" }` in uv.lock) and path dependencies (uv's `{ directory = … }`,
// Poetry's `[package.source] type = "directory"`). `uv sync` and `poetry install` in CI install them,
// so the tests import them by name and read their metadata; the build installs them editable, from
// /workspace, with the project's own install. The lock is the repository's, so untrusted: only
// folders inside the repository that hold a package count.
import { posix } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { shellQuote } from '../../shellQuote.js';

export interface LocalPackage {
  /** The distribution's name, as the lock spells it. */
  name: string;
  /** Its folder, relative to the repository's root. */
  folder: string;
}

/** At most this many: a workspace of hundreds of members is installed as far as this goes. */
const maxLocalPackages = 100;

/** The local packages of the lock other than the root's project, in the lock's order; none without a readable lock. */
export function lockedLocalPackages(
  lockFile: 'uv.lock' | 'poetry.lock',
  manifests: Record<string, string>,
  files: readonly string[],
): LocalPackage[] {
  const lock = manifests[lockFile];
  if (lock === undefined) return [];
  let packages: unknown;
  try {
    packages = (parseToml(lock) as { package?: unknown }).package;
  } catch {
    return []; // the lock's tool reports a lock it cannot read
  }
  if (!Array.isArray(packages)) return [];
  const present = new Set(files);
  const found: LocalPackage[] = [];
  for (const entry of packages as Array<{ name?: unknown; source?: Record<string, unknown> }>) {
    const source = entry?.source;
    const path =
      lockFile === 'uv.lock'
        ? (source?.editable ?? source?.directory)
        : source?.type === 'directory'
          ? source.url
          : undefined;
    if (typeof entry?.name !== 'string' || typeof path !== 'string') continue;
    const folder = posix.normalize(path.replace(/\\/g, '/')).replace(/\/+$/, '');
    if (folder === '.' || folder.startsWith('../') || folder === '..' || posix.isAbsolute(folder)) continue;
    if (!present.has(`${folder}/pyproject.toml`) && !present.has(`${folder}/setup.py`)) continue;
    if (found.some((known) => known.folder === folder)) continue;
    found.push({ name: entry.name, folder });
    if (found.length === maxLocalPackages) break;
  }
  return found;
}

/**
 * The shell lines that install the local packages editable in /workspace (their dependencies are
 * installed already) and leave in `$members` what became of each, for the build's `project:` line:
 * one pip for all, and one per package only when that fails, so that one broken member leaves the
 * others installed.
 */
export function localPackagesInstall(packages: LocalPackage[], pipInstall: string, python: string): string[] {
  if (packages.length === 0) return [];
  const folders = packages.map((local) => `--editable ${shellQuote(`./${local.folder}`)}`);
  const names = packages.map((local) => shellQuote(local.name)).join(' ');
  return [
    `if ! ${pipInstall} --no-deps ${folders.join(' ')}; then`,
    ...packages.map((local) => `  ${pipInstall} --no-deps --editable ${shellQuote(`./${local.folder}`)} || true`),
    'fi',
    // Each by its metadata: "units-core 0.4.1", or "units-cli (its editable install failed)".
    `members="$(${python} -c 'import importlib.metadata as m, sys
def state(name):
    try:
        return f"{name} {m.version(name)}"
    except Exception:
        return f"{name} (its editable install failed)"
print(", ".join(state(name) for name in sys.argv[1:]))' ${names})"`,
  ];
}
