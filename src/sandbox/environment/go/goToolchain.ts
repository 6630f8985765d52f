// The Go toolchain image, built once per host and Go release and shared by every repository asking
// for that release (plan.basePlan): the sandbox image with the release at /opt/go, fetched in the
// build the way Go's own toolchain switch fetches it, as the module golang.org/toolchain from the
// host's module proxy through the registry proxy, by Go's own client: Debian's golang-go (apt),
// whose `go mod download` checks the module against the checksum database as for any module
// (GOSUMDB as the host sets it). Debian's Go is then purged: the image keeps only the release, on the
// image with Debian's compilers, which cgo builds with.
import { aptInstallScript } from '../debian/debianPackages.js';
import { compilersPlan } from '../debian/compilersImage.js';
import type { EnvironmentPlan, GoToolchain } from '../planTypes.js';
import { goPlatform, goReleaseMount } from './goRelease.js';

/** Where the release is installed (GOROOT). */
export const goRoot = '/opt/go';

/** Installed packages, one a line, sorted: what apt adds is what the build purges. */
const installedPackages = `dpkg-query -W -f '\${db:Status-Status} \${Package}\\n' | sed -n 's/^installed //p' | sort`;

export function goToolchainPlan(need: GoToolchain): EnvironmentPlan {
  const fetched = '/tmp/go-toolchain';
  return {
    kind: 'go',
    installers: ['apt', 'go'],
    // cgo as in CI, whose runners have gcc: a module on a C library (mattn/go-sqlite3) builds, and -race works.
    basePlan: compilersPlan(),
    description: `go toolchain · go ${need.version} (golang.org/toolchain, fetched by Debian's go)`,
    files: {},
    script: [
      'set -e',
      `${installedPackages} > /tmp/packages-before`,
      aptInstallScript(['golang-go']),
      `release=$(cat ${goReleaseMount})`,
      `case "$release" in '' | *[!0-9a-z.]*) echo "go: no Go release to fetch ($release)"; exit 1 ;; esac`,
      `module="golang.org/toolchain@v0.0.1-go$release.${goPlatform()}"`,
      `echo "go: $module with Debian's $(go version | cut -d' ' -f3), GOPROXY=$GOPROXY GOSUMDB=\${GOSUMDB:-sum.golang.org}"`,
      // No go.mod around: the module alone, in a module cache of the build's own, with the host's GOFLAGS.
      `mkdir -p ${fetched}/work && cd ${fetched}/work`,
      `GOTOOLCHAIN=local GO111MODULE=on GOWORK=off GOPATH=${fetched}/path GOMODCACHE=${fetched}/modules GOCACHE=${fetched}/cache GOFLAGS="\${GOFLAGS:-} -modcacherw" go mod download "$module"`,
      // Go verified the module's hash; a lookup in the module cache shows the checksum database was asked.
      `if [ -n "$(ls ${fetched}/modules/cache/download/sumdb 2>/dev/null)" ]; then echo "go: $module matches the checksum database's hash"; else echo "go: $module checked against no checksum database (GOSUMDB=\${GOSUMDB:-}, GONOSUMDB=\${GONOSUMDB:-}, GOPRIVATE=\${GOPRIVATE:-})"; fi`,
      'cd /',
      // The release, as Go unpacks a toolchain module: read-only files, its programs made executable.
      `mv "${fetched}/modules/$module" ${goRoot}`,
      `chmod -R u+w,go-w,a+rX ${goRoot}`,
      `chmod 0755 ${goRoot}/bin/* ${goRoot}/pkg/tool/*/*`,
      `rm -rf ${fetched}`,
      // Debian's go goes, with every package its install added.
      `${installedPackages} > /tmp/packages-after`,
      'added=$(comm -13 /tmp/packages-before /tmp/packages-after)',
      // dpkg runs ldconfig and start-stop-daemon from the sbin folders, which the build's PATH lacks (apt adds them itself).
      'if [ -n "$added" ]; then PATH="/usr/sbin:/sbin:$PATH" dpkg --purge $added; fi',
      'rm -rf /tmp/packages-before /tmp/packages-after /root/.cache /root/go',
      `if command -v go >/dev/null 2>&1; then echo "go: Debian's go is still installed"; exit 1; fi`,
      `GOTOOLCHAIN=local ${goRoot}/bin/go version`,
    ].join('\n'),
    needsRepository: false,
    // The release to fetch, resolved on the host (goRelease.ts): its name is in the image key.
    toolchains: [need],
    build: [],
    containerEnv: [],
    probes: [],
  };
}
