// The Rust a repository gets, in this order: a rustup toolchain of the host's that is the one the
// repository asks for (rust-toolchain.toml or rust-toolchain: its channel; otherwise the newest
// stable one that its rust-version, edition and Cargo.lock allow), copied into an image of its own;
// else Debian's rustc and cargo (debianRust.ts), when they are what a pinned channel asks and new
// enough. rustup's distribution server is no package registry, so no build fetches a toolchain;
// mirrors named by the host's RUSTUP_DIST_SERVER are not tried (docs/environments.md).
// When none fits, the run ends saying what was asked, what the host has and what Debian has.
import { EnvironmentBuildError } from '../planTypes.js';
import { debianFits, debianMatchesChannel, debianRust, type DebianRust, type RustNeeds } from './debianRust.js';
import type { HostRustToolchain } from './rustupToolchains.js';
import { compareVersions, type RustProject } from './rustProject.js';

/** The first Rust of each edition. */
const editionRust: Record<string, string> = { '2015': '1.0.0', '2018': '1.31.0', '2021': '1.56.0', '2024': '1.85.0' };
/** The first cargo that reads each Cargo.lock format. */
const lockfileCargo: Record<number, string> = { 3: '1.53.0', 4: '1.78.0' };

export type RustChoice =
  | {
      source: 'rustup';
      toolchain: HostRustToolchain;
      /** For the report: "rust 1.95.0 (the host's rustup toolchain; rust-toolchain.toml asks 1.95)". */
      note: string;
    }
  | {
      source: 'debian';
      debian: DebianRust;
      needs: RustNeeds;
      /** The note after "rust <version> ", the version being the one the build finds installed. */
      noteTail: string;
    };

const shortName = (toolchain: HostRustToolchain) => toolchain.name.replace(/-(x86_64|aarch64)-unknown-linux-gnu$/, '');

/** The oldest rustc and cargo the packages' rust-version and edition and the lockfile's format allow. */
export function rustNeeds(project: RustProject): RustNeeds {
  const editionNeeds = project.edition ? editionRust[project.edition] : undefined;
  const lockNeeds = project.lockfileVersion ? lockfileCargo[project.lockfileVersion] : undefined;
  const rustc = [project.rustVersion, editionNeeds]
    .filter((version): version is string => !!version)
    .sort(compareVersions)
    .at(-1);
  const cargo = [rustc, lockNeeds]
    .filter((version): version is string => !!version)
    .sort(compareVersions)
    .at(-1);
  const why = [
    ...(project.rustVersion ? [`rust-version ${project.rustVersion}`] : []),
    ...(project.edition
      ? [`edition ${project.edition}${editionNeeds ? ` needs ≥ ${editionNeeds.replace(/\.0$/, '')}` : ''}`]
      : []),
    ...(lockNeeds
      ? [`Cargo.lock version ${project.lockfileVersion} needs cargo ≥ ${lockNeeds.replace(/\.0$/, '')}`]
      : []),
  ];
  return { rustc, cargo, why };
}

export function chooseRustToolchain(
  project: RustProject,
  host: HostRustToolchain[],
  debian: DebianRust = debianRust,
): RustChoice {
  const needs = rustNeeds(project);
  // A rustup toolchain's cargo is of its rustc's release.
  const minimum = needs.cargo ?? needs.rustc;
  const allowed = (toolchain: HostRustToolchain) => !minimum || compareVersions(toolchain.version, minimum) >= 0;
  const newestFirst = [...host].sort((a, b) => compareVersions(b.version, a.version));
  const asked = project.channel;
  const channel = asked?.channel.replace(/-(x86_64|aarch64)-unknown-linux-gnu$/, '');
  let found: HostRustToolchain | undefined;
  if (channel) {
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
    found = newestFirst.find((toolchain) => toolchain.channel === 'stable' && allowed(toolchain));
  }
  const reason = asked ? `${asked.file} asks ${channel}` : 'the newest stable one of the host';
  const why = needs.why.join(', ');
  if (found) {
    const because = asked ? `${reason}${why ? `; ${why}` : ''}` : why || reason;
    return {
      source: 'rustup',
      toolchain: found,
      note: `rust ${found.version} (the host's rustup toolchain ${shortName(found)}; ${because})`,
    };
  }
  const has = host.length
    ? `the host's rustup toolchains are ${newestFirst.map((toolchain) => `${toolchain.version} (${shortName(toolchain)})`).join(', ')}`
    : 'the host has no rustup toolchain';
  if ((!channel || debianMatchesChannel(debian, channel)) && debianFits(debian, needs)) {
    const hostSaid = host.length
      ? `none of the host's rustup toolchains fits (${newestFirst.map((toolchain) => toolchain.version).join(', ')})`
      : has;
    const asks = channel === 'stable' ? `${reason}: Debian's, older than rustup's stable` : channel ? reason : '';
    const because = [asks, why].filter(Boolean).join('; ') || 'nothing asks for a version';
    return {
      source: 'debian',
      debian,
      needs,
      noteTail: `(Debian ${debian.release}'s rustc; ${hostSaid}; ${because})`,
    };
  }
  const wants = asked
    ? `${asked.file} asks for rust ${asked.channel}${why ? ` (and ${why})` : ''}`
    : `the repository needs rust ≥ ${minimum} (${why})`;
  throw new EnvironmentBuildError(
    `${wants}; nothing here fits: ${has}, and Debian ${debian.release}'s rustc is ${debian.rustc} (cargo ${debian.cargo}). rustup's distribution server is not reachable from builds, and mirrors your RUSTUP_DIST_SERVER names are not tried. Install it on this machine (rustup toolchain install ${channel ?? 'stable'}) and run again.`,
  );
}
