// The packages a Go repository imports (other modules' and Go's own), compiled into the build cache
// in a layer of their own on the dependencies' image: every snapshot that imports the same packages
// shares it, so a new snapshot's warm-up compiles only the repository's own packages (a cgo driver
// such as go-sqlite3: about a minute of C once, instead of once per snapshot), and one that imports
// more builds its layer on the nearest earlier one (warmLayers.ts), compiling only those. Nothing of the
// repository is in this build: its go.mod and go.sum (a module of their own in a scratch folder)
// and the list of import paths.
import type { EnvironmentPlan, SourcesWarmup } from '../planTypes.js';
import { importedPackages, isGoSource } from './goImports.js';

/**
 * Makes what the sandbox user cannot read yet readable (folders: enterable). Only that: a chmod of a
 * file a lower layer holds copies it whole into this layer, the build cache twice in the image.
 */
export function readableByAll(folder: string): string {
  return `find ${folder} \\( \\( -type d ! -perm -0555 \\) -o \\( ! -type d ! -perm -0444 \\) \\) -exec chmod a+rX {} +`;
}

/**
 * Go marks a cache entry it uses by setting its time to now, when that time is over an hour old. On
 * a lower layer's file that copies the file whole into the layer being built: the next snapshot's
 * project image, made a day after this layer, held again every entry its build used (34 MB for
 * `testing`, `fmt` and `encoding/json`). The entries made here are dated 2100, which Go takes as
 * fresh and never trims; those dated so already (a lower warm layer's) are left alone.
 */
export function datedAhead(folder: string): string {
  return `find ${folder} -type f ! -newermt @${aheadTime - 1} -exec touch -h -d @${aheadTime} {} +`;
}

/** 2100-01-01 UTC. */
const aheadTime = 4_102_444_800;

/** The list's name among the build's input files. */
const listFile = '.durable-debugger-imports';

/**
 * The warm-up of the packages the sources import, for a module whose go.mod and go.sum files are
 * `inputs`; `offlineGo` sets the build's Go variables as the project's warm-up has them (the image's cache, offline).
 */
export function goDependencyWarmup(
  inputs: Record<string, string>,
  ownModules: readonly string[],
  offlineGo: string,
): SourcesWarmup {
  return {
    name: 'go-imports-1',
    reads: isGoSource,
    summary: (sources) => importedPackages(sources, ownModules).join('\n'),
    plan: (summary): EnvironmentPlan | null => {
      const packages = summary.split('\n').filter(Boolean);
      if (!packages.length) return null;
      return {
        kind: 'go',
        description: `go · the ${packages.length} packages the sources import, compiled`,
        files: { ...inputs, [listFile]: `${packages.join('\n')}\n` },
        script: [
          'set -e',
          // As the project's warm-up compiles them.
          offlineGo,
          'mkdir -p /tmp/go-module && cp -r /env-input/. /tmp/go-module && cd /tmp/go-module',
          // Only what loads here: Go's own packages and other modules' (a locally replaced module, a
          // file for another platform, a package of no required module are the project's warm-up's); no
          // command (a tools.go without its build tag: a command is never imported, and may be large).
          // `go test` links every test with testing's own packages.
          `packages=$(go list -e -f '{{if not .Error}}{{if not .DepsErrors}}{{if eq .Name "main"}}{{else if .Standard}}{{.ImportPath}}{{else if .Module}}{{if not .Module.Main}}{{.ImportPath}}{{end}}{{end}}{{end}}{{end}}' $(cat ${listFile}) testing testing/internal/testdeps 2>/dev/null) || packages=""`,
          'count=$(printf "%s\\n" $packages | grep -c . || true)',
          'if [ -n "$packages" ] && go build $packages >/tmp/go-warm.log 2>&1; then',
          '  echo "warm: $count packages the sources import compiled ahead, for every snapshot that imports them"',
          'else',
          '  tail -n 20 /tmp/go-warm.log 2>/dev/null || true',
          '  echo "warm: the packages the sources import did not all compile; the project\'s warm-up compiles what is left"',
          'fi',
          readableByAll('"$GOCACHE"'),
          datedAhead('"$GOCACHE"'),
          'cd / && rm -rf /tmp/go-module /tmp/go-warm.log',
        ].join('\n'),
        needsRepository: false,
        toolchains: [],
        installers: [],
        build: [],
        containerEnv: [],
        probes: [],
      };
    },
  };
}
