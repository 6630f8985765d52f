// What a noxfile's test sessions install (src/sandbox/environment/python/noxConfig.ts), on the
// shapes of real noxfiles: urllib3's (a helper the test session calls, a requirements file),
// google-cloud's (module-level lists spread into session.install), and a plain one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { noxTestDeps } from '../../src/sandbox/environment/python/noxConfig.js';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';

const urllib3 = `from __future__ import annotations

import os
import nox


def tests_impl(
    session: nox.Session,
    extras: str = "socks,brotli,zstd,h2",
    byte_string_comparisons: bool = False,
) -> None:
    # Install deps and the package itself.
    session.install("-r", "dev-requirements.txt")
    session.install(f".[{extras}]")

    # Show the pip version.
    session.run("pip", "--version")
    session.run("python", "-m", "coverage", "run", "--parallel-mode", "-m", "pytest", *(session.posargs or ("test/",)))


@nox.session(python=["3.9", "3.10", "3.11", "3.12", "3.13", "pypy3.10"])
def test(session: nox.Session) -> None:
    tests_impl(session)


@nox.session()
def lint(session: nox.Session) -> None:
    session.install("pre-commit")
    session.run("pre-commit", "run", "--all-files")
`;

const googleCloud = `import pathlib
import nox

UNIT_TEST_PYTHON_VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
UNIT_TEST_STANDARD_DEPENDENCIES = [
    "mock",
    "asyncmock",
    "pytest",
    "pytest-cov",
    "pytest-asyncio",  # for the async client
]
UNIT_TEST_EXTERNAL_DEPENDENCIES = []
UNIT_TEST_LOCAL_DEPENDENCIES = []
UNIT_TEST_DEPENDENCIES = ["freezegun>=1.2,<2"]
SYSTEM_TEST_STANDARD_DEPENDENCIES = ["mock", "pytest", "google-cloud-testutils"]

CURRENT_DIRECTORY = pathlib.Path(__file__).parent.absolute()


def install_unittest_dependencies(session, *constraints):
    standard_deps = UNIT_TEST_STANDARD_DEPENDENCIES + UNIT_TEST_DEPENDENCIES
    session.install(*standard_deps, *constraints)

    if UNIT_TEST_LOCAL_DEPENDENCIES:
        session.install(*UNIT_TEST_LOCAL_DEPENDENCIES, *constraints)

    session.install("-e", ".[grpc]", *constraints)


@nox.session(python=UNIT_TEST_PYTHON_VERSIONS)
@nox.parametrize(
    "protobuf_implementation",
    ["python", "upb", "cpp"],
)
def unit(session, protobuf_implementation):
    # Install all test dependencies, then install this package in-place.
    constraints_path = str(CURRENT_DIRECTORY / "testing" / f"constraints-{session.python}.txt")
    install_unittest_dependencies(session, "-c", constraints_path)
    session.run("py.test", "--quiet", "--cov=google", "tests/unit")


@nox.session(python="3.12")
def docs(session):
    session.install("-e", ".")
    session.install("sphinx==4.5.0", "alabaster")
    session.run("sphinx-build", "docs/", "docs/_build/html/")
`;

test("urllib3's shape: the helper the test session calls installs a requirements file; lint's tools stay out", () => {
  assert.deepEqual(noxTestDeps(urllib3), { requirements: ['-r ./dev-requirements.txt'], extras: [] });
});

test("google-cloud's shape: lists spread into session.install, summed in the helper; the project's extra; docs' tools stay out", () => {
  assert.deepEqual(noxTestDeps(googleCloud), {
    requirements: ['mock', 'asyncmock', 'pytest', 'pytest-cov', 'pytest-asyncio', 'freezegun>=1.2,<2'],
    extras: ['grpc'],
  });
});

test('a session that runs pytest under another name; options with values, constraints, the project itself', () => {
  const noxfile = `import nox

@nox.session
def check(session):
    session.install("--requirement=requirements/test.txt", "-c", "constraints.txt", "hypothesis[zoneinfo]")
    session.install(".")
    session.install("--editable", ".[yaml, toml]", silent=True)
    session.run("python", "-m", "pytest", *session.posargs)
`;
  assert.deepEqual(noxTestDeps(noxfile), {
    requirements: ['-r ./requirements/test.txt', '-c ./constraints.txt', 'hypothesis[zoneinfo]'],
    extras: ['yaml', 'toml'],
  });
  assert.deepEqual(noxTestDeps(undefined), { requirements: [], extras: [] });
  assert.deepEqual(noxTestDeps('this is not python ((('), { requirements: [], extras: [] });
});

test('planEnvironment installs what the test sessions install, a named file only when it travels, the extras named', () => {
  const manifests = {
    'pyproject.toml':
      '[project]\nname = "google-cloud-thing"\nversion = "1.0"\ndependencies = ["protobuf"]\n[project.optional-dependencies]\ngrpc = ["grpcio"]\n',
    'noxfile.py': googleCloud,
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.equal(
    plan?.files['durable-debugger-nox-deps.txt'],
    'mock\nasyncmock\npytest\npytest-cov\npytest-asyncio\nfreezegun>=1.2,<2\n',
  );
  assert.match(plan?.script ?? '', / -r durable-debugger-nox-deps\.txt/);
  assert.match(plan?.description ?? '', /\(noxfile\.py test sessions\)/);
  assert.match(plan?.files['durable-debugger-requirements.txt'] ?? '', /^protobuf\ngrpcio\n/);
  // A file the session names travels with it (dev-requirements.txt is installed as the repository's
  // own already: not named twice); a file not read with the manifests is not named to pip.
  const withFile = {
    'setup.py': 'setup()',
    'noxfile.py': urllib3.replace('dev-requirements.txt', 'ci/requirements-nox.txt'),
    'ci/requirements-nox.txt': 'pytest\n',
  };
  assert.equal(
    planEnvironment(Object.keys(withFile), withFile)?.files['durable-debugger-nox-deps.txt'],
    '-r ./ci/requirements-nox.txt\n',
  );
  const installedAlready = { 'setup.py': 'setup()', 'noxfile.py': urllib3, 'dev-requirements.txt': 'pytest\n' };
  const plan2 = planEnvironment(Object.keys(installedAlready), installedAlready);
  assert.equal(plan2?.files['durable-debugger-nox-deps.txt'], undefined);
  assert.match(plan2?.script ?? '', / -r dev-requirements\.txt/);
  const elsewhere = { 'setup.py': 'setup()', 'noxfile.py': urllib3.replace('dev-requirements.txt', 'ci/deps.txt') };
  assert.equal(planEnvironment(Object.keys(elsewhere), elsewhere)?.files['durable-debugger-nox-deps.txt'], undefined);
});
