// The Go environment: the Go release the module asks for (its toolchain line, else its go
// directive's newest patch release) in a toolchain image of its own (goToolchain.ts), the modules of go.sum downloaded once through the registry
// proxy into the image's module cache, and the build cache warmed against the workspace's own
// packages, so that the first `go test` compiles only what the agent changed. In the sandbox go
// runs offline (GOPROXY=off) with go.sum checked as always; vendor/ is used as Go uses it.
import { environmentImageEnv } from '../../container/sandboxEnv.js';
import type { EnvironmentPlan, GoToolchain } from '../planTypes.js';
import { goRoot, goToolchainPlan } from './goToolchain.js';
import { goDependencyWarmup, readableByAll } from './goDependencyWarmup.js';
import { compareGoVersions, parseGoModFile } from './goModule.js';
import { goOwnModulesProbe, ownModules } from './goProbes.js';

export const goPaths = {
  root: goRoot,
  /** A `go` that gives the sandbox a writable copy of the warm build cache, then runs the real one. */
  wrapper: '/opt/go-sandbox/bin',
  modules: '/opt/go-mod',
  /** The build cache the image warms; read-only in the sandbox, copied to GOCACHE by the wrapper. */
  warmCache: '/opt/go-cache',
} as const;

export const goTestCommand = 'go test -v ./...';

/** The oldest Go published as a toolchain module (golang.org/toolchain): older go directives get its newest release. */
const oldestToolchainModule = '1.21';

/** The Go the repository asks for, and why: go.work's lines over go.mod's, the toolchain line over the go directive. */
export function chooseGo(manifests: Record<string, string>): GoToolchain {
  const work = manifests['go.work'];
  const file = work !== undefined ? 'go.work' : 'go.mod';
  const parsed = parseGoModFile(work ?? manifests['go.mod'] ?? '');
  const directive = parsed.go;
  if (
    parsed.toolchain &&
    /^\d+\.\d+\.\d+$/.test(parsed.toolchain) &&
    (!directive || compareGoVersions(parsed.toolchain, directive) >= 0)
  )
    return { kind: 'go', version: parsed.toolchain, reason: `${file}'s toolchain line go${parsed.toolchain}` };
  if (!directive || compareGoVersions(directive, oldestToolchainModule) < 0)
    return {
      kind: 'go',
      version: oldestToolchainModule,
      reason: `${file}'s go directive ${directive ?? 'is absent (Go reads 1.16)'}; Go releases older than ${oldestToolchainModule} are no toolchain modules: the newest ${oldestToolchainModule}`,
    };
  const line = directive.match(/^\d+\.\d+/)?.[0] as string;
  if (/rc|beta/.test(directive))
    return { kind: 'go', version: directive, reason: `${file}'s go directive ${directive}` };
  return { kind: 'go', version: line, reason: `${file}'s go directive ${directive}: the newest ${line} release` };
}

