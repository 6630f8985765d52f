// The Debian packages a crate's build script looks for on the system, as CI's runners have them
// (GitHub's ubuntu-latest has pkg-config, libssl-dev, libsqlite3-dev, libpq-dev, cmake, clang, …):
// openssl-sys finds OpenSSL through pkg-config, and without it every crate above it, reqwest's
// default TLS among them, fails to build. Read from Cargo.lock, which names every crate of every
// platform; a crate that falls back on its bundled sources (zstd-sys, bzip2-sys) needs nothing.
import { parse as parseToml } from 'smol-toml';

/** Crates whose build scripts need Debian packages, and those packages. */
const packagesOfCrate: Record<string, readonly string[]> = {
  'openssl-sys': ['pkg-config', 'libssl-dev'],
  // openssl's `vendored` feature builds OpenSSL from source: its Configure is perl (its make and
  // C compiler, as cmake's and cxx-build's g++, are the compilers image's: rustPlan.ts).
  'openssl-src': ['perl'],
  'libsqlite3-sys': ['pkg-config', 'libsqlite3-dev'],
  'libz-sys': ['pkg-config', 'zlib1g-dev'],
  'curl-sys': ['pkg-config', 'libcurl4-openssl-dev'],
  'pq-sys': ['pkg-config', 'libpq-dev'],
  'alsa-sys': ['pkg-config', 'libasound2-dev'],
  'libudev-sys': ['pkg-config', 'libudev-dev'],
  'libdbus-sys': ['pkg-config', 'libdbus-1-dev'],
  'clang-sys': ['libclang-dev'],
  cmake: ['cmake'],
  'prost-build': ['protobuf-compiler'],
};

/** The Debian packages the crates of Cargo.lock need, and the crates that need them (sorted); none without a readable lock. */
export function systemLibrariesOf(lock: string | undefined): { packages: string[]; crates: string[] } {
  let entries: unknown;
  try {
    entries = lock === undefined ? [] : (parseToml(lock) as { package?: unknown }).package;
  } catch {
    entries = []; // cargo reports a lock it cannot read
  }
  const names = new Set(
    (Array.isArray(entries) ? entries : []).map((entry: { name?: unknown }) => entry?.name).filter(Boolean),
  );
  const crates = Object.keys(packagesOfCrate)
    .filter((crate) => names.has(crate))
    .sort();
  const packages = [...new Set(crates.flatMap((crate) => packagesOfCrate[crate] ?? []))].sort();
  return { packages, crates };
}
