// The project installed as its CI installs it (issue 32 item 2), through the whole product: a
// hatch-vcs library in a real git checkout with a tag is snapshotted on the host, where git is;
// the version `git describe` gives there reaches the environment build (which has no .git), and
// the project's metadata in the image carries it. A later commit makes a new snapshot: the
// project's own install is made again, on the same image of its dependencies.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const docker = connectDocker();
const fixture = await loadFixture('35_py_hatch_vcs_metadata');
let server: TestServer;
let worker: TestWorker;
let scratch: string;
const images = new Set<string>();

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: { [fixture.name]: fixture.script } } });
  scratch = await mkdtemp(join(tmpdir(), 'project-version-test-'));
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
  // The project's images first: each is a child of its dependencies' image.
  for (const image of [...images].reverse())
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
});

/** What the image's venv says about the installed distribution, and where `import natsize` comes from with a workspace mounted. */
function installed(image: string, workspace: string): { version: string; file: string } {
  const output = execFileSync(
    'docker',
    [
      'run',
      '--rm',
      '--network',
      'none',
      '-v',
      `${workspace}:/workspace:ro`,
      '-w',
      '/workspace',
      '-e',
      'PYTHONDONTWRITEBYTECODE=1',
      image,
      '/opt/venv/bin/python3',
      '-c',
      'import importlib.metadata as m, natsize; print(m.version("natsize")); print(natsize.__file__)',
    ],
    { encoding: 'utf8' },
  );
  const [version, file] = output.trim().split('\n') as [string, string];
  return { version, file };
}

/** `python -m pip --version` in the image's venv, as a CI's venv answers it. */
function venvPip(image: string): string {
  return execFileSync(
    'docker',
    ['run', '--rm', '--network', 'none', image, '/opt/venv/bin/python3', '-m', 'pip', '--version'],
    {
      encoding: 'utf8',
    },
  );
}

test(
  'the version of the user’s checkout (git describe on the host) is the installed project’s, editable from /workspace',
  { timeout: 600_000 },
  async () => {
    const repo = join(scratch, fixture.name);
    await cp(fixture.path, repo, { recursive: true });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd: repo,
        encoding: 'utf8',
      }).trim();
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'natsize');
    git('tag', 'v1.4.2');

    const first = (await runToReport(server, worker.taskQueue, { repo }, `project-version-1-${process.pid}`)).report;
    assert.equal(first.status, 'fixed', `${first.stopCondition}: ${first.stopDetail}`);
    assert.ok(first.environment);
    images.add(first.environment.image);
    assert.ok(
      first.environment.toolchain?.includes('natsize 1.4.2 installed editable from /workspace'),
      `the report says how the project was installed: ${first.environment.toolchain?.join(', ')}`,
    );
    // The metadata is there, the code is the workspace's.
    assert.deepEqual(installed(first.environment.image, repo), {
      version: '1.4.2',
      file: '/workspace/src/natsize/__init__.py',
    });
    // The venv has pip, as CI's venvs do (the project's install ran it from there).
    assert.match(
      venvPip(first.environment.image),
      /^pip \d+\.\d+.* from \/opt\/venv\/lib\/python3[.\d]+\/site-packages\/pip /,
    );

    // Two commits after the tag (the bug still there): the version setuptools-scm gives such a checkout.
    await writeFile(join(repo, 'CHANGES.md'), '# Unreleased\n');
    git('add', 'CHANGES.md');
    git('commit', '-q', '-m', 'changes');
    await writeFile(join(repo, 'CHANGES.md'), '# Unreleased\n\n- Exact powers use the larger unit.\n');
    git('commit', '-q', '-a', '-m', 'changes: exact powers');
    const second = (await runToReport(server, worker.taskQueue, { repo }, `project-version-2-${process.pid}`)).report;
    assert.equal(second.status, 'fixed', `${second.stopCondition}: ${second.stopDetail}`);
    assert.ok(second.environment);
    images.add(second.environment.image);
    const head = git('rev-parse', '--short=7', 'HEAD');
    assert.equal(installed(second.environment.image, repo).version, `1.4.3.dev2+g${head}`);
    // A new snapshot makes the project's install again, on the very image of its dependencies.
    assert.notEqual(second.environment.image, first.environment.image);
    const parent = async (image: string) => (await docker.getImage(image).inspect()).Parent;
    assert.equal(await parent(second.environment.image), await parent(first.environment.image));
  },
);
