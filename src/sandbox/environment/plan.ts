// What a repository needs installed before its tests can run, read from its manifests: the
// repository's own choice first (durable-debugger.json or the run's input: an image, setup commands,
// a Dockerfile), then each ecosystem in turn (ecosystems.ts).
// Pure: the caller reads the files; this decides what to install and how.
import { thisHost, type PlanHost } from './ecosystem.js';
import { ecosystems, repositoryProbes } from './ecosystems.js';
import { repositoryLimitCeilings, type RepositoryLimits } from '../../agent/input.js';
import {
  EnvironmentConfigError,
  repositoryConfigFile,
  repositoryDockerfile,
  type EnvironmentChoice,
  type EnvironmentPlan,
  type RepositoryConfig,
} from './planTypes.js';
import { parseDockerfile } from './dockerfile.js';
import { excerpt } from './excerpt.js';
import { checkedAptPackages, withAptPackages } from './debian/debianPackages.js';
import { ciTestJob, isCiWorkflow, type CiTestJob } from './ciTestJob.js';

/** Repository files that decide the environment: read these (those present) and pass them to planEnvironment. */
export function manifestCandidates(files: string[]): string[] {
  const ours = new Set([repositoryConfigFile, repositoryDockerfile]);
  return files.filter(
    (path) => ours.has(path) || isCiWorkflow(path) || ecosystems.some((ecosystem) => ecosystem.isManifest(path)),
  );
}

/** Reads durable-debugger.json; a bad file is the user's to fix, with a message that says how. */
export function parseRepositoryConfig(text: string | undefined): RepositoryConfig {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the mistake: shown only as an excerpt.
    throw new EnvironmentConfigError(
      `${repositoryConfigFile} is not valid JSON (${excerpt((error as Error).message, 120)})`,
    );
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new EnvironmentConfigError(`${repositoryConfigFile} must hold a JSON object`);
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter(
    (key) => !['image', 'setup', 'build', 'testCommand', 'extras', 'groups', 'sandbox', 'apt', '$schema'].includes(key),
  );
  if (unknown.length)
    throw new EnvironmentConfigError(
      `${repositoryConfigFile}: unknown field(s) ${unknown.join(', ')} (known: image, setup, build, testCommand, extras, groups, sandbox, apt)`,
    );

  const choice: RepositoryConfig = {};
  if (record.image !== undefined) {
    if (typeof record.image !== 'string' || !record.image.trim())
      throw new EnvironmentConfigError(`${repositoryConfigFile}: image must be an image name`);
    choice.image = record.image.trim();
  }
  if (record.setup !== undefined) {
    const setup = typeof record.setup === 'string' ? [record.setup] : record.setup;
    if (!Array.isArray(setup) || !setup.every((line) => typeof line === 'string' && line.trim())) {
      throw new EnvironmentConfigError(`${repositoryConfigFile}: setup must be a command or a list of commands`);
    }
    choice.setup = setup as string[];
  }
  if (record.build !== undefined) {
    const build = typeof record.build === 'string' ? [record.build] : record.build;
    if (!Array.isArray(build) || !build.every((line) => typeof line === 'string' && line.trim())) {
      throw new EnvironmentConfigError(
        `${repositoryConfigFile}: build must be a command, a list of commands, or [] for none`,
      );
    }
    choice.build = build as string[];
  }
  if (record.sandbox !== undefined) choice.sandbox = repositoryLimits(record.sandbox);
  if (record.apt !== undefined) choice.apt = checkedAptPackages(record.apt, `${repositoryConfigFile}: apt`);
  for (const field of ['extras', 'groups'] as const) {
    const names = record[field];
    if (names === undefined) continue;
    if (!Array.isArray(names) || !names.every((name) => typeof name === 'string' && /^[\w.-]+$/.test(name)))
      throw new EnvironmentConfigError(
        `${repositoryConfigFile}: ${field} must be a list of Python ${field === 'extras' ? 'extra' : 'dependency group'} names`,
      );
    choice[field] = names as string[];
  }
  if (record.testCommand !== undefined) {
    if (typeof record.testCommand !== 'string' || !record.testCommand.trim())
      throw new EnvironmentConfigError(`${repositoryConfigFile}: testCommand must be a command`);
    choice.testCommand = record.testCommand;
  }
  return choice;
}

