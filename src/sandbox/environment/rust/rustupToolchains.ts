// The Rust toolchains rustup installed on this host (RUSTUP_HOME, else ~/.rustup): the toolchain a
// Rust repository's image copies when it asks for one of them. rustup's distribution server is no
// package registry, so a build cannot fetch another; the host's are read, never written.
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface HostRustToolchain {
  /** rustup's name for it: "stable-x86_64-unknown-linux-gnu", "1.95.0-x86_64-unknown-linux-gnu". */
  name: string;
  /** The folder its files are in (links resolved). */
  path: string;
  /** rustc's version: "1.95.0", "1.97.0-nightly". */
  version: string;
  /** rustc's whole version line: "1.95.0 (59807616e 2026-04-14)". */
  release: string;
  channel: 'stable' | 'beta' | 'nightly';
}

/** The target triple of this host's toolchains: the images run on this machine's architecture. */
export function hostTriple(arch = process.arch): string | null {
  if (arch === 'x64') return 'x86_64-unknown-linux-gnu';
  if (arch === 'arm64') return 'aarch64-unknown-linux-gnu';
  return null;
}

/** Where rustup keeps its toolchains, one folder each. */
export function rustupToolchainsFolder(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.RUSTUP_HOME ?? join(homedir(), '.rustup'), 'toolchains');
}

/** Every rustup toolchain of this host for its own Linux target, one per folder; [] when rustup has none. */
export function readHostRustToolchains(env: NodeJS.ProcessEnv = process.env): HostRustToolchain[] {
  const triple = hostTriple();
  if (!triple || process.platform !== 'linux') return [];
  const root = rustupToolchainsFolder(env);
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch {
    return [];
  }
  const found = new Map<string, HostRustToolchain>();
  for (const name of names) {
    if (!name.endsWith(`-${triple}`)) continue;
    try {
      const path = realpathSync(join(root, name));
      if (!statSync(join(path, 'bin', 'cargo')).isFile()) continue;
      const manifest = readFileSync(join(path, 'lib', 'rustlib', 'multirust-channel-manifest.toml'), 'utf8');
      const release = manifest.match(/\[pkg\.rustc\]\s*\nversion\s*=\s*"([^"]+)"/)?.[1];
      const version = release?.match(/^\d+\.\d+\.\d+(?:-(?:beta|nightly)(?:\.\d+)?)?/)?.[0];
      if (!release || !version) continue;
      const channel = version.includes('nightly') ? 'nightly' : version.includes('beta') ? 'beta' : 'stable';
      // "1.95.0-…" is often a link to "stable-…": one toolchain, named by the more telling name.
      const known = found.get(path);
      if (!known || /^\d/.test(name)) found.set(path, { name, path, version, release, channel });
    } catch {
      continue;
    }
  }
  return [...found.values()];
}
