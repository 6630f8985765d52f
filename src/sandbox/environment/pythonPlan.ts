// The Python environment: a venv at /opt/venv with the repository's declared requirements
// (requirements*.txt, pyproject.toml, setup.cfg, setup.py), versions locked by uv.lock or poetry.lock.
import { parse as parseToml } from 'smol-toml';
import { EnvironmentConfigError, environmentPaths, type EnvironmentPlan } from './planTypes.js';

const pythonEnv = [`VIRTUAL_ENV=${environmentPaths.venv}`];

const testExtras = ['test', 'tests', 'testing', 'dev'];
/** Declared Python requirements: the plan that installs them in a venv, or null when there are none. */
export function planPython(files: string[], manifests: Record<string, string>): EnvironmentPlan | null {
  const requirementFiles = Object.keys(manifests)
    .filter((path) => /^requirements[^/]*\.txt$/.test(path))
    .sort();
  const requirements: string[] = [];
  const sources: string[] = [];
  const inputFiles: Record<string, string> = {};
  for (const path of requirementFiles) {
    // Local paths (-e ., ./pkg) name the project itself: it is made importable another way.
    const lines = (manifests[path] as string)
      .split('\n')
      .filter((line) => !/^\s*(-e\s+)?\.{1,2}(\/\S*)?\s*(#.*)?$/.test(line) && !/^\s*-e\s+\.\S*/.test(line));
    inputFiles[path] = lines.join('\n');
    if (lines.some((line) => line.trim() && !line.trim().startsWith('#'))) sources.push(`-r ${path}`);
  }
  const pyproject =
    manifests['pyproject.toml'] !== undefined ? pyprojectRequirements(manifests['pyproject.toml'] as string) : [];
  if (pyproject.length) sources.push('(pyproject.toml dependencies)');
  requirements.push(...pyproject);
  const setupCfg = manifests['setup.cfg'] !== undefined ? setupCfgRequirements(manifests['setup.cfg'] as string) : [];
  if (setupCfg.length) sources.push('(setup.cfg install_requires)');
  requirements.push(...setupCfg);
  const setupPy = manifests['setup.py'] !== undefined ? setupPyRequirements(manifests['setup.py'] as string) : [];
  if (setupPy.length) sources.push('(setup.py install_requires)');
  requirements.push(...setupPy);
  const lock = pythonLock(manifests);
  if (lock) sources.push(`(versions locked in ${lock.file})`);
  if (sources.length === 0) return null;

  const declared = [...requirements, ...Object.values(inputFiles).flatMap((text) => text.split('\n'))];
  if (!declared.some((line) => /^\s*pytest\s*([<>=!~;[]|$)/i.test(line))) requirements.push('pytest');
  inputFiles['durable-debugger-requirements.txt'] = requirements.join('\n') + '\n';
  if (lock) {
    inputFiles['pyproject.toml'] = manifests['pyproject.toml'] as string;
    inputFiles[lock.file] = manifests[lock.file] as string;
  }
  const importRoot = files.some((path) => /^src\/[^/]+\/__init__\.py$/.test(path) || /^src\/[^/]+\.py$/.test(path))
    ? '/workspace/src'
    : '/workspace';
  const venv = environmentPaths.venv;
  const script = [
    'set -e',
    `python3 -m venv --without-pip ${venv}`,
    'cd /env-input',
    ...(lock ? lock.export : []),
    // pip runs from its wheel (the base image has no pip), installing into the venv.
    `${venv}/bin/python3 /toolchain/pip.whl/pip install --no-input --progress-bar off --root-user-action=ignore -r durable-debugger-requirements.txt ${[...requirementFiles.filter((path) => sources.includes(`-r ${path}`)).map((path) => `-r ${path}`), ...(lock ? [`-r ${lockedRequirements}`] : [])].join(' ')}`,
    // The project itself, importable as an editable install would make it.
    `echo ${importRoot} > "$(${venv}/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/durable-debugger-workspace.pth"`,
    // Commands in the sandbox run with PATH=/usr/local/bin:...: the venv's tools are found there first.
    ...['python3', 'python', 'pytest'].map(
      (tool) =>
        `printf '#!/bin/sh\\nexec ${venv}/bin/${tool} "$@"\\n' > /usr/local/bin/${tool} && chmod 755 /usr/local/bin/${tool}`,
    ),
    `echo "packages: $(ls -d ${venv}/lib/python3*/site-packages/*.dist-info | wc -l)"`,
  ].join('\n');
  return {
    kind: 'python',
    description: `python · pip install ${sources.join(' ')}`,
    files: inputFiles,
    script,
    needsRepository: false,
    toolchains: ['pip'],
    build: [],
    containerEnv: pythonEnv,
  };
}

const lockedRequirements = '/tmp/durable-debugger-locked.txt';
const pipInTools = `/tmp/tools/bin/python3 /toolchain/pip.whl/pip install --no-input --progress-bar off --root-user-action=ignore`;

/**
 * A uv.lock or poetry.lock with its pyproject.toml: the locked versions, exported as pinned requirements
 * by the lock's own tool (pip-installed into a throwaway folder of the build container), all extras and
 * groups, without the project itself or local path packages (the workspace provides those).
 */
export function pythonLock(manifests: Record<string, string>): { file: string; export: string[] } | null {
  if (manifests['pyproject.toml'] === undefined) return null;
  const dropLocalPaths = `grep -v -E '^(-e |[^#]* @ file:)' /tmp/exported.txt > ${lockedRequirements} || true`;
  if (manifests['uv.lock'] !== undefined) {
    return {
      file: 'uv.lock',
      export: [
        'python3 -m venv --without-pip /tmp/tools',
        `${pipInTools} uv`,
        // --frozen: the lock as it is, never re-resolved; a lock that does not match pyproject.toml is the repository's to fix.
        'UV_NO_CONFIG=1 /tmp/tools/bin/uv export --frozen --no-hashes --no-emit-project --no-emit-workspace --all-extras --all-groups --format requirements-txt -o /tmp/exported.txt',
        dropLocalPaths,
        `echo "locked: $(grep -c '==' ${lockedRequirements}) versions from uv.lock"`,
      ],
    };
  }
  if (manifests['poetry.lock'] !== undefined) {
    return {
      file: 'poetry.lock',
      export: [
        'python3 -m venv --without-pip /tmp/tools',
        `${pipInTools} poetry poetry-plugin-export`,
        // poetry export fails on a lock that is out of date with pyproject.toml: it never re-resolves.
        'POETRY_VIRTUALENVS_CREATE=false /tmp/tools/bin/poetry export --without-hashes --all-extras --all-groups --format requirements.txt --output /tmp/exported.txt',
        dropLocalPaths,
        `echo "locked: $(grep -c '==' ${lockedRequirements}) versions from poetry.lock"`,
      ],
    };
  }
  return null;
}
/** PEP 621 dependencies plus the test extras and dependency groups (PEP 735). */
export function pyprojectRequirements(text: string): string[] {
  let data: Record<string, unknown>;
  try {
    data = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new EnvironmentConfigError(`pyproject.toml cannot be parsed: ${(error as Error).message.split('\n')[0]}`);
  }
  const project = (data.project ?? {}) as Record<string, unknown>;
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  const extras = (project['optional-dependencies'] ?? {}) as Record<string, unknown>;
  const groups = (data['dependency-groups'] ?? {}) as Record<string, unknown>;
  const name = typeof project.name === 'string' ? normalizeName(project.name) : null;
  return [
    ...strings(project.dependencies),
    ...testExtras.flatMap((extra) => strings(extras[extra])),
    ...testExtras.flatMap((group) => strings(groups[group])),
  ].filter((requirement) => !name || normalizeName(requirement.split(/[\s<>=!~;[]/)[0] ?? '') !== name);
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** install_requires and the test extras of a setup.cfg. */
export function setupCfgRequirements(text: string): string[] {
  const result: string[] = [];
  let section = '';
  let key = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+[#;].*$/, '');
    const header = line.match(/^\[(.+)\]\s*$/);
    if (header) {
      section = (header[1] as string).trim();
      key = '';
      continue;
    }
    const assignment = line.match(/^(\S[^=]*?)\s*=\s*(.*)$/);
    if (assignment) {
      key = (assignment[1] as string).trim();
      if (wanted(section, key) && assignment[2]?.trim())
        result.push(...(assignment[2] as string).split(';;').map((part) => part.trim()));
      continue;
    }
    if (/^\s+\S/.test(line) && wanted(section, key)) result.push(line.trim());
  }
  return result.filter(Boolean);

  function wanted(sectionName: string, keyName: string): boolean {
    return (
      (sectionName === 'options' && keyName === 'install_requires') ||
      (sectionName === 'options.extras_require' && testExtras.includes(keyName))
    );
  }
}

/** The literal install_requires list of a setup.py (best effort: a computed list is not read). */
export function setupPyRequirements(text: string): string[] {
  const list = text.match(/install_requires\s*=\s*\[([^\]]*)\]/)?.[1];
  if (!list) return [];
  return [...list.matchAll(/["']([^"']+)["']/g)].map((match) => match[1] as string);
}
