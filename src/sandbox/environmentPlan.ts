// What a repository needs installed before its tests can run, read from its manifests: the
// repository's own choice first (durable-debugger.json or the run's input), then Python
// (requirements*.txt, pyproject.toml, setup.cfg, setup.py) and Node (package.json + lockfile).
// Pure: the caller reads the files; this decides what to install and how.
import { parse as parseToml } from 'smol-toml';

export const repositoryConfigFile = 'durable-debugger.json';
/** A Dockerfile at this path in the repository is built as its environment. */
export const repositoryDockerfile = 'durable-debugger.Dockerfile';

/** Where the environment puts what it installs: outside /workspace, so the agent never sees it. */
export const environmentPaths = {
  venv: '/opt/venv',
  nodeProject: '/opt/env',
  /** Node looks for modules in every parent folder of /workspace, so /node_modules is found. */
  nodeModules: '/node_modules',
} as const;

export interface EnvironmentChoice {
  /** An image to use as the environment (or as the base of the setup commands). */
  image?: string;
  /** Shell commands run once, with network, in a copy of the repository at /workspace. */
  setup?: string[];
  testCommand?: string;
}

/** What durable-debugger.json may name beyond the run input's choice. */
export interface RepositoryConfig extends EnvironmentChoice {
  /** Commands that make what the tests load (e.g. `npm run build`), run before every test run; [] for none. */
  build?: string[];
}

/** pip's wheel, node with npm, or an npm package (`npm:pnpm@9`) packed from the registry into /toolchain/<toolchainFile>. */
export type Toolchain = 'pip' | 'node' | `npm:${string}`;

/** The file a packed npm toolchain is kept as: `npm:pnpm@9` → pnpm-9.tgz, `npm:@yarnpkg/cli-dist@4` → yarnpkg-cli-dist-4.tgz. */
export function toolchainFile(toolchain: `npm:${string}`): string {
  return `${toolchain.slice(4).replace(/^@/, '').replace(/[/@]/g, '-')}.tgz`;
}

export type EnvironmentKind = 'python' | 'node' | 'custom' | 'image' | 'dockerfile';

export interface EnvironmentPlan {
  kind: EnvironmentKind;
  /** For people: "python · pip install -r requirements.txt". */
  description: string;
  /** The image to build from; undefined means the sandbox base image. */
  baseImage?: string;
  /** Files of the repository the build needs (path → text), copied in read-only. */
  files: Record<string, string>;
  /** The build's shell script, run as root with network. */
  script: string;
  /** The Dockerfile built as the environment (kind dockerfile); its FROM images must be on the engine. */
  dockerfile?: { text: string; fromImages: string[] };
  /** True when the build needs the whole repository (custom setup commands, a Dockerfile that copies files). */
  needsRepository: boolean;
  /** Toolchains to bring into the build container. */
  toolchains: Toolchain[];
  testCommand?: string;
  /** Commands run before every test run in the sandbox (the tests load their output): see withBuildSteps. */
  build: string[];
  /** PATH and other variables the sandbox container needs to use what was installed. */
  containerEnv: string[];
}

// Commands in the sandbox get PATH=/usr/local/bin:...: the environment puts its tools there.
const pythonEnv = [`VIRTUAL_ENV=${environmentPaths.venv}`];
const nodeEnv = ['NPM_CONFIG_OFFLINE=true', 'NPM_CONFIG_UPDATE_NOTIFIER=false', 'NPM_CONFIG_FUND=false', 'NPM_CONFIG_AUDIT=false'];

/** Repository files that decide the environment: read these (those present) and pass them to planEnvironment. */
export function manifestCandidates(files: string[]): string[] {
  const wanted = new Set([
    repositoryConfigFile,
    repositoryDockerfile,
    'pyproject.toml',
    'setup.cfg',
    'setup.py',
    'package.json',
    'package-lock.json',
    'npm-shrinkwrap.json',
    'yarn.lock',
    'pnpm-lock.yaml',
    'uv.lock',
    'poetry.lock',
  ]);
  return files.filter((path) => wanted.has(path) || /^requirements[^/]*\.txt$/.test(path));
}

