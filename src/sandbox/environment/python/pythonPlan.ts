// The Python environment: a venv at /opt/venv with what the tests need (requirements*.txt, the
// pyproject.toml/setup.cfg/setup.py dependencies plus the test-ish extras and groups), versions
// locked by uv.lock or poetry.lock. The project itself comes from /workspace, never from an index:
// a copy a dependency pulled in is removed, and the workspace goes ahead of site-packages. Then the
// project is installed as its CI installs it, editable (projectInstall), so that its metadata and
// entry points exist while its code still loads from /workspace.
import { posix } from 'node:path';
import { installedAlready, installedAlreadyCheck } from './installedAlready.js';
import { pythonImportProbe } from './pythonProbes.js';
import { buildExtensionsInPlace, buildRequirements, cExtensionPackages, hasCExtensions } from './pythonExtensions.js';
import { keepVersionFiles, restoreVersionFiles, versionFilesOf } from './versionFiles.js';
import { aptInstallScript } from '../debian/debianPackages.js';
import { defaultPath, environmentImageEnv } from '../../container/sandboxEnv.js';
import { environmentPaths, projectVersionVariable, type EnvironmentPlan } from '../planTypes.js';
import {
  normalizeName,
  readPythonProject,
  requirementName,
  selectedRequirements,
  selectExtrasAndGroups,
  type PythonProject,
  type PythonSelection,
} from './pythonProject.js';
import { shellQuote, shellWord } from '../../shellQuote.js';
import { toxDependencyGroups, toxExtras, toxRequirements, toxTestDeps, toxTestEnv } from './toxConfig.js';
import { projectExtrasNamed, projectLineExtras } from './projectLine.js';
import { noxRequirements, noxTestDeps } from './noxConfig.js';
import { ciPipInstalls, ciRequirements } from './ciPipInstalls.js';
import { ciTestJob } from '../ciTestJob.js';
import { exportBuiltIn, lockToolsPlan, lockToolsVenv, poetryThatWrote } from './lockTools.js';
import { lockedLocalPackages, localPackagesInstall, type LocalPackage } from './lockedLocalPackages.js';

const pythonEnv = environmentImageEnv('VIRTUAL_ENV');

/** requirements files for docs, linting, releases or benchmarks: not what the tests need. */
const nonTestRequirementFile = /doc|lint|release|publish|deploy|typing|mypy|style|format|pre-?commit|bench/i;

/**
 * Files named for requirements or constraints at the root or a folder or two down
 * (requirements-dev.txt, test-requirements.txt, ci/constraints.txt), and the files of a
 * requirements/ folder (pip-compile's layout): read with the manifests, installed when they are the
 * tests' (testRequirementFiles) or an installed file names them (requiredFilesNamed).
 */
export function isRequirementsFile(path: string): boolean {
  return (
    /^requirements\/[^/]+\.txt$/.test(path) || /^([^/]+\/){0,2}[^/]*(requirements|constraints)[^/]*\.txt$/.test(path)
  );
}

/**
 * A requirements file's text without its local paths: the project itself (`-e .`, `.[tests]`,
 * projectLine.ts), made importable another way, and other folders (`./pkg`, `-e ../lib`).
 */
