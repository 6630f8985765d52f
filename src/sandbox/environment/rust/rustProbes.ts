// Rust's check that the tests compile the workspace's own crates: cargo's view of the repository
// (cargo metadata, offline, against the image's vendored crates) has every package of the repository
// read from /workspace, and no crate of the same name from a registry or git instead, as a [patch]
// or a dependency on a published release of a workspace crate would bring in: the tests of the
// crates that use it would compile the registry's copy, not the code the agent edits.
// A repository without a Cargo.lock (a library's was not committed, as Cargo's guide said until 2023)
// gets one written as cargo resolves, as on CI's checkout: the probe's /workspace is read-only, so
// cargo runs in a tree of links to it under /tmp, where it can write one.
// Pure: the builder runs it (probeRunner.ts).
import type { EnvironmentProbe } from '../planTypes.js';
import { readRustProject, type RustProject } from './rustProject.js';

const check = String.raw`
import json, sys
root = sys.argv[1]
meta = json.load(sys.stdin)
packages = {p["id"]: p for p in meta["packages"]}
own = {packages[i]["name"]: packages[i] for i in meta["workspace_members"]}
problems = []
for p in meta["packages"]:
    if p["source"] is None and not p["manifest_path"].startswith(root):
        problems.append("%s %s is read from %s, outside the workspace" % (p["name"], p["version"], p["manifest_path"]))
    if p["source"] is not None and p["name"] in own:
        users = sorted(packages[n["id"]]["name"] for n in (meta.get("resolve") or {}).get("nodes", []) if p["id"] in n["dependencies"])
        where = own[p["name"]]["manifest_path"][len(root):]
        problems.append("%s %s comes from %s, not the workspace's %s%s" % (p["name"], p["version"], p["source"], where, " (used by " + ", ".join(users) + ")" if users else ""))
for line in problems:
    print("cargo: " + line)
sys.exit(1 if problems else 0)
`;

export function rustWorkspaceProbe(files: string[], project: RustProject, lenient: boolean): EnvironmentProbe {
  const locked = project.lockfile ? ' --locked' : '';
  const root = project.lockfile ? '/workspace' : '/tmp/durable-debugger-workspace';
  const sources = files.filter(
    (path) =>
      path.endsWith('.rs') &&
      project.packageFolders.some((folder) => folder === '' || path.startsWith(`${folder}/`)) &&
      !path.split('/').includes('target'),
  );
  return {
    description: "the tests compile the workspace's own crates",
    advice:
      'A [patch] section or a dependency on a published release takes a crate of the workspace from a registry: depend on it by path (its workspace folder) so the tests compile the code being fixed.',
    files: [
      ...project.packageFolders.map((folder) => (folder ? `${folder}/Cargo.toml` : 'Cargo.toml')),
      ...(project.lockfile ? ['Cargo.lock'] : []),
      ...sources,
    ],
    script: [
      ...(lenient ? ['command -v cargo >/dev/null 2>&1 || exit 0'] : []),
      ...(project.lockfile ? [] : [`cp -rs /workspace ${root}`]),
      `cd ${root}`,
      `cargo metadata --offline --format-version 1${locked} > /tmp/durable-debugger-cargo-metadata.json || exit 1`,
      `python3 -c '${check.replace(/'/g, `'\\''`)}' ${root}/ < /tmp/durable-debugger-cargo-metadata.json`,
    ].join('\n'),
  };
}

/** For an image, Dockerfile or setup commands: the same check where the image has cargo. */
export function rustRepositoryProbe(files: string[], manifests: Record<string, string>): EnvironmentProbe | null {
  const project = readRustProject(files, manifests);
  return project ? rustWorkspaceProbe(files, project, true) : null;
}
