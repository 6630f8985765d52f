// The Node environment: node and npm from the registry, then the repository's lockfile installed
// by the package manager it belongs to (npm, pnpm, yarn 1 or yarn 4), outside /workspace.
import { environmentPaths, toolchainFile, type EnvironmentPlan } from './planTypes.js';

const nodeEnv = [
  'NPM_CONFIG_OFFLINE=true',
  'NPM_CONFIG_UPDATE_NOTIFIER=false',
  'NPM_CONFIG_FUND=false',
  'NPM_CONFIG_AUDIT=false',
];

/** package.json with dependencies: the plan that installs them, or null when there are none. */
export function planNode(files: string[], manifests: Record<string, string>): EnvironmentPlan | null {
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
  const script = text('build').trim()
    ? 'build'
    : text('prepare').trim() && !/husky|simple-git-hooks|lefthook/.test(text('prepare'))
      ? 'prepare'
      : null;
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
