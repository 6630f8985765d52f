// A Python project's C extensions (setup.py's Extension(...) and ext_modules, pyproject's
// [tool.setuptools] ext-modules): the build gets a C compiler and Python's headers from Debian,
// the venv the backend's build requirements, and each test run builds the extensions in place
// (setup.py build_ext --inplace), in the sandbox's own /workspace, where the tests import them.
// A build in the environment's copy of the repository would never reach the workspace.
import { parse as parseToml } from 'smol-toml';

/** Debian packages a C extension needs to compile against the image's own Python. */
export const cExtensionPackages = ['gcc', 'libc6-dev', 'python3-dev'];

/** The per-run build step: only extensions whose sources changed are compiled again (setuptools compares times). */
export const buildExtensionsInPlace = 'python3 setup.py build_ext --inplace';

/** Whether the project declares C extensions that setup.py builds. */
export function hasCExtensions(manifests: Record<string, string>): boolean {
  const setupPy = manifests['setup.py'];
  if (setupPy === undefined) return false;
  if (/\bExtension\s*\(|\bext_modules\s*=|\bcythonize\s*\(/.test(setupPy.replace(/#.*$/gm, ''))) return true;
  return /^\s*ext-modules\s*=/m.test(manifests['pyproject.toml'] ?? '');
}

/** [build-system] requires of pyproject.toml (the backend the in-place build runs), else setuptools. */
export function buildRequirements(manifests: Record<string, string>): string[] {
  try {
    const requires = (parseToml(manifests['pyproject.toml'] ?? '') as { 'build-system'?: { requires?: unknown } })[
      'build-system'
    ]?.requires;
    if (Array.isArray(requires) && requires.every((item) => typeof item === 'string') && requires.length)
      return requires as string[];
  } catch {
    // an unreadable pyproject.toml is reported by the planner
  }
  return ['setuptools'];
}
