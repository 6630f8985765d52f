// The C and C++ plan: which build system, the Debian packages the build files ask for (find_package,
// GoogleTest fetched with FetchContent), what cannot be fetched, and a Makefile that is no C build.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';
import { readCppProject } from '../../src/sandbox/environment/cpp/cppProject.js';

const cmake = `cmake_minimum_required(VERSION 3.14)
project(x CXX)
find_package(OpenSSL REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS filesystem program_options)
# find_package(CURL) is commented out
include(FetchContent)
FetchContent_Declare(googletest URL https://github.com/google/googletest/archive/v1.14.0.zip)
FetchContent_Declare(json GIT_REPOSITORY https://github.com/nlohmann/json.git GIT_TAG v3.11.3)
FetchContent_MakeAvailable(googletest json)
`;

test('CMake: find_package names Debian packages, GoogleTest from FetchContent gets Debian’s sources, the rest cannot be fetched', () => {
  const files = ['CMakeLists.txt', 'src/a.cpp', 'include/x/a.hpp'];
  const plan = planEnvironment(files, { 'CMakeLists.txt': cmake, 'durable-debugger.json': '{"apt": ["libpq-dev"]}' });
  assert.ok(plan);
  assert.equal(plan.kind, 'cpp');
  assert.deepEqual(plan.installers, ['apt']);
  for (const name of [
    'g++',
    'make',
    'cmake',
    'libssl-dev',
    'libboost-dev',
    'libboost-filesystem-dev',
    'libboost-program-options-dev',
    'libgtest-dev',
    'googletest',
    'libpq-dev',
  ])
    assert.match(
      plan.script,
      new RegExp(`install -y --no-install-recommends .*(?<= )${name.replace(/\+/g, '\\+')}( |$)`, 'm'),
      name,
    );
  assert.doesNotMatch(plan.script, /libcurl/, 'a commented-out find_package');
  assert.equal(
    (plan.script.match(/apt-get -q .* update/g) ?? []).length,
    1,
    'one apt run for toolchain and the file’s packages',
  );
  const install = plan.projectInstall?.script ?? '';
  assert.match(install, /-DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=\/usr\/src\/googletest/);
  assert.match(install, /fetch json \(https:\/\/github\.com\/nlohmann\/json\.git\) with FetchContent.*not GitHub/);
  assert.equal(plan.testCommand, 'ctest --test-dir /opt/build --output-on-failure');
  assert.deepEqual(plan.build, ['sh /opt/build/.durable-debugger-build.sh']);
  assert.deepEqual(plan.writableCopies, ['/opt/build']);
  // The same repository's previous build is put in /opt/build first: only files it saw unchanged get the old time.
  assert.equal(plan.projectInstall?.previousBuild, '/opt/build');
  assert.match(install, /if \[ -f \/opt\/build\/\.durable-debugger-sources\.sha256 \]; then\n {2}sha256sum -c/);
  assert.ok(plan.toolchainNotes?.some((note) => /not fetchable: json/.test(note)));
});

test('a Makefile with a check target and C sources is a C build; a task-runner Makefile or one without a test target is not', () => {
  const makefile = 'all: lib\n\ncheck: tests/run\n\t./tests/run\n';
  const plan = planEnvironment(['Makefile', 'src/a.c'], { Makefile: makefile });
  assert.equal(plan?.kind, 'cpp');
  assert.equal(plan?.testCommand, 'make check');
  assert.ok(plan?.containerEnv.includes('CCACHE_DIR=/opt/ccache'));
  // Make builds in the workspace: the same repository's previous ccache is what carries over.
  assert.equal(plan?.projectInstall?.previousBuild, '/opt/ccache');
  assert.equal(readCppProject(['Makefile', 'docs/index.md'], { Makefile: makefile }), null);
  assert.equal(readCppProject(['Makefile', 'src/a.c'], { Makefile: 'all:\n\tcc a.c\n' }), null);
  assert.deepEqual(readCppProject(['Makefile', 'a.c'], { Makefile: 'test:\n\t./t\n' })?.build, {
    kind: 'make',
    target: 'test',
    makefile: 'Makefile',
  });
});

test('a repository that is another ecosystem’s keeps its plan (a Python project with a CMakeLists.txt for its extension)', () => {
  const plan = planEnvironment(['CMakeLists.txt', 'requirements.txt', 'src/a.cpp'], {
    'CMakeLists.txt': cmake,
    'requirements.txt': 'pytest\n',
  });
  assert.equal(plan?.kind, 'python');
});
