// The file a version plugin writes into the source tree as the project installs (setuptools-scm's
// `version_file` or `write_to`, hatch-vcs's build hook `version-file`), which the package imports
// (`from ._version import version`). Git ignores it, so no snapshot has it: in CI it is there because
// `pip install -e .` wrote it into the checkout. The project's install here writes it into the image's
// copy of the repository, which the sandbox's /workspace hides; so the install keeps a copy aside,
// and each test run puts it into /workspace where the workspace has none.
import { parse as parseToml } from 'smol-toml';
import { valueAt } from './tomlPath.js';
import { isPlainPath } from '../plainPath.js';

/** Where the project's install keeps the version files it wrote, at their paths in the repository. */
export const versionFilesFolder = '/opt/durable-debugger-version-files';

/** The version files the project's version plugin writes, as its pyproject.toml or setup.py names them. */
export function versionFilesOf(manifests: Record<string, string>): string[] {
  const named: unknown[] = [];
  try {
    const pyproject: unknown = parseToml(manifests['pyproject.toml'] ?? '');
    named.push(
      valueAt(pyproject, 'tool', 'setuptools_scm', 'version_file'),
      valueAt(pyproject, 'tool', 'setuptools_scm', 'write_to'),
      valueAt(pyproject, 'tool', 'hatch', 'build', 'hooks', 'vcs', 'version-file'),
    );
  } catch {
    // an unreadable pyproject.toml is reported by the planner
  }
  // setup.py's use_scm_version={"write_to": "..."} (or version_file).
  for (const match of (manifests['setup.py'] ?? '').matchAll(
    /["']?\b(?:write_to|version_file)["']?\s*[:=]\s*["']([^"']+)["']/g,
  ))
    named.push(match[1]);
  const paths = named.filter((path): path is string => typeof path === 'string' && isPlainPath(path));
  return [...new Set(paths)];
}

/** The install's lines that keep each version file it wrote (run in /workspace). */
export function keepVersionFiles(paths: string[]): string[] {
  return paths.map(
    (path) =>
      `if [ -f '${path}' ]; then mkdir -p "${versionFilesFolder}/$(dirname '${path}')" && cp '${path}' '${versionFilesFolder}/${path}' && chmod -R a+rX ${versionFilesFolder}; fi`,
  );
}

/** The step before each test run: the kept version files, where the workspace has none of its own. */
export const restoreVersionFiles = `cp -rn ${versionFilesFolder}/. . 2>/dev/null || true`;
