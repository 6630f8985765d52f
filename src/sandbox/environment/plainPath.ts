// A path inside the repository that a build script may name as it is: plain characters, no `..`,
// not absolute. Paths the repository's manifests give (a crate's Cargo.toml, a version file) are
// written into build scripts only when they pass.
export function isPlainPath(path: string): boolean {
  return /^(?!.*(^|\/)\.\.?(\/|$))[\w@+.-]+(\/[\w@+.-]+)*$/.test(path);
}