function withoutLocalPaths(text: string): string {
  return text
    .split('\n')
    .filter(
      (line) =>
        projectLineExtras(line) === null &&
        !/^\s*(-e\s+)?\.{1,2}(\/\S*)?\s*(#.*)?$/.test(line) &&
        !/^\s*-e\s+\.\S*/.test(line),
    )
    .join('\n');
}

/**
 * Whether a runner's line that names a file (`-r ./test-requirements.txt`) names one read with the
 * manifests, which the build can carry; a file not named like requirements is not, and pip would
 * stop at it. Lines that name no file are kept.
 */
function namesReadFile(line: string, manifests: Record<string, string>): boolean {
  const named = fileNamed(line);
  return named === null || manifests[named.path] !== undefined;
}

/** Whether a runner's `-r` line names a requirements file the build installs already (`-r requirements-dev.txt` in `sources`). */
function namesInstalledFile(line: string, sources: readonly string[]): boolean {
  const named = fileNamed(line);
  return named?.constraint === false && sources.includes(`-r ${named.path}`);
}

/** The file a requirements line names with -r or -c (--requirement, --constraint), its path normalized, or null. */
function fileNamed(line: string): { path: string; constraint: boolean } | null {
  const match = line.match(/^\s*(-[rc]|--requirement|--constraint)[\s=]\s*(\S+)/);
  if (!match) return null;
  return { path: posix.normalize(match[2] as string), constraint: match[1] === '-c' || match[1] === '--constraint' };
}

/**
 * Adds to `inputs` the files they name with -r or -c (--requirement, --constraint), and the files
 * those name: pip opens each relative to the file that names it, so they travel with it. Returns
 * the constraints files among them: what they list is pinned, not installed.
 */
function requiredFilesNamed(inputs: Record<string, string>, manifests: Record<string, string>): Set<string> {
  const constraints = new Set<string>();
  const queue = Object.keys(inputs);
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    for (const named of (inputs[path] ?? '').split('\n').flatMap((line) => fileNamed(line) ?? [])) {
      const target = posix.normalize(posix.join(posix.dirname(path), named.path));
      if (inputs[target] !== undefined || manifests[target] === undefined) continue;
      inputs[target] = withoutLocalPaths(manifests[target]);
      if (named.constraint) constraints.add(target);
      queue.push(target);
    }
  }
  return constraints;
}

/**
 * The requirements files the tests need: the root's requirements*.txt, but for docs, lint and
 * release ones (and only requirements.txt and those named when tox, nox or the CI job names the
 * files it installs), and its test-requirements.txt or dev-requirements.txt (also with `_`; OpenStack's
 * and urllib3's names), and tests/requirements.txt; in a requirements/ folder, tests.txt, test.txt
 * or testing.txt, else dev.txt (which often adds docs and lint tools). The folder's other files are
 * inputs all the same: one may `-r` or `-c` another.
 */
function testRequirementFiles(paths: string[], namedByRunners: Set<string>): string[] {
  const atRoot = paths.filter(
    (path) =>
      (/^requirements[^/]*\.txt$/.test(path) && !nonTestRequirementFile.test(path.slice(12))) ||
      /^(tests?|testing|dev)[-_]requirements\.txt$/.test(path) ||
      /^tests?\/requirements\.txt$/.test(path),
  );
  // When tox, nox or the CI job names the files it installs, the root's others are not the tests'
  // (wcwidth's requirements-update.txt and requirements-wheels.txt pin what pip-tools and
  // cibuildwheel need): requirements.txt stays, the project's own.
  const kept = namedByRunners.size
    ? atRoot.filter((path) => path === 'requirements.txt' || namedByRunners.has(path))
    : atRoot;
  const inFolder = (names: string[]) =>
    paths.filter((path) => names.some((name) => path.toLowerCase() === `requirements/${name}.txt`));
  const tests = inFolder(['tests', 'test', 'testing']);
  return [...kept, ...(tests.length ? tests : inFolder(['dev']))].sort();
}

/**
 * Whether the project says how it is built: a build backend ([build-system]) or a setup.py. A
 * pyproject.toml that only configures tools, or names the project without a backend, is left as it is.
 */
