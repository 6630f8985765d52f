// The C and C++ environment: Debian's toolchain (gcc/g++, make, CMake 3.25) and the system
// libraries and test frameworks the build files name, installed with apt through the registry
// proxy; then, per snapshot (projectInstall, a thin image on the toolchain's), the repository
// configured and built once in /opt/build, so that the first run_tests compiles only what differs
// from the snapshot. Each sandbox gets a writable copy of /opt/build (writableCopies).
import { aptInstallScript } from '../debian/debianPackages.js';
import type { EnvironmentPlan } from '../planTypes.js';
import { cppWorkspaceProbe } from './cppProbes.js';
import { readCppProject, type CppProject } from './cppProject.js';
import { shellQuote } from '../../shellQuote.js';

export const cppPaths = {
  /** CMake's build folder: configured and built in the image, a writable copy per sandbox. */
  build: '/opt/build',
  /** ccache's cache for Makefile builds (their objects are in /workspace, made again by each sandbox). */
  ccache: '/opt/ccache',
  /** The hashes of the snapshot's files the image built from (see restoreTimes). */
  sources: '/opt/build/.durable-debugger-sources.sha256',
} as const;

/** The sandbox image's user (deploy/sandbox-image), as whom the tests run when the worker runs as root. */
const sandboxUser = 'sandbox';

/** The time the image's copy of the sources is set to: older than any object the build makes. */
const sourcesTime = '@946684800';

const toolchainPackages = { cmake: ['g++', 'make', 'cmake'], make: ['g++', 'make', 'ccache'] } as const;

export function planCpp(
  files: string[],
  manifests: Record<string, string>,
  apt: readonly string[] = [],
): EnvironmentPlan | null {
  const project = readCppProject(files, manifests);
  if (!project) return null;
  const packages = [
    ...new Set([...toolchainPackages[project.build.kind], ...project.packages.map((found) => found.name), ...apt]),
  ];
  const detected = project.packages.map((found) => `${found.name} (${found.reason})`);
  const cmake = project.build.kind === 'cmake';
  const script = [
    'set -e',
    aptInstallScript(packages),
    `echo "toolchain: $(gcc --version | head -n 1)${cmake ? '; $(cmake --version | head -n 1)' : ''}"`,
    `mkdir -p ${cmake ? cppPaths.build : cppPaths.ccache}`,
    // Debian's ccache links gcc and g++ in its folder, not cc and c++: make's own CC is cc.
    ...(cmake ? [] : ['ln -sf ../../bin/ccache /usr/lib/ccache/cc', 'ln -sf ../../bin/ccache /usr/lib/ccache/c++']),
  ].join('\n');
  const target = project.build.kind === 'make' ? project.build.target : 'check';
  const description = `c/c++ · ${cmake ? 'cmake' : `make ${target}`} · apt ${packages.join(' ')}`;
  const toolchainNotes = [
    `gcc, g++ and make from Debian${cmake ? ', CMake 3.25' : ''} (apt: ${packages.join(' ')})`,
    ...(detected.length ? [`detected: ${detected.join(', ')}`] : []),
    ...(project.fetched.length
      ? [
          `not fetchable: ${project.fetched.map((fetched) => fetched.name).join(', ')} (FetchContent from ${project.fetched[0]?.from})`,
        ]
      : []),
  ];
  const common = {
    kind: 'cpp' as const,
    installers: ['apt' as const],
    description,
    files: {},
    script,
    needsRepository: false,
    toolchains: [],
    toolchainNotes,
    probes: [cppWorkspaceProbe(files, project, true)],
    projectInstall: cmake
      ? { script: cmakeBuildScript(project), previousBuild: cppPaths.build }
      : { script: makeBuildScript(project), previousBuild: cppPaths.ccache },
  };
  if (cmake) {
    return {
      ...common,
      testCommand: `ctest --test-dir ${cppPaths.build} --output-on-failure`,
      build: [`sh ${cppPaths.build}/.durable-debugger-build.sh`],
      containerEnv: [],
      writableCopies: [cppPaths.build],
    };
  }
  return {
    ...common,
    testCommand: `make ${target}`,
    build: [],
    // Make builds in the workspace: ccache makes a sandbox's first build of unchanged files a lookup.
    containerEnv: [`PATH=/usr/lib/ccache:/usr/local/bin:/usr/bin:/bin`, `CCACHE_DIR=${cppPaths.ccache}`],
    writableCopies: [cppPaths.ccache],
  };
}

/** Why configure failed when the build files fetch from the network: builds reach only package registries. */
function fetchNote(project: CppProject): string {
  if (project.fetched.length === 0) return '';
  const named = project.fetched.map((fetched) => `${fetched.name} (${fetched.from})`).join(', ');
  return `echo "durable-debugger: the build files fetch ${named} with FetchContent/ExternalProject; builds reach only package registries (Debian's archive, PyPI, npm, …), not GitHub or other hosts: install it from Debian (\\"apt\\": [...] in durable-debugger.json) or keep a copy in the repository"`;
}

/**
 * The repository's copy configured and built in /opt/build: the sources first set to an old time, so
 * every object is newer; their hashes kept, so a sandbox's first build gives its unchanged files that
 * time again (unchangedToSourcesTime) and compiles only what differs. When /opt/build holds the same
 * repository's previous build (projectInstall.previousBuild), only the files that build saw unchanged
 * get the old time: the others, written for this build, are newer than its objects and are compiled
 * again. A failed compile is the tests' business: each test run builds again and shows it. A failed
 * configure (a missing library) ends the environment.
 */
