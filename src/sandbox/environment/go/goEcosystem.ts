// Go: go.mod and go.sum (and go.work, the nested go.mod files it uses, vendor/modules.txt).
import type { Ecosystem } from '../ecosystem.js';
import { goIgnores } from './goImports.js';
import { planGo } from './goPlan.js';
import { goOwnModulesProbe } from './goProbes.js';

/** go.mod, go.sum, go.work and go.work.sum at the root, and nested modules' go.mod (up to four folders deep, not vendored or test data). */
function isGoManifest(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1) as string;
  if (parts.length === 1) return ['go.mod', 'go.sum', 'go.work', 'go.work.sum'].includes(name);
  return parts.length <= 5 && (name === 'go.mod' || name === 'go.sum') && !goIgnores(path);
}

export const goEcosystem: Ecosystem = {
  kind: 'go',
  isManifest: isGoManifest,
  plan: ({ files, manifests, chosen }) => {
    const plan = planGo(files, manifests);
    return plan && { ...plan, testCommand: chosen.testCommand ?? plan.testCommand };
  },
  workspaceProbe: (_files, manifests) => goOwnModulesProbe(manifests, true),
};
