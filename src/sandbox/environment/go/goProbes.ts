// Go's check that the tests compile the repository's own modules from /workspace: a module of the
// repository (the root's, a nested go.mod's) that the build list takes from the module cache instead
// (required at a version, or replaced by a registry's copy) would be tested in place of the
// workspace's code. Read from `go list -m all`, which needs only the go.mod files and the image's
// module cache: no source is compiled, nothing of the repository runs.
import type { EnvironmentProbe } from '../planTypes.js';
import { parseGoModFile } from './goModule.js';

/** The modules the repository holds: each go.mod's module path and its folder ('' for the root). */
export function ownModules(manifests: Record<string, string>): Array<{ path: string; folder: string }> {
  return Object.entries(manifests)
    .filter(([file]) => file === 'go.mod' || file.endsWith('/go.mod'))
    .map(([file, text]) => ({
      path: parseGoModFile(text).module,
      folder: file.slice(0, -'go.mod'.length).replace(/\/$/, ''),
    }))
    .filter((module): module is { path: string; folder: string } => !!module.path && /^[\w.~/-]+$/.test(module.path))
    .slice(0, 100);
}

/** With `ifPresent`, an image without Go passes (an image or Dockerfile the repository names). */
export function goOwnModulesProbe(manifests: Record<string, string>, ifPresent: boolean): EnvironmentProbe | null {
  const modules = ownModules(manifests);
  if (modules.length === 0) return null;
  const files = Object.keys(manifests).filter((file) => /(^|\/)go\.(mod|sum|work|work\.sum)$/.test(file));
  const checks = modules.map(({ path, folder }) => `check '${path}' '${folder}'`);
  return {
    description: "the tests compile the repository's own Go modules from /workspace",
    advice:
      "A require or replace directive takes a module of the repository from the module cache: replace it by its folder (replace example.com/m => ./m) or list it in go.work's use, as the repository's own CI would need too.",
    files,
    script: [
      `GO=/opt/go/bin/go; [ -x "$GO" ] || GO=$(command -v go) || ${ifPresent ? 'exit 0' : '{ echo "go is not in the image"; exit 1; }'}`,
      'cd /workspace',
      'export GOCACHE=/tmp/go-probe-cache GOPROXY=off GOTOOLCHAIN=local GOFLAGS=',
      `"$GO" list -e -m -f '{{.Path}}|{{.Main}}|{{.Dir}}|{{with .Replace}}{{.Path}}{{end}}' all > /tmp/go-modules.txt 2>/dev/null || true`,
      'status=0',
      'check() {',
      `  line=$(awk -F'|' -v p="$1" '$1 == p' /tmp/go-modules.txt | head -n 1)`,
      '  [ -n "$line" ] || return 0',
      `  main=$(echo "$line" | cut -d'|' -f2); dir=$(echo "$line" | cut -d'|' -f3); by=$(echo "$line" | cut -d'|' -f4)`,
      '  want=/workspace${2:+/$2}',
      '  [ "$main" = true ] && [ "$dir" = "$want" ] && return 0',
      '  echo "go module $1 (the repository\'s ${2:-root} go.mod) is compiled from ${dir:-a copy of a registry}${by:+ (replaced by $by)}, not $want"',
      '  status=1',
      '}',
      ...checks,
      'exit $status',
    ].join('\n'),
  };
}
