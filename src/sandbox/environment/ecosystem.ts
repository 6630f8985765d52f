// One ecosystem (Python, Node, Go, Rust, …) behind one small interface: each is a folder below
// environment/ whose <name>Ecosystem.ts exports an Ecosystem, and ecosystems.ts lists them in the
// order a repository is matched. Adding an ecosystem is adding a folder and a line there.
//
// What an ecosystem decides, all pure (the builder does the I/O):
// - which repository files it reads (isManifest: the builder reads them from the snapshot);
// - its plan: the toolchain and why, the build's script and files, the installers whose registries
//   and host settings the build gets, the test command, the per-run build steps, the probes;
// - for images the repository or the run names, its check that the tests run /workspace's code.
// How its test runner's output reads is in src/agent (testResults.ts and the parsers it calls):
// the workflow reads test results, and nothing below it may.
import { readFileSync } from 'node:fs';
import type { EnvironmentPlan, EnvironmentProbe, RepositoryConfig } from './planTypes.js';
import { readHostRustToolchains, type HostRustToolchain } from './rust/rustupToolchains.js';

/** What a plan may depend on beyond the repository: the worker's host. */
export interface PlanHost {
  /** This worker's Node version (a Node repository that names none gets today's LTS or this). */
  nodeVersion: string;
  today: Date;
  /** The Rust toolchains rustup installed on this host (rust/rustupToolchains.ts), read when a Rust plan asks. */
  rustToolchains?: () => HostRustToolchain[];
  /** False when this CPU lacks AVX2: Bun then needs its baseline build, as its own installer picks. */
  avx2?: boolean;
}

export const thisHost = (): PlanHost => ({
  nodeVersion: process.versions.node,
  today: new Date(),
  rustToolchains: () => readHostRustToolchains(),
  avx2: cpuHasAvx2(),
});

function cpuHasAvx2(): boolean {
  try {
    return /^flags\s*:.*\bavx2\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return true; // not Linux's /proc: the common case
  }
}

export interface PlanContext {
  /** Every path of the snapshot. */
  files: string[];
  /** The manifests read for the plan (path → text): those isManifest of any ecosystem asked for. */
  manifests: Record<string, string>;
  /** durable-debugger.json with the run's choice over it. */
  chosen: RepositoryConfig;
  host: PlanHost;
}

export interface Ecosystem {
  /** The plan kind it makes (EnvironmentPlan.kind), also its name for people. */
  readonly kind: string;
  /** Whether a repository file is one this ecosystem reads to decide (read only when present). */
  isManifest(path: string): boolean;
  /** The environment the repository needs from this ecosystem, or null when it is not one of its. */
  plan(context: PlanContext): EnvironmentPlan | null;
  /**
   * For an image, Dockerfile or setup commands the repository or the run names: the check that the
   * tests run the workspace's code, passing when the image lacks this ecosystem's toolchain.
   */
  workspaceProbe?(files: string[], manifests: Record<string, string>): EnvironmentProbe | null;
}
