// The ecosystems, in the order a repository is matched: the first whose plan is not null makes
// the environment (a repository with package.json and requirements.txt is planned as Node, as before).
import type { Ecosystem } from './ecosystem.js';
import { javaEcosystem } from './java/javaEcosystem.js';
import { cppEcosystem } from './cpp/cppEcosystem.js';
import { goEcosystem } from './go/goEcosystem.js';
import { nodeEcosystem } from './node/nodeEcosystem.js';
import type { EnvironmentProbe } from './planTypes.js';
import { pythonEcosystem } from './python/pythonEcosystem.js';
import { rustEcosystem } from './rust/rustEcosystem.js';

// Java first: a Maven or Gradle repository often has a package.json for its tooling (commit hooks, docs).
export const ecosystems: readonly Ecosystem[] = [
  javaEcosystem,
  nodeEcosystem,
  pythonEcosystem,
  goEcosystem,
  rustEcosystem,
  cppEcosystem,
];

/** Every ecosystem's workspace check, for an image, Dockerfile or setup commands the repository or the run names. */
export function repositoryProbes(files: string[], manifests: Record<string, string>): EnvironmentProbe[] {
  return ecosystems
    .map((ecosystem) => ecosystem.workspaceProbe?.(files, manifests) ?? null)
    .filter((probe): probe is EnvironmentProbe => probe !== null);
}
