// What a Python repository declares about itself, read from pyproject.toml, setup.cfg and setup.py:
// its own distribution names, its dependencies, its extras and dependency groups (PEP 735, uv's and
// PDM's older dev-dependencies, Hatch's environments, Poetry's), and which of those the tests need.
// Pure: the planners decide what to install from it.
import { posix } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { EnvironmentConfigError, repositoryConfigFile } from '../planTypes.js';
import { excerpt, quoted } from '../excerpt.js';

/** Extras and groups installed unless durable-debugger.json names others: those the tests need. */
export const testExtras = ['test', 'tests', 'testing', 'dev'];

export interface PythonProject {
  /** The project's own distribution names (normalized): never installed from an index. */
  ownNames: string[];
  dependencies: string[];
  /** Extras (pyproject optional-dependencies, setup.cfg extras_require) → their requirements. */
  extras: Record<string, string[]>;
  /** PEP 735 dependency groups (uv's dev-dependencies as `dev`, PDM's and Hatch's environments too) → their requirements, include-group resolved. */
  groups: Record<string, string[]>;
  /** Groups that cannot be resolved (an include-group of an undefined group), with why: an error once selected. */
  brokenGroups: Record<string, string>;
  /** Poetry's groups (legacy dev-dependencies as `dev`): a poetry.lock exports them with --with. */
  poetryGroups: string[];
  /** `requires-python` (or setup.cfg/setup.py python_requires), and the file that says it. */
  requiresPython: { specifier: string; source: string } | null;
}

/** The extras and groups to install: those durable-debugger.json names, else the test-ish ones the project defines. */
export interface PythonSelection {
  extras: string[];
  groups: string[];
}

