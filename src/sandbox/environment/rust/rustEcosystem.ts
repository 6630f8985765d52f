// Rust: Cargo.toml (the root's and every package's below it), Cargo.lock, rust-toolchain.toml or
// rust-toolchain; the toolchain a rustup toolchain of the host's (rustToolchain.ts).
import type { Ecosystem } from '../ecosystem.js';
import { planRust } from './rustPlan.js';
import { rustRepositoryProbe } from './rustProbes.js';
import { isCargoManifest, toolchainFiles } from './rustProject.js';

const manifests = new Set<string>(['Cargo.lock', ...toolchainFiles]);

export const rustEcosystem: Ecosystem = {
  kind: 'rust',
  isManifest: (path) => manifests.has(path) || isCargoManifest(path),
  plan: ({ files, manifests: read, chosen, host }) => {
    const plan = planRust(files, read, host, chosen.apt ?? []);
    return plan && { ...plan, testCommand: chosen.testCommand ?? plan.testCommand };
  },
  workspaceProbe: rustRepositoryProbe,
};
