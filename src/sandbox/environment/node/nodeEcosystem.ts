// Node: package.json with its lockfile (npm, pnpm, yarn, bun), workspaces, the Node version files.
import type { Ecosystem } from '../ecosystem.js';
import { isPackageManagerFile } from './nodePackageManager.js';
import { planNode } from './nodePlan.js';
import { nodeOwnNameProbe } from './nodeProbes.js';
import { nodeVersionFiles } from './nodeVersion.js';

const manifests = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'bun.lock',
  'bun.lockb',
  ...nodeVersionFiles,
]);

export const nodeEcosystem: Ecosystem = {
  kind: 'node',
  isManifest: (path) => manifests.has(path) || isPackageManagerFile(path) || isMemberManifest(path),
  plan: ({ files, manifests: read, chosen, host }) => {
    const plan = planNode(files, read, host);
    return plan && { ...plan, testCommand: chosen.testCommand ?? plan.testCommand };
  },
  workspaceProbe: (_files, read) => nodeOwnNameProbe(read, true),
};

/** A package.json below the root, not in node_modules: a workspace member's, when the root's workspaces name it. */
function isMemberManifest(path: string): boolean {
  const parts = path.split('/');
  return parts.length > 1 && parts.length <= 5 && parts.at(-1) === 'package.json' && !parts.includes('node_modules');
}
