// The ecosystems, in the order a repository is matched: the first whose plan is not null makes
// the environment (a repository with package.json and requirements.txt is planned as Node, as before).
import type { Ecosystem } from './ecosystem.js';
import { cppEcosystem } from './cpp/cppEcosystem.js';
import { goEcosystem } from './go/goEcosystem.js';
import { nodeEcosystem } from './node/nodeEcosystem.js';
import type { EnvironmentProbe } from './planTypes.js';
import { pythonEcosystem } from './python/pythonEcosystem.js';
import { rustEcosystem } from './rust/rustEcosystem.js';

export const ecosystems: readonly Ecosystem[] = [nodeEcosystem, pythonEcosystem, goEcosystem, rustEcosystem, cppEcosystem];

/** Every ecosystem's workspace check, for an image, Dockerfile or setup commands the repository or the run names. */
export function repositoryProbes(files: string[], manifests: Record<string, string>): EnvironmentProbe[] {
  return ecosystems
    .map((ecosystem) => ecosystem.workspaceProbe?.(files, manifests) ?? null)
    .filter((probe): probe is EnvironmentProbe => probe !== null);
}
