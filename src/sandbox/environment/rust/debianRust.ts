// Debian's own Rust, the last choice of rustToolchain.ts: `rustc` and `cargo` installed with apt in
// the toolchain image, from the sandbox image's Debian release. Its versions are known per release
// to choose before any build; the build reads the installed ones (rustc --version) and checks them
// again, so that a point release or another image is said as it is.
import { compareVersions } from './rustProject.js';
import { shellQuote } from '../../shellQuote.js';

export interface DebianRust {
  /** The Debian release of the sandbox image the toolchain image is built on. */
  release: string;
  /** rustc's version there. */
  rustc: string;
  /** cargo's: Debian packages cargo apart from rustc (bookworm's cargo 0.66 is cargo 1.65). */
  cargo: string;
}

/** The sandbox image's release (src/setup/sandboxImage.ts builds bookworm) and its rustc and cargo. */
export const debianRust: DebianRust = { release: 'bookworm', rustc: '1.63.0', cargo: '1.65.0' };

/** What a repository needs of a toolchain: the oldest rustc and the oldest cargo, and why. */
export interface RustNeeds {
  rustc?: string;
  cargo?: string;
  /** For people: "rust-version 1.70", "edition 2021 needs ≥ 1.56", "Cargo.lock version 4 needs cargo ≥ 1.78". */
  why: string[];
}

/** Whether Debian's rustc and cargo meet the needs. */
export function debianFits(debian: DebianRust, needs: RustNeeds): boolean {
  return (
    (!needs.rustc || compareVersions(debian.rustc, needs.rustc) >= 0) &&
    (!needs.cargo || compareVersions(debian.cargo, needs.cargo) >= 0)
  );
}

/**
 * Whether Debian's rustc is what a rust-toolchain.toml channel asks: "stable" (an older stable
 * release than rustup's, said in the note), or the very line or release ("1.63", "1.63.0").
 * Beta, nightly and any other release are not Debian's.
 */
export function debianMatchesChannel(debian: DebianRust, channel: string): boolean {
  if (channel === 'stable') return true;
  if (!/^\d+\.\d+(\.\d+)?$/.test(channel)) return false;
  return channel.split('.').length === 3 ? debian.rustc === channel : debian.rustc.startsWith(`${channel}.`);
}

/**
 * The repository image's check, first in its build (on the toolchain image): the installed rustc
 * and cargo against the needs, failing with what is asked and what Debian gave; then the report's
 * note with the real version (the build's `project:` line, kept as the image's label).
 */
export function debianCheckScript(debian: DebianRust, needs: RustNeeds, noteTail: string): string {
  const version = (tool: string) => `$(${tool} --version | sed -n 's/^${tool} \\([0-9][0-9.]*\\).*/\\1/p')`;
  const check = (tool: 'rustc' | 'cargo', minimum: string | undefined) =>
    minimum
      ? [
          `if ! dpkg --compare-versions "$${tool}_version" ge ${shellQuote(minimum)}; then`,
          `  echo "durable-debugger: Debian ${debian.release}'s ${tool} is $${tool}_version; the repository needs ${tool} ≥ ${minimum} (${needs.why.join(', ').replace(/["$`\\]/g, '')})"; exit 1`,
          'fi',
        ]
      : [];
  return [
    `rustc_version=${version('rustc')} cargo_version=${version('cargo')}`,
    ...check('rustc', needs.rustc),
    ...check('cargo', needs.cargo),
    `printf 'project: rust %s %s\\n' "$rustc_version" ${shellQuote(noteTail)}`,
  ].join('\n');
}
