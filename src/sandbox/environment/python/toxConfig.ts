// What a project's tox.ini gives its tests, as `tox` in CI gives it: [testenv]'s `deps`, installed
// beside the project (many libraries declare their test tools, pytest plugins, freezegun, hypothesis,
// nowhere else), the extras it installs the project with, and its `setenv` variables. Read without
// an INI parser: tox's own rules for the lines that matter here.
import { parse as parseToml } from 'smol-toml';
import { keptBySandbox } from '../../container/sandboxEnv.js';
import { projectExtrasNamed } from './projectLine.js';
import { valueAt } from './tomlPath.js';

/** The file the build gets them in, beside the repository's requirements files (`-r` lines stay relative to the root). */
export const toxRequirements = 'durable-debugger-tox-deps.txt';

/**
 * [testenv]'s `deps`, one requirement or pip option a line: continuation lines are indented; a
 * factor-conditional line is kept only for the test environments (`unit: pytest`; `py38: mock` is
 * left out), and a line with any other substitution than {toxinidir} cannot be read without tox: it
 * is left out, as are the project itself (`.`, `-e .`, `.[tests]`) and comments.
 */
export function toxTestDeps(text: string | undefined): string[] {
  return testenvLines(text, 'deps')
    .map((line) => line.replace(/\{toxinidir\}\/?/g, './').replace(/^(-[rc])\s*/, '$1 '))
    .filter((line) => !/[{}]/.test(line) && !/^(-e\s+)?\.\.?(\/|\[|$)/.test(line));
}

/** The extras CI's tox installs the project with: [testenv]'s `extras`, and a `.[tests]` line of its deps. */
export function toxExtras(text: string | undefined): string[] {
  const deps = testenvLines(text, 'deps').map((line) => line.replace(/\{toxinidir\}\/?/g, './'));
  return [
    ...testenvLines(text, 'extras').flatMap((line) => line.split(',').map((extra) => extra.trim())),
    ...projectExtrasNamed(deps),
  ].filter(Boolean);
}

/**
 * The dependency groups CI's tox installs (tox 4.22's `dependency_groups`): [testenv]'s in tox.ini,
 * [env_run_base]'s in tox.toml or pyproject.toml's [tool.tox]; null when tox names none.
 */
export function toxDependencyGroups(manifests: Record<string, string>): string[] | null {
  const fromIni = testenvLines(manifests['tox.ini'], 'dependency_groups').flatMap((line) => line.split(','));
  const fromToml = [envRunBase(manifests['tox.toml']), envRunBase(manifests['pyproject.toml'], 'tool', 'tox')].flatMap(
    (base) => (Array.isArray(base?.dependency_groups) ? base.dependency_groups : []),
  );
  const groups = [...fromIni, ...fromToml]
    .filter((group): group is string => typeof group === 'string')
    .map((group) => group.trim())
    .filter((group) => /^[\w.-]+$/.test(group));
  return groups.length ? [...new Set(groups)] : null;
}

/** The [env_run_base] table of a TOML file (under `keys`), if it has one. */
function envRunBase(text: string | undefined, ...keys: string[]): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const base = valueAt(parseToml(text), ...keys, 'env_run_base');
    return base && typeof base === 'object' ? (base as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * [testenv]'s `setenv`, as NAME=value lines: {toxinidir} is the workspace; a line with any other
 * substitution, a factor condition other than the test environments', or a name the sandbox keeps
 * (sandboxEnv.ts) is left out.
 */
export function toxTestEnv(text: string | undefined, workspace: string): string[] {
  return testenvLines(text, 'setenv').flatMap((line) => {
    const match = line.match(/^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/);
    if (!match || keptBySandbox(match[1] as string)) return [];
    const value = (match[2] as string).replace(/\{toxinidir\}/g, workspace);
    return /[{}]/.test(value) ? [] : [`${match[1]}=${value}`];
  });
}

/**
 * A key's value in [testenv], one entry a line (continuation lines are indented), without comments.
 * A factor-conditional line is kept, its condition taken off, when the condition holds for the
 * environments CI runs the tests in (testFactorCondition); other factor-conditional lines are left out.
 */
function testenvLines(text: string | undefined, key: string): string[] {
  if (text === undefined) return [];
  const section = text.replace(/\r\n/g, '\n').match(/^\[testenv\][ \t]*\n((?:(?!\[)[^\n]*\n?)*)/m)?.[1] ?? '';
  const value =
    section.match(new RegExp(`^${key}[ \\t]*=[ \\t]*([^\\n]*(?:\\n[ \\t]+[^\\n]*|\\n[ \\t]*(?=\\n))*)`, 'm'))?.[1] ??
    '';
  return value
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .flatMap((line) => {
      const conditional = line.match(/^([\w{},.!-]+):\s+(.*)$/);
      if (!conditional) return line ? [line] : [];
      return testFactorCondition(conditional[1] as string) ? [conditional[2] as string] : [];
    });
}

/** Factors that name the environments running the tests: pyparsing's `py3{10,11}-unit`, `test`, `pytest`. */
const testFactors = new Set(['unit', 'test', 'tests', 'testing', 'pytest']);

/** A condition's alternatives as tox reads them: `py39,{py310,py311}-unit` is py39, py310-unit, py311-unit. */
function factorAlternatives(condition: string): string[] {
  return condition.split(/,(?![^{}]*\})/).flatMap(expandBraces);
}

function expandBraces(alternative: string): string[] {
  const group = alternative.match(/\{([^{}]*)\}/);
  if (!group || group.index === undefined) return [alternative];
  const before = alternative.slice(0, group.index);
  const after = alternative.slice(group.index + group[0].length);
  return (group[1] as string).split(',').flatMap((choice) => expandBraces(`${before}${choice.trim()}${after}`));
}

/**
 * Whether a factor condition (`unit`, `unit-!py315t`, `py39,unit`, `{py310,py311}-unit`) holds in a
 * test environment: one of its alternatives (`,`, braces expanded) has a test factor, and its other
 * factors (`-`) are negated or name a Python (`py312`, `pypy3`). `py38: mock` alone is for one
 * interpreter's environment, and left out.
 */
function testFactorCondition(condition: string): boolean {
  return factorAlternatives(condition).some((alternative) => {
    const factors = alternative.split('-').filter(Boolean);
    const positive = factors.filter((factor) => !factor.startsWith('!'));
    return (
      positive.some((factor) => testFactors.has(factor)) &&
      positive.every((factor) => testFactors.has(factor) || /^(py|pypy)\d*t?$/.test(factor))
    );
  });
}