function cmakeBuildScript(project: CppProject): string {
  const build = cppPaths.build;
  const googletest = project.googletestFetched.map(
    (name) => `-DFETCHCONTENT_SOURCE_DIR_${name.toUpperCase()}=/usr/src/googletest`,
  );
  const configure = [
    `cmake -S /workspace -B ${build} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON`,
    ...googletest,
  ].join(' ');
  return [
    'set -e',
    'cd /workspace',
    `if [ -f ${cppPaths.sources} ]; then`,
    `  sha256sum -c ${cppPaths.sources} > /tmp/durable-debugger-sources.check 2>/dev/null || true`,
    `  ${unchangedToSourcesTime('cat /tmp/durable-debugger-sources.check')} || true`,
    `  from="on the previous snapshot's build ($(grep -vc ': OK$' /tmp/durable-debugger-sources.check || true) of its files differ)"`,
    '  rm -f /tmp/durable-debugger-sources.check',
    'else',
    `  find /workspace -exec touch -h -d ${sourcesTime} {} +`,
    '  from="from /workspace"',
    'fi',
    `if ! ${configure}; then`,
    ...(project.fetched.length ? [`  ${fetchNote(project)}`] : []),
    `  echo "durable-debugger: CMake could not configure the repository: a library it needs may be missing; name its Debian package in durable-debugger.json (\\"apt\\": [\\"libfoo-dev\\"])"`,
    '  exit 1',
    'fi',
    `if cmake --build ${build} -j "$(nproc)"; then built=built; else built="configured (its build fails: each test run builds again and shows why)"; fi`,
    `find . -type f -print0 | sort -z | xargs -0 -r sha256sum > ${cppPaths.sources}`,
    `printf '%s\\n' ${[...firstBuildInSandbox(), `cmake --build ${build} -j "$(nproc)"`].map(shellQuote).join(' ')} > ${build}/.durable-debugger-build.sh`,
    // The sandbox's user owns its copy: CMake and ar replace, re-time and chmod files there (a
    // root-owned libfoo.a that cannot be removed gets the new objects appended, and the old ones link).
    ownedBySandbox(build),
    `echo "project: configured with CMake in ${build} and $built $from"`,
  ].join('\n');
}

/**
 * A sandbox's first build. Its copy of /opt/build must be its user's (CMake and ar replace, re-time
 * and chmod files there; the image's are the sandbox image's user's, and a worker may run the tests as
 * another): else it is copied to be. And the workspace's files, written when the sandbox was made,
 * are newer than the image's objects: those whose content is the image's get the image's source time
 * back, so make compiles only the files that differ. Once per sandbox: later edits change times as usual.
 */
function firstBuildInSandbox(): string[] {
  const build = cppPaths.build;
  const marker = `${build}/.durable-debugger-sandbox-ready`;
  return [
    'cd /workspace',
    `if [ ! -e ${marker} ]; then`,
    `  if [ "$(stat -c %u ${build}/CMakeCache.txt)" != "$(id -u)" ]; then`,
    `    own=$(mktemp -d) && cp -a ${build}/. "$own"/ && find ${build} -mindepth 1 -delete && cp -a "$own"/. ${build}/ && rm -rf "$own"`,
    '  fi',
    `  ${unchangedToSourcesTime(`sha256sum -c ${cppPaths.sources} 2>/dev/null`)}`,
    `  touch ${marker}`,
    'fi',
  ];
}

/** The files `check` (sha256sum -c of the kept hashes) finds unchanged get the sources' old time again. */
function unchangedToSourcesTime(check: string): string {
  return `${check} | sed -n 's/: OK$//p' | tr '\\n' '\\0' | xargs -0 -r touch -h -d ${sourcesTime} 2>/dev/null`;
}

/**
 * A Makefile project: its test target run once through ccache, so each sandbox's build of unchanged
 * files is a cache hit; on the same repository's previous cache when there is one
 * (projectInstall.previousBuild), so that this run too compiles only what differs.
 */
function makeBuildScript(project: CppProject): string {
  const target = project.build.kind === 'make' ? project.build.target : 'check';
  return [
    'cd /workspace',
    `if [ -n "$(ls -A ${cppPaths.ccache} 2>/dev/null)" ]; then from=" on the previous snapshot's cache"; else from=""; fi`,
    `export PATH=/usr/lib/ccache:$PATH CCACHE_DIR=${cppPaths.ccache}`,
    `if timeout 900 make -k ${target} > /tmp/durable-debugger-make.log 2>&1; then result="built and tested"; else result="built as far as it goes (make ${target} fails: each test run shows why)"; fi`,
    'tail -n 5 /tmp/durable-debugger-make.log; rm -f /tmp/durable-debugger-make.log',
    ownedBySandbox(cppPaths.ccache),
    `echo "project: make ${target} $result once$from, its objects kept by ccache in ${cppPaths.ccache}"`,
  ].join('\n');
}

function ownedBySandbox(folder: string): string {
  return `chown -R ${sandboxUser}:${sandboxUser} ${folder} 2>/dev/null || chmod -R a+rwX ${folder}`;
}
