// What a C or C++ repository's build files say: which build system (CMake, else a Makefile with a
// `check` or `test` target), the Debian packages its find_package calls and test frameworks need,
// and what it fetches from the network at configure time (FetchContent), which a build cannot.
// Pure: reads the texts the builder read (cppEcosystem.isManifest).

export type CppBuildSystem = { kind: 'cmake' } | { kind: 'make'; target: 'check' | 'test'; makefile: string };

export interface CppProject {
  build: CppBuildSystem;
  /** Debian packages the build files ask for, with why: "libssl-dev (find_package(OpenSSL))". */
  packages: { name: string; reason: string }[];
  /** FetchContent/ExternalProject declarations (name → where from), which no build can download. */
  fetched: { name: string; from: string }[];
  /** GoogleTest from FetchContent that Debian's copy of its sources stands in for (FETCHCONTENT_SOURCE_DIR_<NAME>). */
  googletestFetched: string[];
}

const makefiles = ['GNUmakefile', 'makefile', 'Makefile'];
const sourceFile = /\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx)$/i;

/** Whether a path is a build file this ecosystem reads: every CMakeLists.txt, *.cmake below cmake/, the root's Makefile. */
export function isCppManifest(path: string): boolean {
  return (
    path === 'CMakeLists.txt' ||
    (path.endsWith('/CMakeLists.txt') && path.split('/').length <= 4) ||
    /^cmake\/[\w.-]+\.cmake$/.test(path) ||
    makefiles.includes(path)
  );
}

/**
 * find_package names whose Debian package is unambiguous (bookworm). A name not here is left to the
 * repository's `apt` list: the configure step's "Could NOT find X" then says which is missing.
 */
export const findPackageTable: Record<string, string[]> = {
  OpenSSL: ['libssl-dev'],
  ZLIB: ['zlib1g-dev'],
  CURL: ['libcurl4-openssl-dev'],
  GTest: ['libgtest-dev'],
  GMock: ['libgmock-dev'],
  Catch2: ['catch2'],
  doctest: ['doctest-dev'],
  benchmark: ['libbenchmark-dev'],
  fmt: ['libfmt-dev'],
  spdlog: ['libspdlog-dev'],
  nlohmann_json: ['nlohmann-json3-dev'],
  SQLite3: ['libsqlite3-dev'],
  PNG: ['libpng-dev'],
  JPEG: ['libjpeg-dev'],
  BZip2: ['libbz2-dev'],
  LibLZMA: ['liblzma-dev'],
  LibXml2: ['libxml2-dev'],
  EXPAT: ['libexpat1-dev'],
  Eigen3: ['libeigen3-dev'],
  'yaml-cpp': ['libyaml-cpp-dev'],
  Protobuf: ['libprotobuf-dev', 'protobuf-compiler'],
  PkgConfig: ['pkg-config'],
  Threads: [],
  Python3: ['python3-dev'],
  Boost: ['libboost-dev'],
};

/** The build system of a repository, or null when it has none this ecosystem runs. */
function buildSystemOf(files: string[], manifests: Record<string, string>): CppBuildSystem | null {
  if (manifests['CMakeLists.txt'] !== undefined) return { kind: 'cmake' };
  const makefile = makefiles.find((name) => manifests[name] !== undefined);
  if (!makefile) return null;
  // A Makefile that is a task runner for another ecosystem (docs, Go, Node) is not a C build.
  if (!files.some((path) => sourceFile.test(path) && !path.startsWith('node_modules/'))) return null;
  const text = manifests[makefile] as string;
  const target = /^check\s*:/m.test(text) ? 'check' : /^test\s*:/m.test(text) ? 'test' : null;
  return target ? { kind: 'make', target, makefile } : null;
}

export function readCppProject(files: string[], manifests: Record<string, string>): CppProject | null {
  const build = buildSystemOf(files, manifests);
  if (!build) return null;
  const cmakeTexts = Object.entries(manifests)
    .filter(([path]) => path.endsWith('CMakeLists.txt') || path.endsWith('.cmake'))
    .map(([, text]) => withoutComments(text));
  const packages = new Map<string, string>();
  const add = (name: string, reason: string) => packages.has(name) || packages.set(name, reason);
  for (const text of cmakeTexts) {
    for (const match of text.matchAll(/\bfind_package\s*\(\s*([\w.+-]+)([^)]*)\)/gi)) {
      const name = match[1] as string;
      for (const found of findPackageTable[name] ?? []) add(found, `find_package(${name})`);
      if (name === 'Boost') {
        const components = (match[2] as string).match(/COMPONENTS\s+([\w\s]+)/i)?.[1] ?? '';
        for (const component of components.split(/\s+/).filter((word) => /^[a-z_]+$/.test(word)))
          add(`libboost-${component.replace(/_/g, '-')}-dev`, `find_package(Boost COMPONENTS ${component})`);
      }
    }
    if (/\bgtest_discover_tests\s*\(|\bGTest::|\bgtest_main\b/.test(text)) add('libgtest-dev', 'GoogleTest');
    if (/\bGTest::gmock|\bgmock_main\b|\bgmock\b/.test(text)) add('libgmock-dev', 'GoogleMock');
    if (/\bCatch2::|\bcatch_discover_tests\s*\(/.test(text)) add('catch2', 'Catch2');
  }
  const fetched: { name: string; from: string }[] = [];
  const googletestFetched: string[] = [];
  for (const text of cmakeTexts) {
    for (const match of text.matchAll(/\b(?:FetchContent_Declare|ExternalProject_Add)\s*\(\s*([\w.+-]+)([^)]*)\)/gi)) {
      const name = match[1] as string;
      const from = (match[2] as string).match(/\b(?:GIT_REPOSITORY|URL)\s+"?([^\s")]+)/)?.[1] ?? 'the network';
      if (/googletest/i.test(from) || /^(googletest|gtest)$/i.test(name)) {
        googletestFetched.push(name);
        add('libgtest-dev', `FetchContent_Declare(${name}): Debian's googletest sources stand in`);
        add('googletest', `FetchContent_Declare(${name}): Debian's googletest sources stand in`);
      } else fetched.push({ name, from });
    }
  }
  return {
    build,
    packages: [...packages].map(([name, reason]) => ({ name, reason })),
    fetched,
    googletestFetched,
  };
}

function withoutComments(text: string): string {
  return text.replace(/#\[(=*)\[[\s\S]*?\]\1\]/g, '').replace(/#.*$/gm, '');
}
