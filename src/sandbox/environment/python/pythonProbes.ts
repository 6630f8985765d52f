// Python's check that the tests import the repository's own code from /workspace, not a copy a
// dependency pulled from an index or the image installed. Pure: the builder runs it (probeRunner.ts).
import { parse as parseToml } from 'smol-toml';
import type { EnvironmentProbe } from '../planTypes.js';

/** Top-level Python modules of a repository, and the folder they are imported from (src layout or the root). */
export function pythonTopLevelModules(files: string[]): { root: '' | 'src'; modules: string[]; files: string[] } {
  const inSrc = files.filter((path) => /^src\/[A-Za-z_]\w*(\/__init__\.py|\.py)$/.test(path));
  const root = inSrc.length ? 'src' : '';
  const candidates = inSrc.length ? inSrc : files.filter((path) => /^[A-Za-z_]\w*(\/__init__\.py|\.py)$/.test(path));
  const chosen = candidates.filter((path) => {
    const name = path.replace(/^src\//, '').replace(/(\/__init__)?\.py$/, '');
    // Scripts and test files at the root are not imported by name from elsewhere.
    return !/^(setup|conftest|noxfile|fabfile|manage)$|^test_|_test$/.test(name);
  });
  const modules = [...new Set(chosen.map((path) => path.replace(/^src\//, '').replace(/(\/__init__)?\.py$/, '')))];
  return { root, modules: modules.slice(0, 100), files: chosen.slice(0, 100) };
}

/** Folders pytest puts first on sys.path (its `pythonpath` setting), relative to the repository. */
export function pytestPythonPath(manifests: Record<string, string>): string[] {
  const pyproject = manifests['pyproject.toml'];
  if (pyproject !== undefined) {
    try {
      const tool = (parseToml(pyproject) as { tool?: { pytest?: Record<string, unknown> } }).tool?.pytest;
      const value = (tool?.ini_options as Record<string, unknown> | undefined)?.pythonpath ?? tool?.pythonpath;
      if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
      if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
    } catch {
      // an unreadable pyproject.toml is reported by the planner
    }
  }
  for (const [file, section] of [
    ['pytest.ini', 'pytest'],
    ['.pytest.ini', 'pytest'],
    ['tox.ini', 'pytest'],
    ['setup.cfg', 'tool:pytest'],
  ] as const) {
    const text = manifests[file];
    if (text === undefined) continue;
    const body = text.split(new RegExp(`^\\[${section.replace(':', '\\:')}\\]\\s*$`, 'm'))[1]?.split(/^\[/m)[0];
    const value = body?.match(/^pythonpath\s*=\s*((?:.*)(?:\n[ \t]+.*)*)/m)?.[1];
    if (value !== undefined) return value.split(/\s+/).filter(Boolean);
  }
  return [];
}

/**
 * Each top-level package of the repository must resolve to /workspace, as the tests will import it
 * (from /workspace, pytest's `pythonpath` first). Located with importlib's find_spec, which runs
 * none of the package's code: a package that fails to import is the agent's to fix, not the
 * environment's. With `ifPresent`, an image without python3 passes (nothing to check).
 */
export function pythonImportProbe(
  files: string[],
  manifests: Record<string, string>,
  ifPresent: boolean,
): EnvironmentProbe | null {
  const { root, modules, files: moduleFiles } = pythonTopLevelModules(files);
  if (modules.length === 0) return null;
  const program = [
    'import importlib.util, os, sys',
    `sys.path[0:0] = [os.path.join("/workspace", p) for p in ${JSON.stringify(pytestPythonPath(manifests))}]`,
    'def owner(path):',
    '    try:',
    '        from importlib.metadata import packages_distributions, version',
    '        top = os.path.basename(path[:-12] if path.endswith("/__init__.py") else path[:-3] if path.endswith(".py") else path)',
    '        return ", ".join(f"{d} {version(d)}" for d in packages_distributions().get(top, []))',
    '    except Exception:',
    '        return ""',
    'bad = []',
    `for name in ${JSON.stringify(modules)}:`,
    '    if name in sys.builtin_module_names: continue',
    '    try:',
    '        spec = importlib.util.find_spec(name)',
    '    except Exception as error:',
    '        bad.append(f"`import {name}` cannot be located: {error!r}"); continue',
    // Not found at all: the test command may put the folder on sys.path itself; nothing shadows it.
    '    if spec is None: continue',
    '    places = [spec.origin] if spec.has_location and spec.origin else list(spec.submodule_search_locations or [])',
    '    if any(os.path.realpath(p) == "/workspace" or os.path.realpath(p).startswith("/workspace/") for p in places): continue',
    '    where = places[0] if places else str(spec.origin)',
    '    dist = owner(where)',
    `    bad.append(f"\`import {name}\` loads {where}{f' (installed distribution {dist})' if dist else ''}, not the workspace's ${root ? 'src/' : ''}{name}")`,
    'for line in bad: print("python: " + line)',
    'sys.exit(1 if bad else 0)',
  ].join('\n');
  return {
    description: "python: the repository's top-level packages import from /workspace",
    files: moduleFiles,
    advice:
      'A dependency or the image installed the project itself. durable-debugger removes the copy its own install pulls in; in an image, Dockerfile or setup commands you bring, install the project editable (pip install -e .) or not at all.',
    script: [
      ...(ifPresent ? ['command -v python3 >/dev/null 2>&1 || exit 0'] : []),
      `cd /workspace && python3 - <<'DURABLE_DEBUGGER_PROBE'`,
      program,
      'DURABLE_DEBUGGER_PROBE',
    ].join('\n'),
  };
}
