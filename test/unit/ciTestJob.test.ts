// The job of a repository's GitHub Actions CI that runs its tests (src/sandbox/environment/ciTestJob.ts):
// which one, the variables of its test step as planEnvironment gives them to the tests, its commands.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ciTestJob, isCiWorkflow } from '../../src/sandbox/environment/ciTestJob.js';
import { manifestCandidates, planEnvironment } from '../../src/sandbox/environment/plan.js';

const tests = `name: tests
on: [push, pull_request]
env:
  FORCE_COLOR: 1
  PIP_DISABLE_PIP_VERSION_CHECK: true
jobs:
  lint:
    runs-on: ubuntu-latest
    env:
      LINTING: yes
    steps:
      - run: ruff check .
  test:
    runs-on: \${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest]
        python: ['3.11', '3.12']
    env:
      DATABASE_URL: 'sqlite:///:memory:'
      PYTHON_VERSION: \${{ matrix.python }}
      API_TOKEN: \${{ secrets.API_TOKEN }}
      PATH: /opt/evil
      LD_PRELOAD: /tmp/x.so
      GITHUB_TOKEN: abc
      JAVA_HOME: /usr/lib/jvm/temurin-17-jdk-amd64
      CC: clang
      COVERAGE_FILE: /home/runner/work/app/.coverage
    steps:
      - uses: actions/checkout@v4
      - run: pip install -r requirements-dev.txt
      - name: Run the tests
        run: python -m pytest -q
        env:
          APP_ENV: testing
          DATABASE_URL: sqlite:///test.db
`;

test('only .github/workflows/*.yml and *.yaml are read, and they are manifests', () => {
  assert.ok(isCiWorkflow('.github/workflows/tests.yml'));
  assert.ok(isCiWorkflow('.github/workflows/ci.yaml'));
  assert.ok(!isCiWorkflow('.github/workflows/sub/ci.yml'));
  assert.ok(!isCiWorkflow('.github/dependabot.yml'));
  assert.ok(!isCiWorkflow('docs/.github/workflows/ci.yml'));
  assert.deepEqual(manifestCandidates(['.github/workflows/tests.yml', 'src/a.py']), ['.github/workflows/tests.yml']);
});

test("the test step's variables: the workflow's, the job's and the step's, literal ones only, never the sandbox's own or the runner's places; the commands up to it", () => {
  const found = ciTestJob({ '.github/workflows/tests.yml': tests });
  assert.deepEqual(found, {
    from: '.github/workflows/tests.yml (job test)',
    variables: [
      'FORCE_COLOR=1',
      'PIP_DISABLE_PIP_VERSION_CHECK=true',
      'DATABASE_URL=sqlite:///test.db',
      'APP_ENV=testing',
    ],
    commands: ['pip install -r requirements-dev.txt', 'python -m pytest -q'],
  });
});

test('a job with services or a container, or on Windows or macOS, is passed over; the next file is read', () => {
  const integration = `jobs:
  integration:
    runs-on: ubuntu-latest
    services:
      postgres: { image: postgres:16, ports: ['5432:5432'] }
    env: { DATABASE_URL: 'postgresql://postgres@localhost:5432/test' }
    steps: [{ run: pytest tests/integration }]
  in-container:
    runs-on: ubuntu-latest
    container: node:20
    env: { DATABASE_URL: 'x' }
    steps: [{ run: npm test }]
  windows:
    runs-on: [windows-latest]
    env: { DATABASE_URL: 'y' }
    steps: [{ run: npm test }]
`;
  const found = ciTestJob({
    '.github/workflows/integration.yml': integration,
    '.github/workflows/tests.yml': tests,
  });
  assert.equal(found?.from, '.github/workflows/tests.yml (job test)');
});

test('test steps in the words of each ecosystem; steps that only install or lint are not', () => {
  const stepRunning = (run: string) =>
    ciTestJob({
      '.github/workflows/ci.yml': `jobs:\n  a:\n    env: { X: '1' }\n    steps:\n      - run: ${JSON.stringify(run)}\n`,
    });
  for (const run of [
    'pytest',
    'python -m pytest -x tests/',
    'tox -e py',
    'npm test',
    'npm run test:unit',
    'pnpm test',
    'yarn test --ci',
    'npx jest --coverage',
    'npx vitest run',
    'go test ./...',
    'cargo test --all-features',
    './mvnw -B verify',
    'mvn test',
    './gradlew check',
    'ctest --output-on-failure',
    'make test',
    'pip install -e .\npytest',
  ])
    assert.ok(stepRunning(run), run);
  for (const run of [
    'pip install pytest',
    'npm ci',
    'ruff check .',
    'npm run build',
    'echo testing',
    'pytest-cov-report',
  ])
    assert.equal(stepRunning(run), null, run);
});

test('a file that is not YAML, or has no jobs, gives nothing', () => {
  assert.equal(ciTestJob({ '.github/workflows/a.yml': 'jobs: [unclosed' }), null);
  assert.equal(ciTestJob({ '.github/workflows/a.yml': 'name: nothing' }), null);
  assert.equal(
    ciTestJob({
      '.github/workflows/a.yml': 'jobs:\n  a:\n    env: ${{ fromJSON(x) }}\n    steps: [{ run: pytest }]',
    })?.variables.length,
    0,
  );
});

test("planEnvironment gives the tests CI's variables and says so; the plan's own names (tox's setenv) keep their values", () => {
  const manifests = {
    'requirements.txt': 'pytest\n',
    'tox.ini': '[testenv]\ndeps = pytest\nsetenv =\n    APP_ENV = tox\n',
    '.github/workflows/tests.yml': tests,
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  assert.ok(plan);
  assert.ok(plan.containerEnv.includes('DATABASE_URL=sqlite:///test.db'));
  assert.ok(plan.containerEnv.includes('APP_ENV=tox'));
  assert.ok(!plan.containerEnv.includes('APP_ENV=testing'));
  assert.ok(!plan.containerEnv.some((line) => line.startsWith('LD_PRELOAD=') || line === 'PATH=/opt/evil'));
  assert.match(
    plan.toolchainNotes?.join('\n') ?? '',
    /CI's variables FORCE_COLOR, PIP_DISABLE_PIP_VERSION_CHECK, DATABASE_URL \(\.github\/workflows\/tests\.yml \(job test\)\)/,
  );
  const without = planEnvironment(['requirements.txt'], { 'requirements.txt': 'pytest\n' });
  assert.doesNotMatch(without?.toolchainNotes?.join('\n') ?? '', /CI's variables/);
});
