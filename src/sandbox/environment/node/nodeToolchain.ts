// The Node toolchain image, built once per host and per Node release, npm and package manager, and
// shared by every repository asking for the same ones (plan.basePlan): the sandbox image with node,
// npm and pnpm, yarn or bun unpacked into /usr/local from packages packed on the host (toolchain.ts).
// Without it every Node repository's image unpacked and committed Node's binary (about 100 MB) again.
// With Node's headers, on the image with Debian's compilers, native addons build as on CI's runners (node-gyp).
import { compilersPlan } from '../debian/compilersImage.js';
import { packedToolsFolder, type EnvironmentPlan, type PackedTool } from '../planTypes.js';
import type { ManagerTool } from './nodePackageManager.js';

/** `managers`: the package manager packed from the registry, and Bun beside it when the tests run it. */
export function nodeToolchainPlan(node: PackedTool, npm: PackedTool, managers: ManagerTool[]): EnvironmentPlan {
  return {
    kind: 'node',
    // The packages are on the host already: the build only unpacks them.
    installers: [],
    // node-gyp compiles an addon without a prebuilt binary for this machine (better-sqlite3, bcrypt) with
    // make and g++ (and python3, which the sandbox image has).
    basePlan: compilersPlan(),
    description: `node toolchain · ${[node.spec, npm.matchingNode ? 'npm (the release node ships with)' : npm.spec, ...managers.map((manager) => manager.spec)].join(', ')}`,
    files: {},
    script: ['set -e', installNodeAndNpm, ...managers.map(installPackageManager)].join('\n'),
    needsRepository: false,
    // The versions fetched are in the image key (toolchain.ts names), so a newer release makes a new image.
    toolchains: [node, npm, ...managers],
    build: [],
    containerEnv: [],
    probes: [],
  };
}

/** Where node is installed: its headers are under include/node there, the nodedir node-gyp builds against. */
export const nodePrefix = '/usr/local';

/** Copies node (its binary and headers) and npm into /usr/local. */
const installNodeAndNpm = [
  `tar xzf ${packedToolsFolder}/node.tgz -C /usr/local --strip-components=1 package/bin/node package/include/node`,
  'mkdir -p /usr/local/lib/node_modules/npm',
  `tar xzf ${packedToolsFolder}/npm.tgz --strip-components=1 -C /usr/local/lib/node_modules/npm`,
  'ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
  'ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
  'echo "node $(node --version), npm $(npm --version)"',
].join('\n');

/** Unpacks a package manager into /usr/local, next to npm. */
function installPackageManager(tool: ManagerTool): string {
  const folder = `/usr/local/lib/node_modules/${tool.command}`;
  return [
    `mkdir -p ${folder}`,
    `tar xzf ${packedToolsFolder}/${tool.as} --strip-components=1 -C ${folder}`,
    `ln -sf ${folder}/${tool.bin} /usr/local/bin/${tool.command}`,
    `echo "${tool.command} $(${tool.command} --version)"`,
  ].join('\n');
}