export class EnvironmentConfigError extends Error {}

/** Reads durable-debugger.json; a bad file is the user's to fix, with a message that says how. */
export function parseRepositoryConfig(text: string | undefined): RepositoryConfig {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new EnvironmentConfigError(`${repositoryConfigFile} is not valid JSON (${(error as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new EnvironmentConfigError(`${repositoryConfigFile} must hold a JSON object`);
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !['image', 'setup', 'build', 'testCommand', '$schema'].includes(key));
  if (unknown.length) throw new EnvironmentConfigError(`${repositoryConfigFile}: unknown field(s) ${unknown.join(', ')} (known: image, setup, build, testCommand)`);
  const choice: RepositoryConfig = {};
  if (record.image !== undefined) {
    if (typeof record.image !== 'string' || !record.image.trim()) throw new EnvironmentConfigError(`${repositoryConfigFile}: image must be an image name`);
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
      throw new EnvironmentConfigError(`${repositoryConfigFile}: build must be a command, a list of commands, or [] for none`);
    }
    choice.build = build as string[];
  }
  if (record.testCommand !== undefined) {
    if (typeof record.testCommand !== 'string' || !record.testCommand.trim()) throw new EnvironmentConfigError(`${repositoryConfigFile}: testCommand must be a command`);
    choice.testCommand = record.testCommand;
  }
  return choice;
}

/**
 * The environment a repository needs, or null when the sandbox image already has everything
 * (no declared dependencies). `choice` (run input) overrides the repository's config file.
 */
export function planEnvironment(files: string[], manifests: Record<string, string>, choice: EnvironmentChoice = {}): EnvironmentPlan | null {
  const chosen = { ...parseRepositoryConfig(manifests[repositoryConfigFile]), ...definedOnly(choice) };
  const plan = planWithoutBuild(files, manifests, chosen);
  if (!plan) return null;
  const build = chosen.build ?? plan.build;
  // Tool caches (find-cache-dir's CACHE_DIR) go to a folder each test run empties: no cache outlives an edit.
  return build.length ? { ...plan, build, containerEnv: [...plan.containerEnv, `CACHE_DIR=${buildCacheFolder}`] } : { ...plan, build };
}

/** Where build tools keep their caches in the sandbox; emptied before every build. */
export const buildCacheFolder = '/tmp/durable-debugger-build-cache';

/** The test command run after the build steps, so the tests never load output older than the agent's edits. */
export function withBuildSteps(build: string[], testCommand: string): string {
  if (build.length === 0) return testCommand;
  return [`rm -rf ${buildCacheFolder}`, ...build.map((command) => (/[;&|]/.test(command) ? `(${command})` : command)), testCommand].join(' && ');
}

function planWithoutBuild(files: string[], manifests: Record<string, string>, chosen: RepositoryConfig): EnvironmentPlan | null {
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
    };
  }
  const dockerfile = manifests[repositoryDockerfile];
  if (dockerfile !== undefined) {
    return {
      kind: 'dockerfile',
      description: `dockerfile · ${repositoryDockerfile}`,
      dockerfile: { text: dockerfile, fromImages: dockerfileBaseImages(dockerfile) },
      files: {},
      script: '',
      // COPY and ADD read the repository: then the image belongs to this snapshot of it.
      needsRepository: /^\s*(COPY|ADD)\s/im.test(dockerfile),
      toolchains: [],
      testCommand: chosen.testCommand,
      build: [],
      containerEnv: [],
    };
  }
  const node = planNode(files, manifests);
  if (node) return { ...node, testCommand: chosen.testCommand ?? node.testCommand };
  const python = planPython(files, manifests);
  if (python) return { ...python, testCommand: chosen.testCommand };
  return null;
}

/**
 * The images a Dockerfile builds FROM (each must be on this engine: nothing is pulled), leaving out
 * `scratch` and earlier stages. A FROM with a build argument cannot be checked: it is an error.
 */
export function dockerfileBaseImages(text: string): string[] {
  const stages = new Set<string>();
  const images: string[] = [];
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const line of lines) {
    const match = line.match(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$/i);
    if (!match) continue;
    const image = match[1] as string;
    if (image.includes('$')) throw new EnvironmentConfigError(`${repositoryDockerfile}: FROM ${image} uses a build argument; name the image itself`);
    if (image.toLowerCase() !== 'scratch' && !stages.has(image.toLowerCase())) images.push(image);
    if (match[2]) stages.add(match[2].toLowerCase());
  }
  if (images.length === 0 && !lines.some((line) => /^\s*FROM\s/i.test(line))) throw new EnvironmentConfigError(`${repositoryDockerfile} has no FROM line`);
  return [...new Set(images)];
}

function definedOnly(choice: EnvironmentChoice): EnvironmentChoice {
  return Object.fromEntries(Object.entries(choice).filter(([, value]) => value !== undefined)) as EnvironmentChoice;
}

function planNode(files: string[], manifests: Record<string, string>): EnvironmentPlan | null {
  const text = manifests['package.json'];
  if (text === undefined) return null;
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const dependencyCount = ['dependencies', 'devDependencies', 'optionalDependencies']
    .map((field) => Object.keys((manifest[field] as Record<string, string> | undefined) ?? {}).length)
    .reduce((sum, count) => sum + count, 0);
  if (dependencyCount === 0) return null;
  const manager = nodePackageManager(manifests);
  const inputFiles: Record<string, string> = { 'package.json': withoutLifecycleScripts(manifest, text) };
  if (manager.lockfile) inputFiles[manager.lockfile] = manifests[manager.lockfile] as string;
  const dir = environmentPaths.nodeProject;
  const script = [
    'set -e',
    installNodeToolchain,
    ...(manager.tool ? [installPackageManager(manager.tool)] : []),
    `mkdir -p ${dir} && cp /env-input/package.json ${manager.lockfile ? `/env-input/${manager.lockfile} ` : ''}${dir}/`,
    `cd ${dir}`,
    // Lifecycle scripts of the repository itself would need its sources: dependencies' own scripts still run.
    ...manager.env.map((assignment) => `export ${assignment}`),
    manager.install,
    `ln -s ${dir}/node_modules ${environmentPaths.nodeModules}`,
    `echo "packages: $(ls -d node_modules/[!@.]* node_modules/@*/* 2>/dev/null | wc -l)"`,
  ].join('\n');
  const scripts = manifest.scripts as Record<string, unknown> | undefined;
  const hasTest = typeof scripts?.test === 'string' && !scripts.test.includes('no test specified');
  return {
    kind: 'node',
    description: `node · ${manager.install.replace(/ --no-audit --no-fund$/, '')}`,
    files: inputFiles,
    script,
    needsRepository: false,
    toolchains: manager.tool ? ['node', manager.tool.toolchain] : ['node'],
    testCommand: hasTest ? 'npm test' : undefined,
    build: nodeBuild(files, manifest),
    containerEnv: nodeEnv,
  };
}

interface PackageManagerTool {
  toolchain: `npm:${string}`;
  /** The command's name in /usr/local/bin and the file that runs it, inside the packed package. */
  command: string;
  bin: string;
}

interface NodePackageManager {
  lockfile?: string;
  tool?: PackageManagerTool;
  install: string;
  env: string[];
}

/**
 * The installer the repository's lockfile belongs to, installing exactly what it locks:
 * npm ci, pnpm install --frozen-lockfile (the pnpm major its lockfile version needs),
 * yarn 1 --frozen-lockfile, or yarn 4 --immutable with node_modules (not Plug'n'Play, which
 * the workspace could not find).
 */
export function nodePackageManager(manifests: Record<string, string>): NodePackageManager {
  const npmLock = ['package-lock.json', 'npm-shrinkwrap.json'].find((name) => manifests[name] !== undefined);
  if (npmLock) return { lockfile: npmLock, install: 'npm ci --no-audit --no-fund', env: [] };
  const pnpmLock = manifests['pnpm-lock.yaml'];
  if (pnpmLock !== undefined) {
    const version = Number(pnpmLock.match(/^lockfileVersion:\s*'?(\d+)/m)?.[1] ?? 9);
    const major = version >= 9 ? 9 : version >= 6 ? 8 : 7;
    return {
      lockfile: 'pnpm-lock.yaml',
      tool: { toolchain: `npm:pnpm@${major}`, command: 'pnpm', bin: 'bin/pnpm.cjs' },
      install: 'pnpm install --frozen-lockfile',
      env: ['npm_config_update_notifier=false'],
    };
  }
  const yarnLock = manifests['yarn.lock'];
  if (yarnLock !== undefined) {
    if (/^__metadata:/m.test(yarnLock)) {
      return {
        lockfile: 'yarn.lock',
        tool: { toolchain: 'npm:@yarnpkg/cli-dist@4', command: 'yarn', bin: 'bin/yarn.js' },
        install: 'yarn install --immutable',
        env: ['YARN_NODE_LINKER=node-modules', 'YARN_ENABLE_TELEMETRY=0', 'YARN_ENABLE_GLOBAL_CACHE=0'],
      };
    }
    return {
      lockfile: 'yarn.lock',
      tool: { toolchain: 'npm:yarn@1', command: 'yarn', bin: 'bin/yarn.js' },
      install: 'yarn install --frozen-lockfile --non-interactive',
      env: [],
    };
  }
  return { install: 'npm install --no-audit --no-fund', env: [] };
}

/** Unpacks a package manager (packed from the registry on the host) into /usr/local, next to npm. */
function installPackageManager(tool: PackageManagerTool): string {
  const folder = `/usr/local/lib/node_modules/${tool.command}`;
  return [
    `mkdir -p ${folder}`,
    `tar xzf /toolchain/${toolchainFile(tool.toolchain)} --strip-components=1 -C ${folder}`,
    `ln -sf ${folder}/${tool.bin} /usr/local/bin/${tool.command}`,
    `echo "${tool.command} $(${tool.command} --version)"`,
  ].join('\n');
}

const lifecycleScripts = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];

/** The package.json the install sees: the repository's own lifecycle scripts (a `prepare` build) need its sources, which are not there. */
function withoutLifecycleScripts(manifest: Record<string, unknown>, text: string): string {
  const scripts = manifest.scripts as Record<string, unknown> | undefined;
  if (!scripts || !lifecycleScripts.some((name) => name in scripts)) return text;
  const kept = Object.fromEntries(Object.entries(scripts).filter(([name]) => !lifecycleScripts.includes(name)));
  return JSON.stringify({ ...manifest, scripts: kept }, null, 2) + '\n';
}

/**
 * The build the tests need: when the package's entry points (main, module, exports, bin) name files
 * the repository does not have, they are build output, made by its `build` (or `prepare`) script.
 * Nothing when `npm test` builds already (a pretest script, or a test script that runs the build).
 */
export function nodeBuild(files: string[], manifest: Record<string, unknown>): string[] {
  const scripts = (manifest.scripts ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof scripts[name] === 'string' ? (scripts[name] as string) : '');
  // A `prepare` that installs git hooks is no build.
  const script = text('build').trim() ? 'build' : text('prepare').trim() && !/husky|simple-git-hooks|lefthook/.test(text('prepare')) ? 'prepare' : null;
  if (!script) return [];
  if (/\b(npm run|yarn|pnpm( run)?) (build|prepare)\b|\btsc\b/.test(`${text('pretest')} ${text('test')}`)) return [];
  const present = new Set(files);
  const missing = entryPoints(manifest).some((path) => !present.has(path));
  return missing ? [`npm run ${script}`] : [];
}

function entryPoints(manifest: Record<string, unknown>): string[] {
  const found: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string') found.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect(manifest.main);
  collect(manifest.module);
  collect(manifest.exports);
  collect(manifest.bin);
  return found
    .filter((path) => !path.includes('*'))
    .map((path) => path.replace(/^\.\//, ''))
    .filter((path) => path && !path.startsWith('../') && !path.startsWith('/'));
}

/** Copies node and npm from the toolchain folder (packed from the registry on the host) into /usr/local. */
const installNodeToolchain = [
  'tar xzf /toolchain/node.tgz -C /tmp',
  'cp /tmp/package/bin/node /usr/local/bin/node && rm -rf /tmp/package',
  'mkdir -p /usr/local/lib/node_modules/npm',
  'tar xzf /toolchain/npm.tgz --strip-components=1 -C /usr/local/lib/node_modules/npm',
  'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
  'ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
  'echo "node $(node --version), npm $(npm --version)"',
].join('\n');

const testExtras = ['test', 'tests', 'testing', 'dev'];

function planPython(files: string[], manifests: Record<string, string>): EnvironmentPlan | null {
  const requirementFiles = Object.keys(manifests)
    .filter((path) => /^requirements[^/]*\.txt$/.test(path))
    .sort();
  const requirements: string[] = [];
  const sources: string[] = [];
  const inputFiles: Record<string, string> = {};
  for (const path of requirementFiles) {
    // Local paths (-e ., ./pkg) name the project itself: it is made importable another way.
    const lines = (manifests[path] as string).split('\n').filter((line) => !/^\s*(-e\s+)?\.{1,2}(\/\S*)?\s*(#.*)?$/.test(line) && !/^\s*-e\s+\.\S*/.test(line));
    inputFiles[path] = lines.join('\n');
    if (lines.some((line) => line.trim() && !line.trim().startsWith('#'))) sources.push(`-r ${path}`);
  }
  const pyproject = manifests['pyproject.toml'] !== undefined ? pyprojectRequirements(manifests['pyproject.toml'] as string) : [];
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
  const importRoot = files.some((path) => /^src\/[^/]+\/__init__\.py$/.test(path) || /^src\/[^/]+\.py$/.test(path)) ? '/workspace/src' : '/workspace';
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
    ...['python3', 'python', 'pytest'].map((tool) => `printf '#!/bin/sh\\nexec ${venv}/bin/${tool} "$@"\\n' > /usr/local/bin/${tool} && chmod 755 /usr/local/bin/${tool}`),
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

/** What a failed install means for the user, with the installer's last lines. */
export function explainInstallFailure(description: string, exitCode: number, lastLines: string[]): string {
  const output = lastLines.join('\n');
  const unreachable = /Could not fetch URL|NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network is unreachable/i.test(output);
  const cause = unreachable
    ? 'The package registries could not be reached from the build container: check the network, the proxy (HTTPS_PROXY) and the registry settings (pip config, .npmrc). Once built, an environment is reused without network.'
    : `Installing the repository's dependencies failed (${description}, exit code ${exitCode}).`;
  return `${cause} The installer's last lines:\n${output}`;
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
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
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
      if (wanted(section, key) && assignment[2]?.trim()) result.push(...(assignment[2] as string).split(';;').map((part) => part.trim()));
      continue;
    }
    if (/^\s+\S/.test(line) && wanted(section, key)) result.push(line.trim());
  }
  return result.filter(Boolean);

  function wanted(sectionName: string, keyName: string): boolean {
    return (sectionName === 'options' && keyName === 'install_requires') || (sectionName === 'options.extras_require' && testExtras.includes(keyName));
  }
}

/** The literal install_requires list of a setup.py (best effort: a computed list is not read). */
export function setupPyRequirements(text: string): string[] {
  const list = text.match(/install_requires\s*=\s*\[([^\]]*)\]/)?.[1];
  if (!list) return [];
  return [...list.matchAll(/["']([^"']+)["']/g)].map((match) => match[1] as string);
}
