// What a CI test job's own pip install commands install (src/sandbox/environment/python/ciPipInstalls.ts),
// and the Python plan installing it beside the project.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ciPipInstalls } from '../../src/sandbox/environment/python/ciPipInstalls.js';
import { planEnvironment } from '../../src/sandbox/environment/plan.js';

test('packages, requirements files and the extras the project is installed with; what CI fills or upgrades for itself stays out', () => {
  assert.deepEqual(
    ciPipInstalls([
      'python -m pip install --upgrade pip setuptools wheel',
      'pip install tox tox-gh-actions',
      'pip install -e ".[test,yaml]"\npip install pytest responses "requests-mock>=1.11"',
      'pip install --index-url https://pypi.example/simple -r requirements/ci.txt --constraint=constraints.txt',
      'pip install django==${{ matrix.django }} "$EXTRA_PACKAGE"',
      'pip install \\\n  coverage[toml] \\\n  hypothesis',
      'uv pip install --system freezegun && pytest -q',
      'python3.12 -m pip install . && echo pip install not-a-command-word',
      'npm ci',
      'if [ -f requirements-extra.txt ]; then pip install -r requirements-extra.txt; fi',
    ]),
    {
      requirements: [
        'tox-gh-actions',
        'pytest',
        'responses',
        'requests-mock>=1.11',
        '-r ./requirements/ci.txt',
        '-c ./constraints.txt',
        'coverage[toml]',
        'hypothesis',
        'freezegun',
        '-r ./requirements-extra.txt',
      ],
      extras: ['test', 'yaml'],
    },
  );
  assert.deepEqual(ciPipInstalls([]), { requirements: [], extras: [] });
});

test("planEnvironment installs the CI test job's pip installs beside the project, once, and says where they came from", () => {
  const workflow = `name: CI
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install dependencies
        run: |
          python -m pip install --upgrade pip
          pip install -r requirements.txt
          pip install pytest requests-mock
          pip install -e .[cli]
      - name: Test with pytest
        run: pytest
`;
  const manifests = {
    'pyproject.toml':
      '[project]\nname = "weather"\nversion = "1.0"\ndependencies = ["requests"]\n[project.optional-dependencies]\ncli = ["click"]\n',
    'requirements.txt': 'requests>=2.31\n',
    '.github/workflows/python-app.yml': workflow,
  };
  const plan = planEnvironment(Object.keys(manifests), manifests);
  // requirements.txt is installed as the repository's own already: not named twice.
  assert.equal(plan?.files['durable-debugger-ci-deps.txt'], 'pytest\nrequests-mock\n');
  assert.match(plan?.script ?? '', / -r durable-debugger-ci-deps\.txt/);
  assert.match(plan?.description ?? '', /\(pip install in \.github\/workflows\/python-app\.yml \(job build\)\)/);
  assert.match(plan?.files['durable-debugger-requirements.txt'] ?? '', /^requests\nclick\n/);
});
