// The Rust environment, in two images. The toolchain image (one per Rust release, shared by every
// repository that asks for it): the sandbox image with Debian's C compiler and linker (rustc links
// through `cc`) and the host's rustup toolchain copied to /opt/rust, without its documentation, or
// Debian's own rustc and cargo installed with apt when no rustup toolchain fits (rustToolchain.ts).
// On it, the repository's image: its Cargo.toml files and Cargo.lock at their places in /workspace
// with stand-in sources, `cargo fetch --locked` through the registry proxy, the crates vendored to
// /opt/cargo-vendor (the image's cargo config points there, so the sandbox needs no registry and
// no setting of the host's), and the dependencies compiled into /opt/rust-target, of which each
// sandbox gets a writable copy: the first test run compiles only the workspace's own crates.
import { aptInstallScript } from '../debian/debianPackages.js';
import { compilersPlan } from '../debian/compilersImage.js';
import { cargoConfigVariable } from '../buildSettings.js';
import type { PlanHost } from '../ecosystem.js';
import { defaultPath, environmentImageEnv } from '../../container/sandboxEnv.js';
import { packedToolsFolder, type EnvironmentPlan } from '../planTypes.js';
import { debianCheckScript, type DebianRust } from './debianRust.js';
import { chooseRustToolchain } from './rustToolchain.js';
import type { HostRustToolchain } from './rustupToolchains.js';
import { readRustProject, type RustProject } from './rustProject.js';
import { rustWorkspaceProbe } from './rustProbes.js';
import { systemLibrariesOf } from './systemLibraries.js';
import { shellQuote } from '../../shellQuote.js';
import { isPlainPath } from '../plainPath.js';

export const rustPaths = {
  toolchain: '/opt/rust',
  cargoHome: '/opt/cargo',
  vendor: '/opt/cargo-vendor',
  target: '/opt/rust-target',
} as const;

/** What the sandbox gets: the toolchain first on PATH, cargo's home with the vendored crates, the warm target folder, no network. */
export const rustContainerEnv = [
  `PATH=${rustPaths.toolchain}/bin:${defaultPath}`,
  ...environmentImageEnv('CARGO_HOME', 'CARGO_TARGET_DIR', 'CARGO_NET_OFFLINE'),
];

/** Prints the [registries] of a cargo config (argv[1]) with their index URLs alone, without user info. */
const registryIndexes = String.raw`
import re, sys, tomllib
config = tomllib.load(open(sys.argv[1], "rb"))
for name, entry in config.get("registries", {}).items():
    index = entry.get("index") if isinstance(entry, dict) else None
    if isinstance(index, str) and re.fullmatch(r"[\w-]+", name):
        print('\n[registries."%s"]\nindex = "%s"' % (name, re.sub(r"//[^/@]*@", "//", index).replace('"', "")))
`;

/** The file listing the sources that stand in for the repository's while the dependencies compile. */
const stubList = 'durable-debugger-rust-stubs.txt';