/** durable-debugger.json `sandbox`: limits the suite needs, each a positive number within what a repository may ask. */
function repositoryLimits(value: unknown): RepositoryLimits {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new EnvironmentConfigError(`${repositoryConfigFile}: sandbox must be an object such as {"memoryMb": 2048}`);
  const limits: RepositoryLimits = {};
  for (const [key, number] of Object.entries(value)) {
    const ceiling = repositoryLimitCeilings[key as keyof RepositoryLimits];
    if (ceiling === undefined)
      throw new EnvironmentConfigError(
        `${repositoryConfigFile}: sandbox.${key} is not a limit a repository may raise (it may raise ${Object.keys(repositoryLimitCeilings).join(', ')})`,
      );
    if (typeof number !== 'number' || !(number > 0) || (key !== 'cpus' && !Number.isInteger(number)))
      throw new EnvironmentConfigError(
        `${repositoryConfigFile}: sandbox.${key} must be a positive ${key === 'cpus' ? 'number' : 'whole number'}`,
      );
    if (number > ceiling)
      throw new EnvironmentConfigError(
        `${repositoryConfigFile}: sandbox.${key} ${number} is above what a repository may ask for (${ceiling}); the run's own options (--memory, --cpus, --pids, --command-timeout, or sandbox in the run input) may go higher`,
      );
    limits[key as keyof RepositoryLimits] = number;
  }
  return limits;
}

/**
 * The environment a repository needs, or null when the sandbox image already has everything
 * (no declared dependencies). `choice` (run input) overrides the repository's config file; `host`
 * is what a Node choice falls back on (this machine's Node, today's LTS).
 */
export function planEnvironment(
  files: string[],
  manifests: Record<string, string>,
  choice: EnvironmentChoice = {},
  host: PlanHost = thisHost(),
): EnvironmentPlan | null {
  const chosen = { ...parseRepositoryConfig(manifests[repositoryConfigFile]), ...definedOnly(choice) };
  const found = planWithoutBuild(files, manifests, chosen, host);
  if (!found) return null;
  // Debian packages the repository names (durable-debugger.json `apt`), for any plan that builds.
  const plan = withCiVariables(withAptPackages(found, chosen.apt ?? []), ciTestJob(manifests));
  const build = chosen.build ?? plan.build;
  // Tool caches (find-cache-dir's CACHE_DIR) go to a folder each test run empties: no cache outlives an edit.
  return build.length
    ? { ...plan, build, containerEnv: [...plan.containerEnv, `CACHE_DIR=${buildCacheFolder}`] }
    : { ...plan, build };
}

/**
 * The variables CI gives the tests (ciTestJob.ts), before the plan's own: a name the plan sets
 * (tox's setenv, which applies inside the tox that CI runs; the image's) keeps the plan's value.
 */
function withCiVariables(plan: EnvironmentPlan, ci: CiTestJob | null): EnvironmentPlan {
  const nameOf = (line: string) => line.slice(0, line.indexOf('='));
  const own = new Set(plan.containerEnv.map(nameOf));
  const lines = ci?.variables.filter((line) => !own.has(nameOf(line))) ?? [];
  if (!lines.length) return plan;
  return {
    ...plan,
    toolchainNotes: [...(plan.toolchainNotes ?? []), `CI's variables ${lines.map(nameOf).join(', ')} (${ci?.from})`],
    containerEnv: [...lines, ...plan.containerEnv],
  };
}

/** Where build tools keep their caches in the sandbox; emptied before every build. */
export const buildCacheFolder = '/tmp/durable-debugger-build-cache';

/** The test command run after the build steps, so the tests never load output older than the agent's edits. */
export function withBuildSteps(build: string[], testCommand: string): string {
  if (build.length === 0) return testCommand;
  return [
    `rm -rf ${buildCacheFolder}`,
    ...build.map((command) => (/[;&|]/.test(command) ? `(${command})` : command)),
    testCommand,
  ].join(' && ');
}