export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** The distribution a requirement names ("Self_Pkg[extra]>=1; python_version<'3.12'" → "self-pkg"). */
export function requirementName(requirement: string): string {
  return normalizeName(requirement.trim().split(/[\s<>=!~;[@(]/)[0] ?? '');
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function table(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function readPythonProject(manifests: Record<string, string>): PythonProject {
  const project: PythonProject = {
    ownNames: [],
    dependencies: [],
    extras: {},
    groups: {},
    brokenGroups: {},
    poetryGroups: [],
    requiresPython: null,
  };
  const pyprojectText = manifests['pyproject.toml'];
  // A uv.lock is exported by uv, which knows no PDM or Hatch groups (nor does the project's CI, run by uv).
  if (pyprojectText !== undefined) readPyproject(pyprojectText, project, manifests['uv.lock'] === undefined, manifests);
  const setupCfg = manifests['setup.cfg'];
  if (setupCfg !== undefined) readSetupCfg(setupCfg, project, manifests);
  const setupPy = manifests['setup.py'];
  if (setupPy !== undefined) {
    project.dependencies.push(...setupPyRequirements(setupPy));
    const name = setupPy.match(/\bname\s*=\s*["']([^"']+)["']/)?.[1];
    if (name) project.ownNames.push(normalizeName(name));
    const requires = setupPy.match(/\bpython_requires\s*=\s*["']([^"']+)["']/)?.[1];
    if (requires && !project.requiresPython) project.requiresPython = { specifier: requires, source: 'setup.py' };
  }
  project.ownNames = [...new Set(project.ownNames)];
  return project;
}

function readPyproject(
  text: string,
  project: PythonProject,
  toolGroups: boolean,
  manifests: Record<string, string>,
): void {
  let data: Record<string, unknown>;
  try {
    data = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new EnvironmentConfigError(
      `pyproject.toml cannot be parsed: ${excerpt((error as Error).message.split('\n')[0] ?? '', 120)}`,
    );
  }
  const pep621 = table(data.project);
  if (typeof pep621.name === 'string') project.ownNames.push(normalizeName(pep621.name));
  project.dependencies.push(...strings(pep621.dependencies));
  for (const [extra, requirements] of Object.entries(table(pep621['optional-dependencies'])))
    project.extras[extra] = strings(requirements);
  // setuptools' dynamic metadata: dependencies and extras read from requirements files.
  const dynamic = strings(pep621.dynamic);
  const fromFiles = table(table(table(data.tool).setuptools).dynamic);
  if (dynamic.includes('dependencies'))
    project.dependencies.push(...requirementsInFiles(table(fromFiles.dependencies).file, manifests));
  if (dynamic.includes('optional-dependencies'))
    for (const [extra, entry] of Object.entries(table(fromFiles['optional-dependencies'])))
      project.extras[extra] = requirementsInFiles(table(entry).file, manifests);
  if (typeof pep621['requires-python'] === 'string')
    project.requiresPython = { specifier: pep621['requires-python'], source: 'pyproject.toml' };

  const rawGroups = table(data['dependency-groups']);
  const tool = table(data.tool);
  const uvDev = strings(table(tool.uv)['dev-dependencies']);
  for (const name of Object.keys(rawGroups)) {
    try {
      project.groups[name] = resolveGroup(rawGroups, name, []);
    } catch (error) {
      project.groups[name] = [];
      project.brokenGroups[name] = (error as Error).message;
    }
  }
  if (uvDev.length) project.groups.dev = [...(project.groups.dev ?? []), ...uvDev];
  // PDM before PEP 735 kept its development groups in [tool.pdm.dev-dependencies], which `pdm
  // install` installs; its editable local paths (`-e file:///${PROJECT_ROOT}/…`) are the workspace's.
  const pdmDev = toolGroups ? table(table(tool.pdm)['dev-dependencies']) : {};
  for (const [name, requirements] of Object.entries(pdmDev))
    addToGroup(
      project,
      name,
      strings(requirements).filter((requirement) => !/^\s*-e\s/.test(requirement)),
    );
  if (toolGroups) readHatchEnvironments(table(table(tool.hatch).envs), project);

  const poetry = table(tool.poetry);
  if (typeof poetry.name === 'string') project.ownNames.push(normalizeName(poetry.name));
  project.poetryGroups = Object.keys(table(poetry.group));
  if (poetry['dev-dependencies'] !== undefined && !project.poetryGroups.includes('dev'))
    project.poetryGroups.push('dev');
  const python = table(poetry.dependencies).python;
  if (typeof python === 'string' && !project.requiresPython)
    project.requiresPython = { specifier: python, source: 'pyproject.toml ([tool.poetry.dependencies] python)' };
}

function addToGroup(project: PythonProject, name: string, requirements: string[]): void {
  project.groups[name] = [...(project.groups[name] ?? []), ...requirements];
}

/**
 * What `hatch test` installs when the project does not say (Hatch 1.10 and later), but
 * pytest-randomly, which reorders the tests unless hatch's own command turns it off.
 */
const hatchTestDefaults = ['pytest', 'pytest-mock', 'pytest-rerunfailures', 'pytest-xdist'];

/**
 * Hatch's environments as groups: `default` (what `hatch run` uses) as `dev`; `test`, `tests` and
 * `testing` by their names; `hatch-test` (`hatch test`'s) as `test`, with Hatch's own test tools
 * unless its `dependencies` replace them. Each with its `dependencies` and `extra-dependencies`.
 */
function readHatchEnvironments(envs: Record<string, unknown>, project: PythonProject): void {
  const groupOf: Record<string, string> = {
    default: 'dev',
    test: 'test',
    tests: 'tests',
    testing: 'testing',
    'hatch-test': 'test',
  };
  for (const [name, value] of Object.entries(envs)) {
    const group = groupOf[name];
    if (!group) continue;
    const env = table(value);
    const replaced = env.dependencies !== undefined;
    addToGroup(project, group, [
      ...(name === 'hatch-test' && !replaced ? hatchTestDefaults : strings(env.dependencies)),
      ...strings(env['extra-dependencies']),
    ]);
  }
}

/** A PEP 735 group's requirements, its `{include-group = "…"}` entries replaced by that group's. */
function resolveGroup(groups: Record<string, unknown>, name: string, seen: string[]): string[] {
  if (seen.includes(name))
    throw new EnvironmentConfigError(`pyproject.toml: dependency group ${quoted(name)} includes itself`);
  const result: string[] = [];
  for (const entry of Array.isArray(groups[name]) ? (groups[name] as unknown[]) : []) {
    if (typeof entry === 'string') result.push(entry);
    else {
      const included = table(entry)['include-group'];
      if (typeof included !== 'string') continue;
      const key = Object.keys(groups).find((group) => normalizeName(group) === normalizeName(included));
      if (!key)
        throw new EnvironmentConfigError(
          `pyproject.toml: dependency group ${quoted(name)} includes ${quoted(included)}, which is not defined`,
        );
      result.push(...resolveGroup(groups, key, [...seen, name]));
    }
  }
  return result;
}

function readSetupCfg(text: string, project: PythonProject, manifests: Record<string, string>): void {
  let section = '';
  let key = '';
  const add = (value: string) => {
    // `file: requirements.txt` (setuptools 62.6+): the requirements are that file's lines.
    const files = value.match(/^file:\s*(.*)$/)?.[1];
    const values =
      files !== undefined
        ? requirementsInFiles(files.split(/[\s,]+/), manifests)
        : value
            .split(';;')
            .map((part) => part.trim())
            .filter(Boolean);
    if (section === 'options' && key === 'install_requires') project.dependencies.push(...values);
    if (section === 'options.extras_require') (project.extras[key] ??= []).push(...values);
  };
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
      const value = (assignment[2] as string).trim();
      if (section === 'options.extras_require') project.extras[key] ??= [];
      if (section === 'metadata' && key === 'name' && value) project.ownNames.push(normalizeName(value));
      if (section === 'options' && key === 'python_requires' && value && !project.requiresPython)
        project.requiresPython = { specifier: value, source: 'setup.cfg' };
      if (value) add(value);
      continue;
    }
    if (/^\s+\S/.test(line)) add(line.trim());
  }
}

/**
 * The requirements in files setuptools reads them from (setup.cfg's `file:`, pyproject's
 * `[tool.setuptools.dynamic]`): one a line, comments dropped. A file not read with the manifests
 * (not named like a requirements file) gives none.
 */
function requirementsInFiles(paths: unknown, manifests: Record<string, string>): string[] {
  const list = typeof paths === 'string' ? [paths] : strings(paths);
  return list.flatMap((path) =>
    (manifests[posix.normalize(path.trim())] ?? '')
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .filter((line) => line && !line.startsWith('-')),
  );
}

/** The literal install_requires list of a setup.py (best effort: a computed list is not read). */
export function setupPyRequirements(text: string): string[] {
  const list = text.match(/install_requires\s*=\s*\[([^\]]*)\]/)?.[1];
  if (!list) return [];
  return [...list.matchAll(/["']([^"']+)["']/g)].map((match) => match[1] as string);
}

/**
 * The extras and groups to install. Named in durable-debugger.json: exactly those (each must be
 * defined); else the test-ish ones the project defines, and the extras its CI installs it with
 * (`ciExtras`: a `-e .[socks]` line, tox's `extras`, nox's and the CI job's installs) where the
 * project defines them; the groups CI's tox names (`ciGroups`) instead of the test-ish ones; with
 * none of those, the ones that install pytest. Docs, lint and release groups stay out.
 */
export function selectExtrasAndGroups(
  project: PythonProject,
  named: { extras?: string[]; groups?: string[] },
  ciExtras: readonly string[] = [],
  ciGroups: readonly string[] | null = null,
): PythonSelection {
  const definedGroups = [...new Set([...Object.keys(project.groups), ...project.poetryGroups])];
  const byCi = new Set(ciExtras.map(normalizeName));
  const ciDefined = definedGroups.filter((group) =>
    ciGroups?.some((name) => normalizeName(name) === normalizeName(group)),
  );
  const pick = (kind: 'extras' | 'groups', defined: string[]): string[] => {
    const wanted = named[kind];
    // The groups CI's tox installs are the tests' (platformdirs' `test`, not its `dev` of docs and linters).
    if (!wanted && kind === 'groups' && ciDefined.length) return ciDefined;
    if (!wanted)
      return defined.filter(
        (name) => testExtras.includes(normalizeName(name)) || (kind === 'extras' && byCi.has(normalizeName(name))),
      );
    const missing = wanted.filter(
      (name) => !defined.some((candidate) => normalizeName(candidate) === normalizeName(name)),
    );
    if (missing.length) {
      const what = kind === 'extras' ? 'extra' : 'dependency group';
      throw new EnvironmentConfigError(
        `${repositoryConfigFile} names the ${what}(s) ${excerpt(missing.join(', '), 200)}, which the project does not define (${defined.length ? `it defines ${excerpt(defined.join(', '), 200)}` : `it defines no ${what}s`})`,
      );
    }
    return defined.filter((candidate) => wanted.some((name) => normalizeName(name) === normalizeName(candidate)));
  };
  const selection = { extras: pick('extras', Object.keys(project.extras)), groups: pick('groups', definedGroups) };
  if (named.extras || named.groups || selection.extras.length || selection.groups.length) return selection;
  // No test-ish name: the extras and groups that install the test runner are the tests' (idna's `all`).
  const runsTests = (requirements: string[] = []) =>
    requirements.some((requirement) => requirementName(requirement) === 'pytest');
  return {
    extras: Object.keys(project.extras).filter((name) => runsTests(project.extras[name])),
    groups: Object.keys(project.groups).filter((name) => runsTests(project.groups[name])),
  };
}

/**
 * The requirements to install without a lock: dependencies plus the selected extras and groups,
 * without the project itself (a self-reference with extras, `pkg[test]`, brings those extras' requirements).
 */
export function selectedRequirements(project: PythonProject, selection: PythonSelection): string[] {
  const result: string[] = [];
  const extrasSeen = new Set<string>();
  const add = (requirements: string[]) => {
    for (const requirement of requirements) {
      if (!project.ownNames.includes(requirementName(requirement))) {
        result.push(requirement);
        continue;
      }
      const extras = requirement.match(/\[([^\]]*)\]/)?.[1]?.split(',') ?? [];
      for (const extra of extras.map((name) => name.trim())) {
        const key = Object.keys(project.extras).find((name) => normalizeName(name) === normalizeName(extra));
        if (key && !extrasSeen.has(key)) {
          extrasSeen.add(key);
          add(project.extras[key] as string[]);
        }
      }
    }
  };
  add(project.dependencies);
  for (const extra of selection.extras) {
    if (extrasSeen.has(extra)) continue;
    extrasSeen.add(extra);
    add(project.extras[extra] ?? []);
  }
  for (const group of selection.groups) {
    if (project.brokenGroups[group]) throw new EnvironmentConfigError(project.brokenGroups[group]);
    add(project.groups[group] ?? []);
  }
  return [...new Set(result)];
}
