// The Rust a repository gets, in this order: a rustup toolchain of the host's that is the one the
// repository asks for (rust-toolchain.toml or rust-toolchain: its channel; otherwise the newest
// stable one that its rust-version and edition allow), copied into an image of its own. rustup's
// distribution server is no package registry, so no build fetches one; mirrors named by the host's
// RUSTUP_DIST_SERVER are not tried (docs/environments.md), nor Debian's rustc (1.63 in bookworm).
// When none fits, the run ends saying what was asked and what the host has.
import { EnvironmentBuildError } from '../planTypes.js';
import type { HostRustToolchain } from './rustupToolchains.js';
import { compareVersions, type RustProject } from './rustProject.js';

/** The first Rust of each edition. */
const editionRust: Record<string, string> = { '2015': '1.0.0', '2018': '1.31.0', '2021': '1.56.0', '2024': '1.85.0' };

export interface RustChoice {
  toolchain: HostRustToolchain;
  /** For the report: "rust 1.95.0 (the host's rustup toolchain; rust-toolchain.toml asks 1.95)". */
  note: string;
}

export function chooseRustToolchain(project: RustProject, host: HostRustToolchain[]): RustChoice {
  const minimum = [project.rustVersion, project.edition && editionRust[project.edition]]
    .filter((version): version is string => !!version)
    .sort(compareVersions)
    .at(-1);
  const why = [
    ...(project.rustVersion ? [`rust-version ${project.rustVersion}`] : []),
    ...(project.edition
      ? [
          `edition ${project.edition}${editionRust[project.edition] ? ` needs ≥ ${editionRust[project.edition]?.replace(/\.0$/, '')}` : ''}`,
        ]
      : []),
  ];
  const allowed = (toolchain: HostRustToolchain) => !minimum || compareVersions(toolchain.version, minimum) >= 0;
  const newestFirst = [...host].sort((a, b) => compareVersions(b.version, a.version));
  const asked = project.channel;
  let found: HostRustToolchain | undefined;
  let reason: string;
  if (asked) {
    const channel = asked.channel.replace(/-(x86_64|aarch64)-unknown-linux-gnu$/, '');
    reason = `${asked.file} asks ${channel}`;
    if (/^\d+\.\d+(\.\d+)?$/.test(channel)) {
      // "1.95" is that line's newest patch release; "1.95.0" exactly that one.
      const exact = channel.split('.').length === 3;
      found = newestFirst.find(
        (toolchain) =>
          toolchain.channel === 'stable' &&
          (exact ? toolchain.version === channel : toolchain.version.startsWith(`${channel}.`)),
      );
    } else if (channel === 'stable' || channel === 'beta' || channel === 'nightly') {
      found = newestFirst.find((toolchain) => toolchain.channel === channel);
    } else if (/^(nightly|beta)-\d{4}-\d{2}-\d{2}$/.test(channel)) {
      // A dated release is the toolchain rustup installed under that very name.
      found = host.find((toolchain) => toolchain.name.startsWith(`${channel}-`));
    }
    if (found && !allowed(found)) found = undefined;
  } else {
    reason = why.length ? why.join(', ') : 'the newest stable one of the host';
    found = newestFirst.find((toolchain) => toolchain.channel === 'stable' && allowed(toolchain));
  }
  if (!found) {
    const has = host.length
      ? `the host's rustup toolchains are ${newestFirst.map((toolchain) => `${toolchain.version} (${toolchain.name.replace(/-(x86_64|aarch64)-unknown-linux-gnu$/, '')})`).join(', ')}`
      : 'the host has no rustup toolchain';
    const needs = asked
      ? `${asked.file} asks for rust ${asked.channel}${minimum ? ` (and ${why.join(', ')})` : ''}`
      : `the repository needs rust ≥ ${minimum} (${why.join(', ')})`;
    throw new EnvironmentBuildError(
      `${needs}; the host has none that fits: ${has}. rustup's distribution server is not reachable from builds, and Debian's rustc (1.63 in bookworm) is older. Install it on this machine (rustup toolchain install ${asked?.channel ?? 'stable'}) and run again.`,
    );
  }
  const also = asked && why.length ? `; ${why.join(', ')}` : '';
  return {
    toolchain: found,
    note: `rust ${found.version} (the host's rustup toolchain ${found.name.replace(/-(x86_64|aarch64)-unknown-linux-gnu$/, '')}; ${reason}${also})`,
  };
}
