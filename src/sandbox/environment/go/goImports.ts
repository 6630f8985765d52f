// The packages a Go repository's sources import, read from their import declarations (text only,
// nothing of the repository runs): what the build compiles ahead into a layer every snapshot that
// imports the same shares (goDependencyWarmup.ts). The sources are untrusted: what leaves here is a
// sorted list of plain import paths, bounded, never a pattern.

/** Whether Go leaves the path out of a module's packages: under vendor/ or testdata/, or a name with a leading `.` or `_`. */
export function goIgnores(path: string): boolean {
  return path
    .split('/')
    .some((part) => part === 'vendor' || part === 'testdata' || part.startsWith('.') || part.startsWith('_'));
}

/** A .go file Go builds (goIgnores). */
export function isGoSource(path: string): boolean {
  return path.endsWith('.go') && !goIgnores(path);
}

/** Import declarations come first: the head of a file is enough, and a generated file's body is never read. */
const headChars = 64 * 1024;
/** Bounds on what the list may hold, whatever the sources say. */
export const importLimits = { paths: 2000, pathLength: 300 } as const;

/** Go's import paths: letters, digits and a few marks; a pattern (`...`) or a relative path is none. */
const importPath = /^[A-Za-z0-9][A-Za-z0-9._~+\-/]*$/;

/** The import paths of one file's import declarations, in order. */
export function importsOf(source: string): string[] {
  const text = withoutComments(source.slice(0, headChars));
  const found: string[] = [];
  // `import "p"`, `import name "p"`, and `import ( … )` blocks of the same, up to the first other declaration.
  const declarations = /\bimport\s*(\(([^)]*)\)|[A-Za-z_.][A-Za-z0-9_]*\s*("[^"\n]*"|`[^`]*`)|("[^"\n]*"|`[^`]*`))/g;
  const firstBody = text.search(/^(func|type|var|const)\b/m);
  const head = firstBody < 0 ? text : text.slice(0, firstBody);
  for (const match of head.matchAll(declarations)) {
    const specs = match[2] ?? match[3] ?? match[4] ?? '';
    for (const quoted of specs.matchAll(/"([^"\n]*)"|`([^`]*)`/g)) found.push(quoted[1] ?? quoted[2] ?? '');
  }
  return found;
}

/**
 * The packages of other modules (and Go's own) the sources import, sorted: the repository's own
 * modules' packages and `C` left out, malformed paths dropped, at most importLimits.paths.
 */
export function importedPackages(sources: Record<string, string>, ownModules: readonly string[]): string[] {
  const own = ownModules.filter(Boolean);
  const paths = new Set<string>();
  for (const text of Object.values(sources)) {
    if (neverBuilt(text)) continue;
    for (const path of importsOf(text)) {
      if (path === 'C' || path.length > importLimits.pathLength || !importPath.test(path)) continue;
      if (path.split('/').some((part) => part === '.' || part === '..' || part.includes('...'))) continue;
      if (own.some((module) => path === module || path.startsWith(`${module}/`))) continue;
      paths.add(path);
    }
  }
  return [...paths].sort().slice(0, importLimits.paths);
}

/**
 * A file `go test` never compiles: `//go:build ignore`, or `tools` (the tools.go that pins commands
 * such as golangci-lint in go.mod: compiling them would take minutes no test needs).
 */
function neverBuilt(source: string): boolean {
  return /^\/\/go:build\s+(ignore|tools)\s*$/m.test(source.slice(0, headChars));
}

/** The text with Go's comments blanked (string literals kept: an import path is one). */
function withoutComments(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|`[^`]*`|'(?:[^'\\\n]|\\.)*'/g, (token) =>
    token.startsWith('//') || token.startsWith('/*') ? ' ' : token,
  );
}