/** go.mod (or go.work) at the root: the plan, else null. */
export function planGo(files: string[], manifests: Record<string, string>): EnvironmentPlan | null {
  if (manifests['go.mod'] === undefined && manifests['go.work'] === undefined) return null;
  const inputs = Object.fromEntries(
    Object.entries(manifests).filter(([path]) => /(^|\/)go\.(mod|sum|work|work\.sum)$/.test(path)),
  );
  const vendored = files.includes('vendor/modules.txt') && manifests['go.work'] === undefined;
  const main = parseGoModFile(manifests['go.mod'] ?? '');
  const go = chooseGo(manifests);
  const sandboxEnv = [
    `PATH=${goPaths.wrapper}:${goPaths.root}/bin:/usr/local/bin:/usr/bin:/bin`,
    ...environmentImageEnv('GOPROXY', 'GOTOOLCHAIN', 'GOMODCACHE', 'GOCACHE', 'GOPATH'),
    ...(vendored ? ['GOFLAGS=-mod=vendor'] : []),
  ];
  const goEnv = `export GOTOOLCHAIN=local GOMODCACHE=${goPaths.modules} GOPATH=/tmp/go GOCACHE=${goPaths.warmCache} PATH=${goPaths.root}/bin:$PATH`;
  return {
    kind: 'go',
    description: `go · ${vendored ? 'vendor/ (-mod=vendor)' : 'go mod download'} (${Object.keys(inputs).sort().join(', ')})`,
    files: inputs,
    script: [
      'set -e',
      `mkdir -p ${goPaths.wrapper} ${goPaths.modules} ${goPaths.warmCache}`,
      `cat > ${goPaths.wrapper}/go <<'WRAPPER'`,
      wrapperScript,
      'WRAPPER',
      `chmod 0755 ${goPaths.wrapper}/go`,
      goEnv,
      'go version',
      // A C compiler makes cgo work; without one Go builds with CGO_ENABLED=0 (its own default then).
      'command -v gcc >/dev/null 2>&1 && echo "cgo: gcc is in the image" || echo "cgo: no C compiler in the image, so CGO_ENABLED=0"',
      'mkdir -p /tmp/go-module && cp -r /env-input/. /tmp/go-module && cd /tmp/go-module',
      // The modules go.sum names (its checksums checked, and the checksum database asked as the host's settings say).
      vendored ? 'echo "vendor/: the modules come from the repository"' : 'go mod download',
      vendored ? 'echo "packages: 0"' : 'echo "packages: $(go list -m -e all 2>/dev/null | tail -n +2 | wc -l)"',
      `chmod -R a+rX ${goPaths.modules}`,
      'cd / && rm -rf /tmp/go-module',
    ].join('\n'),
    needsRepository: false,
    // The release is in the toolchain image this one is built on.
    basePlan: goToolchainPlan(go),
    toolchains: [],
    installers: ['go'],
    testCommand: goTestCommand,
    build: [],
    containerEnv: sandboxEnv,
    probes: vendored ? [] : [goOwnModulesProbe(inputs, false)].filter((probe) => probe !== null),
    projectInstall: {
      // What the sources import is compiled first, in a layer shared by the snapshots that import the
      // same (vendor/ is the repository's: its packages are compiled here with the rest).
      ...(vendored
        ? {}
        : {
            warmup: goDependencyWarmup(
              inputs,
              ownModules(inputs).map((module) => module.path),
              offlineGo(goEnv, false),
            ),
          }),
      // Every package and its tests compiled (and vetted, as go test does) into the build cache, nothing run:
      // the first test run links and runs. Code that does not compile yet is the agent's to fix.
      script: [
        'set -e',
        offlineGo(goEnv, vendored),
        'cd /workspace',
        `if go test -exec /bin/true -run '^$' ./... >/tmp/go-warm.log 2>&1; then warm="every package compiled"; else warm="some packages do not compile yet"; tail -n 20 /tmp/go-warm.log; fi`,
        readableByAll(goPaths.warmCache),
        `echo "project: ${main.module ?? 'the Go module'} from /workspace, its packages and tests compiled into the image's build cache ($warm)"`,
      ].join('\n'),
    },
  };
}

/**
 * The sandbox's `go`: GOCACHE must be writable (the root is read-only) yet start warm, so the first go
 * command copies the image's build cache there; then the real go runs.
 */
const wrapperScript = [
  '#!/bin/sh',
  `if [ -n "$GOCACHE" ] && [ "$GOCACHE" != ${goPaths.warmCache} ] && [ ! -e "$GOCACHE" ] && [ -d ${goPaths.warmCache} ]; then`,
  '  copy="$GOCACHE.$$"',
  `  if cp -r ${goPaths.warmCache} "$copy" 2>/dev/null && mv -T "$copy" "$GOCACHE" 2>/dev/null; then :; else rm -rf "$copy"; fi`,
  'fi',
  `exec ${goPaths.root}/bin/go "$@"`,
].join('\n');

/** The build's go offline, as the sandbox's: no proxy, and the host's GOFLAGS unset (vendor/'s own flag kept). */
function offlineGo(goEnv: string, vendored: boolean): string {
  return [goEnv, 'export GOPROXY=off', vendored ? 'export GOFLAGS=-mod=vendor' : 'unset GOFLAGS'].join('\n');
}