function planWithoutBuild(
  files: string[],
  manifests: Record<string, string>,
  chosen: RepositoryConfig,
  host: PlanHost,
): EnvironmentPlan | null {
  if (chosen.setup?.length) {
    return {
      kind: 'custom',
      description: `setup · ${chosen.setup.join(' && ')}`,
      baseImage: chosen.image,
      files: {},
      script: ['set -e', 'cd /workspace', ...chosen.setup].join('\n'),
      needsRepository: true,
      toolchains: [],
      testCommand: chosen.testCommand,
      build: [],
      containerEnv: [],
      probes: repositoryProbes(files, manifests),
    };
  }
  if (chosen.image) {
    return {
      kind: 'image',
      description: `image · ${chosen.image}`,
      baseImage: chosen.image,
      files: {},
      script: '',
      needsRepository: false,
      toolchains: [],
      testCommand: chosen.testCommand,
      build: [],
      containerEnv: [],
      probes: repositoryProbes(files, manifests),
    };
  }
  const dockerfile = manifests[repositoryDockerfile];
  if (dockerfile !== undefined) {
    const parsed = parseDockerfile(dockerfile);
    return {
      kind: 'dockerfile',
      description: `dockerfile · ${repositoryDockerfile}`,
      dockerfile: { text: dockerfile, fromImages: parsed.fromImages, copiedImages: parsed.copiedImages },
      files: {},
      script: '',
      // COPY and ADD read the repository: then the image belongs to this snapshot of it.
      needsRepository: parsed.readsRepository,
      toolchains: [],
      testCommand: chosen.testCommand,
      build: [],
      containerEnv: [],
      probes: repositoryProbes(files, manifests),
    };
  }
  for (const ecosystem of ecosystems) {
    const plan = ecosystem.plan({ files, manifests, chosen, host });
    if (plan) return plan;
  }
  return null;
}

function definedOnly(choice: EnvironmentChoice): EnvironmentChoice {
  return Object.fromEntries(Object.entries(choice).filter(([, value]) => value !== undefined)) as EnvironmentChoice;
}

/** What a failed install means for the user, with the installer's last lines. */
export function explainInstallFailure(description: string, exitCode: number, lastLines: string[]): string {
  const output = lastLines.join('\n');
  const unreachable =
    /Could not fetch URL|NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network is unreachable/i.test(
      output,
    );
  const gitSource = gitSourceIn(output);
  const cause =
    gitSource !== null
      ? `A dependency comes from a git repository${gitSource}, not from a package registry: builds reach only the registries, not git hosts (docs/environments.md). Depend on a released version of it, or name an image that has it installed ("image" in durable-debugger.json).`
      : unreachable
        ? 'The package registries could not be reached from the build container: check the network, the proxy (HTTPS_PROXY) and the registry settings (pip config, .npmrc). Once built, an environment is reused without network.'
        : `Installing the repository's dependencies failed (${description}, exit code ${exitCode}).`;
  return `${cause} The installer's last lines:\n${output}`;
}

/**
 * " (hypercorn, git+https://github.com/…)" when the installer failed to fetch a git repository (pip's
 * `name @ git+https://…`, npm's git and `github:` dependencies): git itself refused by the build's
 * proxy, or, in an image without git, git missing. "" for a git source it did not name, null for any
 * other failure.
 */
function gitSourceIn(output: string): string | null {
  const gitFailed =
    /fatal: unable to access '|fatal: could not read Username|fatal: Could not read from remote repository|An unknown git error occurred|Cannot find command 'git'|No such file or directory: 'git'|syscall spawn git\b|spawn git ENOENT|Couldn't find the binary git|\bgit: not found/;
  if (!gitFailed.test(output)) return null;
  const url = output.match(/\bgit\+(?:https?|ssh):\/\/[^\s@)'"]+|\b(?:https?|ssh):\/\/[^\s)'"]+\.git\b/)?.[0];
  const name = output.match(/Collecting (\S+) @ git\+/)?.[1];
  const named = [name, url].filter(Boolean).join(', ');
  return named ? ` (${named})` : '';
}