export function isInstallableProject(manifests: Record<string, string>): boolean {
  if (manifests['setup.py'] !== undefined) return true;
  const pyproject = manifests['pyproject.toml'];
  return pyproject !== undefined && /^\s*\[build-system\]\s*(#.*)?$/m.test(pyproject);
}

/** Declared Python requirements: the plan that installs them in a venv, or null when there are none. */
export function planPython(
  files: string[],
  manifests: Record<string, string>,
  named: { extras?: string[]; groups?: string[]; apt?: string[] } = {},
): EnvironmentPlan | null {
  // What CI installs beside the project: tox's [testenv] deps, nox's session.install, the CI test job's pip install.
  const nox = noxTestDeps(manifests['noxfile.py']);
  const ciJob = ciTestJob(manifests);
  const ci = ciPipInstalls(ciJob?.commands ?? []);
  const runnerLines = [
    { file: toxRequirements, lines: toxTestDeps(manifests['tox.ini']), source: '(tox.ini [testenv] deps)' },
    { file: noxRequirements, lines: nox.requirements, source: '(noxfile.py test sessions)' },
    { file: ciRequirements, lines: ci.requirements, source: `(pip install in ${ciJob?.from})` },
  ];
  const namedByRunners = new Set(
    runnerLines
      .flatMap((deps) => deps.lines.filter((line) => namesReadFile(line, manifests)))
      .flatMap((line) => {
        const named = fileNamed(line);
        return named && !named.constraint ? [named.path] : [];
      }),
  );
  const requirementFiles = testRequirementFiles(Object.keys(manifests), namedByRunners);
  const sources: string[] = [];
  const inputFiles: Record<string, string> = {};
  const folderFiles = Object.keys(manifests).filter(
    (path) => path.startsWith('requirements/') && isRequirementsFile(path),
  );
  for (const path of [...new Set([...requirementFiles, ...folderFiles])]) {
    inputFiles[path] = withoutLocalPaths(manifests[path] as string);
    const lines = inputFiles[path].split('\n');
    if (requirementFiles.includes(path) && lines.some((line) => line.trim() && !line.trim().startsWith('#')))
      sources.push(`-r ${path}`);
  }
  const runnerDeps = runnerLines
    .map((deps) => ({
      ...deps,
      lines: deps.lines.filter((line) => namesReadFile(line, manifests) && !namesInstalledFile(line, sources)),
    }))
    .filter((deps) => deps.lines.length);
  for (const deps of runnerDeps) {
    inputFiles[deps.file] = deps.lines.join('\n') + '\n';
    sources.push(deps.source);
  }
  const constraintsFiles = requiredFilesNamed(inputFiles, manifests);
  const project = readPythonProject(manifests);
  // The extras CI installs the project with (`-e .[socks]` in a requirements file, tox's `extras`, nox's or the CI job's install).
  const ciExtras = [
    ...projectExtrasNamed(Object.keys(inputFiles).flatMap((path) => manifests[path]?.split('\n') ?? [])),
    ...toxExtras(manifests['tox.ini']),
    ...nox.extras,
    ...ci.extras,
  ];
  const selection = selectExtrasAndGroups(project, named, ciExtras, toxDependencyGroups(manifests));
  const lock = pythonLock(manifests, project, selection, files);
  const locals = lock?.localPackages ?? [];
  // The lock's local packages come from the repository, installed with the project, never from an index.
  const localNames = new Set(locals.map((local) => normalizeName(local.name)));
  const requirements = selectedRequirements(project, selection).filter(
    (requirement) => !localNames.has(requirementName(requirement)),
  );
  if (requirements.length) sources.push(...declaredIn(manifests));
  if (lock) sources.push(`(versions locked in ${lock.file})`);
  if (locals.length) sources.push(`(${locals.map((local) => local.folder).join(', ')} installed editable)`);
  const installable = isInstallableProject(manifests);
  if (sources.length === 0 && !installable) return null;
  if (sources.length === 0) sources.push('-e . (the project itself: no dependencies declared)');
  const chosen = [
    ...selection.extras.map((extra) => `extra ${extra}`),
    ...selection.groups.map((group) => `group ${group}`),
  ];
  if (chosen.length) sources.push(`(${chosen.join(', ')})`);

  const declared = [
    ...requirements,
    ...Object.entries(inputFiles).flatMap(([path, text]) => (constraintsFiles.has(path) ? [] : text.split('\n'))),
  ];
  if (!declared.some((line) => /^\s*pytest\s*([<>=!~;[]|$)/i.test(line))) requirements.push('pytest');
  // C extensions: a compiler and Python's headers from Debian, the backend in the venv for the per-run build.
  const extensions = hasCExtensions(manifests);
  if (extensions) requirements.push(...buildRequirements(manifests));
  const aptPackages = [...new Set([...(extensions ? cExtensionPackages : []), ...(named.apt ?? [])])];
  inputFiles['durable-debugger-requirements.txt'] = requirements.join('\n') + '\n';
  if (lock) {
    inputFiles['pyproject.toml'] = manifests['pyproject.toml'] as string;
    inputFiles[lock.file] = manifests[lock.file] as string;
    if (lock.installer) inputFiles[installedAlreadyCheck.file] = installedAlreadyCheck.text;
  }
  const importRoot = files.some((path) => /^src\/[^/]+\/__init__\.py$/.test(path) || /^src\/[^/]+\.py$/.test(path))
    ? '/workspace/src'
    : '/workspace';
  const venv = environmentPaths.venv;
  const python = `${venv}/bin/python3`;
  const pipInstall = pipInstallOf(python);
  const installFiles = [
    ...requirementFiles.filter((path) => sources.includes(`-r ${path}`)),
    ...runnerDeps.map((deps) => deps.file),
    ...(lock ? [lockedRequirements] : []),
  ].map(shellWord);
  const pipRequirements = `${pipInstall} -r durable-debugger-requirements.txt ${installFiles.map((path) => `-r ${path}`).join(' ')}`;
  const script = [
    'set -e',
    ...(aptPackages.length ? [aptInstallScript(aptPackages)] : []),
    `python3 -m venv --without-pip ${venv}`,
    `purelib="$(${python} -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`,
    // pip in the venv, as CI's venvs have it (the base image has none): unpacked from its wheel, it is
    // compiled once here, where run from the wheel every pip command compiled it again (about a second).
    `${python} -m zipfile -e /toolchain/pip.whl "$purelib"`,
    'cd /env-input',
    ...(lock ? lock.install : []),
    ...(lock?.installer
      ? [
          `if ${installedAlready(python, ['durable-debugger-requirements.txt', ...installFiles])}; then`,
          `  echo "pip: every requirement is installed already (by ${lock.installer})"`,
          'else',
          `  ${pipRequirements}`,
          'fi',
        ]
      : [pipRequirements]),
    ...removeOwnDistributions(project, python),
    // The project itself, importable as an editable install would make it, and ahead of site-packages:
    // a .pth line that starts with `import` runs, and puts the workspace before the venv's packages.
    `echo ${shellQuote(workspaceFirst(importRoot))} > "$purelib/durable-debugger-workspace.pth"`,
    // The sandbox's PATH starts with the venv's bin (containerEnv below); these serve what runs with
    // the base PATH (/usr/local/bin:…) in this image.
    ...['python3', 'python', 'pytest'].map(
      (tool) =>
        `printf '#!/bin/sh\\nexec ${venv}/bin/${tool} "$@"\\n' > /usr/local/bin/${tool} && chmod 755 /usr/local/bin/${tool}`,
    ),
    `echo "packages: $(ls -d ${venv}/lib/python3*/site-packages/*.dist-info | wc -l)"`,
  ].join('\n');
  const probe = pythonImportProbe(files, manifests, false);
  const installsOwn = installable || locals.length > 0;
  const versionFiles = installable ? versionFilesOf(manifests) : [];
  return {
    kind: 'python',
    installers: aptPackages.length ? ['pip', 'apt'] : ['pip'],
    description: `python · ${lock?.installer ?? 'pip install'} ${sources.join(' ')}${aptPackages.length ? ` · apt ${aptPackages.join(' ')}` : ''}`,
    files: inputFiles,
    script,
    needsRepository: false,
    toolchains: ['pip'],
    // A lock's export tool is in the image this one is built on.
    ...(lock ? { basePlan: lock.tools } : {}),
    build: [...(extensions ? [buildExtensionsInPlace] : []), ...(versionFiles.length ? [restoreVersionFiles] : [])],
    // The venv's bin first on PATH, as an activated venv (and CI's setup-python) leaves it: its console
    // scripts are commands (dunamai's tests run `dunamai`; suites run black, flake8, their own CLI).
    // Then the variables tox.ini sets for the tests, as CI's tox sets them.
    containerEnv: [`PATH=${venv}/bin:${defaultPath}`, ...pythonEnv, ...toxTestEnv(manifests['tox.ini'], '/workspace')],
    // With the project's own install, its build checks the image it makes (a copy of the repository at /workspace).
    probes: probe && !installsOwn ? [probe] : [],
    ...(installsOwn
      ? {
          projectInstall: {
            script: projectInstallScript(
              project,
              installable,
              lock?.installer === 'poetry install',
              locals,
              lock?.file ?? '',
              versionFiles,
            ),
          },
          ...(probe ? { checks: [probe] } : {}),
        }
      : {}),
  };
}

/**
 * The project installed editable, as `pip install -e .` in its CI: run in a copy of the repository at
 * /workspace, the sandbox's own path, so the .pth or finder the backend writes points at the sandbox's
 * workspace. Dependencies are installed already (--no-deps). Version plugins that read git find no .git
 * here: they get the version of the user's checkout. A failed install leaves the project importable
 * from /workspace as before, without its metadata, and says so. The lock's local packages (a uv
 * workspace's members, path dependencies) are installed first, the same way; `root` is false for a
 * workspace whose root is no project (a virtual root). The version files the install wrote are kept
 * aside for the sandbox's workspace (versionFiles.ts).
 */
function projectInstallScript(
  project: PythonProject,
  root: boolean,
  byPoetry: boolean,
  locals: LocalPackage[],
  lockFile: string,
  versionFiles: string[],
): string {
  const python = `${environmentPaths.venv}/bin/python3`;
  const pipEditable = `${pipInstallOf(python)} --no-deps --editable .`;
  // A project Poetry installed the dependencies of: Poetry installs it too (its own editable build, no
  // build environment to fetch), as `poetry install` does in CI; pip when Poetry cannot.
  const install = byPoetry
    ? `{ ${poetryCanInstall} && ${poetryInstall(['--only-root'])}; } || ${pipEditable}`
    : pipEditable;
  const name = project.ownNames[0];
  const installed = name
    ? `$(${python} -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' ${shellQuote(name)} 2>/dev/null || echo '?')`
    : '';
  const label = name ? `${name} ${installed}` : 'the project';
  // The build keeps the last `project:` line: the root's and the local packages' outcomes go in one.
  const localsLine = locals.length ? ` (${lockFile}'s local packages: $members)` : '';
  return [
    'set -e',
    'cd /workspace',
    `version="\${${projectVersionVariable}:-0.0.0}"`,
    // hatch-vcs and setuptools-scm; pdm-backend's scm source; poetry- and uv-dynamic-versioning (dunamai).
    'export SETUPTOOLS_SCM_PRETEND_VERSION="$version" PDM_BUILD_SCM_VERSION="$version" POETRY_DYNAMIC_VERSIONING_BYPASS="$version" UV_DYNAMIC_VERSIONING_BYPASS="$version"',
    ...localPackagesInstall(locals, pipInstallOf(python), python),
    ...(root
      ? [
          // Its errors are kept to quote the one that says why, then shown as they came.
          `if { ${install}; } 2>${installErrors}; then`,
          `  cat ${installErrors} >&2`,
          `  echo "project: ${label} installed editable from /workspace${localsLine}"`,
          'else',
          `  cat ${installErrors} >&2`,
          `  why=$(${installErrorLine})`,
          // Without a C compiler in the image, a setup.py that must build an extension fails here.
          `  echo "project: its editable install failed (pip install -e .\${why:+: $why}$(command -v cc >/dev/null 2>&1 || echo '; the image has no C compiler')): it is imported from /workspace without its metadata${localsLine}"`,
          'fi',
        ]
      : [`echo "project: $members installed editable from /workspace (${lockFile}'s local packages)"`]),
    ...keepVersionFiles(versionFiles),
    ...(byPoetry ? [`rm -rf ${environmentPaths.downloads}`] : []),
    `echo "packages: $(ls -d ${environmentPaths.venv}/lib/python3*/site-packages/*.dist-info | wc -l)"`,
  ].join('\n');
}

const installErrors = '/tmp/durable-debugger-project-install.err';

/**
 * pip's line that says why the install failed: the build backend's own first `error:` (a compiler
 * that failed, a bad setup.py), else pip's last `ERROR:`, its own or its build environment's (a
 * build requirement no index has).
 */
const installErrorLine =
  `{ grep -E '^ +error: ' ${installErrors} | grep -v subprocess-exited-with-error | head -n 1; ` +
  `grep -E '^ *ERROR: ' ${installErrors} | tail -n 1; } | head -n 1 | sed -E 's/^ *(error|ERROR): //' | cut -c1-240`;

/** Which manifests declare requirements, for the plan's description: "(pyproject.toml dependencies)". */
function declaredIn(manifests: Record<string, string>): string[] {
  const labels = (['pyproject.toml', 'setup.cfg', 'setup.py'] as const)
    .filter((file) => {
      if (manifests[file] === undefined) return false;
      const alone = readPythonProject({ [file]: manifests[file] });
      const groups = Object.keys(alone.groups).filter((group) => !alone.brokenGroups[group]);
      return selectedRequirements(alone, { extras: Object.keys(alone.extras), groups }).length > 0;
    })
    .map((file) => `(${file} ${file === 'pyproject.toml' ? 'dependencies' : 'install_requires'})`);
  return labels.length ? labels : ['(pyproject.toml dependencies)'];
}

/** The venv's pip (unpacked into it by the dependencies' build) installing, quiet and never asking. */
function pipInstallOf(python: string): string {
  return `${python} -m pip install --no-input --progress-bar off --root-user-action=ignore`;
}

/** The .pth line that puts the workspace just before the first site-packages folder on sys.path. */
export function workspaceFirst(importRoot: string): string {
  return `import sys; p = ${JSON.stringify(importRoot)}; p in sys.path or sys.path.insert(next((i for i, e in enumerate(sys.path) if e.endswith("-packages")), len(sys.path)), p)`;
}

/**
 * A dependency of the tests (pytest needs packaging, pluggy and iniconfig; Sphinx needs packaging)
 * may pull the project's own distribution from the index: it is removed, saying so.
 */
function removeOwnDistributions(project: PythonProject, python: string): string[] {
  return project.ownNames.map((name) =>
    [
      `if version=$(${python} -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' ${shellQuote(name)} 2>/dev/null); then`,
      `  echo "removing ${name} $version, pulled from the index by a dependency: the tests use the workspace's own code"`,
      `  ${python} -m pip uninstall --yes --quiet --root-user-action=ignore ${shellQuote(name)}`,
      'fi',
    ].join('\n'),
  );
}

const lockedRequirements = '/tmp/durable-debugger-locked.txt';

/**
 * A uv.lock or poetry.lock with its pyproject.toml: the steps that install the locked versions, with
 * the selected extras and groups only, without the project itself or local path packages (the
 * workspace provides those). A poetry.lock is installed by Poetry where it can be (`installer`), else,
 * as a uv.lock, exported as pinned requirements by the lock's own tool (in the image the plan builds
 * on: lockTools.ts) for the pip install after these steps.
 */
export function pythonLock(
  manifests: Record<string, string>,
  project: PythonProject = readPythonProject(manifests),
  selection: PythonSelection = selectExtrasAndGroups(project, {}),
  /** The repository's paths: the lock's local packages are those of its folders that hold a package. */
  files: readonly string[] = [],
): {
  file: string;
  install: string[];
  tools: EnvironmentPlan;
  installer?: string;
  /** Packages the lock installs from the repository's folders (a uv workspace's members, path dependencies). */
  localPackages: LocalPackage[];
} | null {
  if (manifests['pyproject.toml'] === undefined) return null;
  const dropLocalPaths = `grep -v -E '^(-e |[^#]* @ file:)' /tmp/exported.txt > ${lockedRequirements} || true`;
  const extras = selection.extras.map((extra) => `--extra ${shellQuote(extra)}`);
  if (manifests['uv.lock'] !== undefined) {
    const groups = selection.groups
      .filter((group) => group in project.groups)
      .map((group) => `--group ${shellQuote(group)}`);
    const own = project.ownNames.map((name) => `--no-emit-package ${shellQuote(name)}`);
    const localPackages = lockedLocalPackages('uv.lock', manifests, files);
    // Their dependencies are exported too, as `uv sync --all-packages` installs them.
    const members = localPackages.length ? ['--all-packages'] : [];
    return {
      file: 'uv.lock',
      localPackages,
      tools: lockToolsPlan('uv'),
      install: [
        // --frozen: the lock as it is, never re-resolved; a lock that does not match pyproject.toml is the repository's to fix.
        `UV_NO_CONFIG=1 ${lockToolsVenv}/bin/uv export --frozen --no-hashes --no-emit-project --no-emit-workspace ${[...own, ...members, '--no-default-groups', ...groups, ...extras].join(' ')} --format requirements-txt -o /tmp/exported.txt`,
        dropLocalPaths,
        `echo "locked: $(grep -c '==' ${lockedRequirements}) versions from uv.lock"`,
      ],
    };
  }
  if (manifests['poetry.lock'] !== undefined) {
    const groups = selection.groups.filter((group) => project.poetryGroups.includes(group));
    // Poetry's option is --extras (uv's --extra does not exist there).
    const poetryExtras = selection.extras.map((extra) => `--extras ${shellQuote(extra)}`);
    const version = poetryThatWrote(manifests['poetry.lock']);
    const exported = [
      // poetry export fails on a lock that is out of date with pyproject.toml: it never re-resolves.
      [
        `POETRY_VIRTUALENVS_CREATE=false ${lockToolsVenv}/bin/poetry export --without-hashes`,
        ...(groups.length ? [`--with ${shellQuote(groups.join(','))}`] : []),
        ...poetryExtras,
        '--format requirements.txt --output /tmp/exported.txt',
      ].join(' '),
      dropLocalPaths,
      `echo "locked: $(grep -c '==' ${lockedRequirements}) versions from poetry.lock"`,
    ];
    const native = poetryInstalls(manifests, version);
    return {
      file: 'poetry.lock',
      localPackages: lockedLocalPackages('poetry.lock', manifests, files),
      tools: lockToolsPlan('poetry', version),
      ...(native ? { installer: 'poetry install' } : {}),
      install: native
        ? [
            // As the project's CI installs it: Poetry's own installer (its downloads side by side) from the lock,
            // into the venv, when PyPI is where the host's pip looks too; else, its versions exported for pip.
            `if ${poetryCanInstall}; then`,
            `  ${poetryInstall(['--no-root', `--only ${shellQuote(['main', ...groups].join(','))}`, ...poetryExtras])}`,
            `  rm -rf ${environmentPaths.downloads} && : > ${lockedRequirements}`,
            '  echo "locked: poetry.lock installed by poetry install"',
            'else',
            `  echo "poetry install: this host's pip names an index of its own, which Poetry does not read: poetry.lock's versions exported for pip instead"`,
            ...exported.map((line) => `  ${line}`),
            'fi',
          ]
        : exported,
    };
  }
  return null;
}

const poetryCache = `${environmentPaths.downloads}/poetry`;

/**
 * Whether Poetry itself can install the lock in the build: a Poetry with dependency groups (1.2 or
 * later), the lock's packages all from PyPI (no source of the repository's own, no path, file, URL or
 * git packages, which the build has no copy of or no way to), the project itself left out (--no-root).
 */
function poetryInstalls(manifests: Record<string, string>, version: string | undefined): boolean {
  if (version && exportBuiltIn(version)) return false;
  if (/^\s*\[\[?tool\.poetry\.source\]\]?/m.test(manifests['pyproject.toml'] ?? '')) return false;
  return !/^\s*type\s*=\s*"(directory|file|url|git|legacy)"/m.test(manifests['poetry.lock'] ?? '');
}

/** `poetry install` with `args`, into the venv, never asking. */
function poetryInstall(args: string[]): string {
  return [
    // A keyring backend that asks no desktop service: Poetry looks one up for every index.
    'PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring',
    `POETRY_CACHE_DIR=${poetryCache} POETRY_VIRTUALENVS_CREATE=false POETRY_NO_INTERACTION=1`,
    `VIRTUAL_ENV=${environmentPaths.venv} ${lockToolsVenv}/bin/poetry install --no-ansi`,
    ...args,
  ].join(' ');
}

/** True in a build whose pip looks on PyPI (the host's pip names no index of its own): where Poetry looks too. */
const poetryCanInstall = `! grep -Eqs '^(index-url|no-index) = ' "\${PIP_CONFIG_FILE:-/nonexistent}"`;

/** PEP 621 dependencies plus the test extras and dependency groups (PEP 735), without the project itself. */
export function pyprojectRequirements(text: string): string[] {
  const project = readPythonProject({ 'pyproject.toml': text });
  return selectedRequirements(project, selectExtrasAndGroups(project, {}));
}

/** install_requires and the test extras of a setup.cfg. */
export function setupCfgRequirements(text: string): string[] {
  const project = readPythonProject({ 'setup.cfg': text });
  return selectedRequirements(project, selectExtrasAndGroups(project, {}));
}

export { setupPyRequirements } from './pythonProject.js';