export function planRust(
  files: string[],
  manifests: Record<string, string>,
  host: PlanHost,
  /** Debian packages durable-debugger.json names, installed with those the crates need. */
  apt: readonly string[] = [],
): EnvironmentPlan | null {
  const project = readRustProject(files, manifests);
  if (!project) return null;
  const system = systemLibrariesOf(manifests['Cargo.lock']);
  const aptPackages = [...new Set([...system.packages, ...apt])];
  const choice = chooseRustToolchain(project, host.rustToolchains?.() ?? []);
  const manifestPaths = [
    ...project.packageFolders.map((folder) => (folder ? `${folder}/Cargo.toml` : 'Cargo.toml')),
    ...(project.lockfile ? ['Cargo.lock'] : []),
  ].filter((path) => isPlainPath(path));
  const stubs = standInSources(files, project);
  const locked = project.lockfile ? ' --locked' : '';
  const testCommand = `cargo test${project.workspace ? ' --workspace' : ''} --no-fail-fast --offline${locked}`;
  const toolchainImage =
    choice.source === 'rustup' ? rustupToolchainImage(choice.toolchain) : debianToolchainImage(choice.debian);
  const debian = choice.source === 'debian';
  const cargo = `cargo \${${cargoConfigVariable}:+--config "$${cargoConfigVariable}"}`;
  const script = [
    'set -e',
    // What the crates' build scripts look for on the system (openssl-sys: pkg-config and OpenSSL's headers).
    ...(aptPackages.length ? [aptInstallScript(aptPackages)] : []),
    `export PATH=${rustPaths.toolchain}/bin:$PATH CARGO_HOME=${rustPaths.cargoHome} CARGO_TARGET_DIR=${rustPaths.target}`,
    // Debian's cargo (bookworm's 1.65) reads crates.io's sparse index only as an unstable feature,
    // which it allows; its git index is on GitHub, which no build reaches.
    ...(debian
      ? ['export CARGO_UNSTABLE_SPARSE_REGISTRY=true', debianCheckScript(choice.debian, choice.needs, choice.noteTail)]
      : []),
    `mkdir -p ${rustPaths.cargoHome} /workspace`,
    `cd /env-input && cp --parents ${manifestPaths.map(shellQuote).join(' ')} /workspace/`,
    'cd /workspace',
    // Sources stand in for the repository's own: what the dependencies need is the manifests.
    `while IFS= read -r file; do mkdir -p "$(dirname "$file")"; [ -e "$file" ] || echo 'fn main() {}' > "$file"; done < /env-input/${stubList}`,
    ...(project.lockfile
      ? [`${cargo} fetch --locked`]
      : [
          'echo "no Cargo.lock: the dependencies are resolved now, and the tests run without --locked"',
          `${cargo} generate-lockfile`,
          `${cargo} fetch`,
        ]),
    `${cargo} vendor${locked} --versioned-dirs --respect-source-config ${rustPaths.vendor} > ${rustPaths.cargoHome}/config.toml`,
    // A crate with no dependencies at all (strsim, a `cargo new` binary): cargo vendors nothing and makes no folder.
    `mkdir -p ${rustPaths.vendor}`,
    // A manifest's `registry = "name"` needs the name's index in the sandbox too: the URL only, no token.
    `if [ -n "\${${cargoConfigVariable}:-}" ]; then python3 -c ${shellQuote(registryIndexes)} "$${cargoConfigVariable}" >> ${rustPaths.cargoHome}/config.toml; fi`,
    // The same for the sandbox's cargo, for a registry a manifest names by a sparse+ index.
    ...(debian ? [`printf '\\n[unstable]\\nsparse-registry = true\\n' >> ${rustPaths.cargoHome}/config.toml`] : []),
    `rm -rf ${rustPaths.cargoHome}/registry ${rustPaths.cargoHome}/git`,
    // The dependencies compiled once, for `cargo test`: the sandbox's copy of the target folder starts warm.
    `if ! cargo test${project.workspace ? ' --workspace' : ''} --no-run --offline${locked}; then echo "durable-debugger: compiling the dependencies ahead failed; the first test run compiles them"; fi`,
    // The stand-ins' own artifacts go: the repository's crates are compiled from its sources.
    `own=$(cargo metadata --offline --format-version 1${locked} | python3 -c 'import json,sys; print(" ".join("-p " + p["name"] + "@" + p["version"] for p in json.load(sys.stdin)["packages"] if p["source"] is None))')`,
    'if [ -n "$own" ]; then cargo clean --offline $own; fi',
    `mkdir -p ${rustPaths.target} && chmod -R a+rwX ${rustPaths.target}`,
    `chmod -R a+rX ${rustPaths.cargoHome} ${rustPaths.vendor}`,
    `echo "packages: $(ls ${rustPaths.vendor} | wc -l)"`,
    'cd / && find /workspace -mindepth 1 -delete',
  ].join('\n');
  return {
    kind: 'rust',
    installers: aptPackages.length ? ['cargo', 'apt'] : ['cargo'],
    description: `rust · cargo fetch${locked}${aptPackages.length ? ` · apt ${aptPackages.join(' ')}` : ''}`,
    basePlan: toolchainImage,
    files: {
      ...Object.fromEntries(manifestPaths.map((path) => [path, manifests[path] as string])),
      [stubList]: stubs.map((path) => `${path}\n`).join(''),
    },
    script,
    needsRepository: false,
    toolchains: [],
    testCommand,
    build: [],
    containerEnv: rustContainerEnv,
    writableCopies: [rustPaths.target],
    // Debian's note is the build's (its real version), kept as the image's label.
    toolchainNotes: [
      ...(choice.source === 'rustup' ? [choice.note] : []),
      // CI resolves such a repository's dependencies on each run; the image, once, when it is built.
      ...(project.lockfile ? [] : ['no Cargo.lock: the dependencies resolved when the image was built']),
      ...(aptPackages.length
        ? [
            `apt ${aptPackages.join(' ')}${system.crates.length ? ` (for the build scripts of ${system.crates.join(', ')}, as on CI's runners)` : ''}`,
          ]
        : []),
    ],
    probes: [rustWorkspaceProbe(files, project, false)],
  };
}

/** The host's rustup toolchain, bound read-only into the build and copied to /opt/rust. */
function rustupToolchainImage(toolchain: HostRustToolchain): EnvironmentPlan {
  return {
    kind: 'rust',
    description: `rust toolchain · ${toolchain.version}`,
    files: {},
    script: [
      'set -e',
      `mkdir -p ${rustPaths.toolchain}`,
      `cd ${packedToolsFolder}/rust`,
      `for part in bin lib libexec etc; do if [ -d "$part" ]; then cp -a "$part" ${rustPaths.toolchain}/; fi; done`,
      `chmod -R a+rX ${rustPaths.toolchain}`,
      `${rustPaths.toolchain}/bin/rustc --version && ${rustPaths.toolchain}/bin/cargo --version`,
    ].join('\n'),
    needsRepository: false,
    toolchains: [
      {
        kind: 'host-folder',
        hostFolder: toolchain.path,
        as: 'rust',
        label: `rust ${toolchain.release} ${toolchain.name}`,
      },
    ],
    // rustc links through cc, and build scripts compile C and C++ (the cc crate): on Debian's compilers, as on CI's runners.
    basePlan: compilersPlan(),
    build: [],
    containerEnv: rustContainerEnv,
    probes: [],
  };
}

/** Debian's rustc and cargo (in /usr/bin) on Debian's compilers, from the image's own release: one image every such repository shares. */
function debianToolchainImage(debian: DebianRust): EnvironmentPlan {
  return {
    kind: 'rust',
    description: `rust toolchain · Debian ${debian.release}'s rustc`,
    files: {},
    script: ['set -e', aptInstallScript(['rustc', 'cargo']), 'rustc --version && cargo --version'].join('\n'),
    needsRepository: false,
    toolchains: [],
    installers: ['apt'],
    basePlan: compilersPlan(),
    build: [],
    containerEnv: rustContainerEnv,
    probes: [],
  };
}

/**
 * The .rs files of the repository's packages (every target cargo may find: src/lib.rs, src/main.rs,
 * src/bin, tests, benches, examples, build.rs, and any other path a manifest names): each gets a
 * stand-in while the dependencies compile.
 */
function standInSources(files: string[], project: RustProject): string[] {
  const folders = project.packageFolders;
  return files.filter(
    (path) =>
      path.endsWith('.rs') &&
      isPlainPath(path) &&
      !path.split('/').some((part) => part === 'target') &&
      folders.some((folder) => folder === '' || path.startsWith(`${folder}/`)),
  );
}
