// Hostile builds, through the real worker, Docker and registries: a dependency's npm postinstall
// (served by a registry the host's npmrc names), an sdist whose setup.py runs at install time
// (served by an index pip's settings name), `setup` commands and a Dockerfile RUN step each try
// to reach the Temporal server's port, PostgreSQL, a host that is no registry, and to read
// ~/.npmrc and the worker's credential variables. Every attempt is recorded in the image; each
// must fail, the registries must still work, and the environment must still build. Every image
// built here is then searched for the host's settings (Config.Env and every layer). A dependency
// that plants a copy of the project where Node would load it fails the build's own check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { connectDocker } from '../../src/sandbox/container/container.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { hostSettingsInImage } from '../support/imageInspection.js';

const run = promisify(execFile);
const docker = connectDocker();
const sandboxImage = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';
const repositories = join(import.meta.dirname, 'repositories', 'hostile_builds');
/** Every canary secret starts so: the probes look for it in their environment, the image check in every layer. */
const canary = `hostile-canary-${randomBytes(6).toString('hex')}`;
const imagesBuilt = new Set<string>();
/** The images of the four hostile builds, searched for the host's settings. */
const hostileImages = new Set<string>();
const savedEnvironment = { ...process.env };

let server: TestServer;
let worker: TestWorker;
let scratch: string;
let postgres: Server;
const postgresConnections: string[] = [];
let npmRegistry: HttpServer;
let pipIndex: HttpServer;
const registryRequests: string[] = [];
let hostNpmrc: string;

function portOf(listener: Server | HttpServer): number {
  return (listener.address() as AddressInfo).port;
}

function listen<T extends Server | HttpServer>(listener: T): Promise<T> {
  return new Promise((resolve) => listener.listen(0, '127.0.0.1', () => resolve(listener)));
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hostile-builds-'));
  // PostgreSQL's stand-in on the host's loopback: any connection is recorded.
  postgres = await listen(createServer((socket) => (postgresConnections.push('connected'), socket.destroy())));
  npmRegistry = await listen(createHttpServer((request, response) => serveNpm(request.url ?? '', response)));
  pipIndex = await listen(createHttpServer((request, response) => servePip(request.url ?? '', response)));

  // The host's settings: an npmrc naming the hostile package's registry (and a token for another
  // registry), pip's extra index (with a password), and the worker's secrets, as variables.
  hostNpmrc = join(scratch, 'host.npmrc');
  await writeFile(
    hostNpmrc,
    [
      `@hostile:registry=http://127.0.0.1:${portOf(npmRegistry)}/`,
      `//npm.private.example/:_authToken=${canary}-registry-token`,
      'nodedir=/usr',
      '',
    ].join('\n'),
  );
  Object.assign(process.env, {
    npm_config_userconfig: hostNpmrc,
    NPM_CONFIG_USERCONFIG: hostNpmrc,
    PIP_EXTRA_INDEX_URL: `http://probe:${canary}-pip-password@127.0.0.1:${portOf(pipIndex)}/simple`,
    PIP_TRUSTED_HOST: '127.0.0.1',
    NPM_TOKEN: `${canary}-npm-token`,
    AWS_SECRET_ACCESS_KEY: `${canary}-aws-secret`,
    GITHUB_TOKEN: `${canary}-github-token`,
    // What an `npm run` that started the worker would set, with host paths:
    npm_config_node_gyp: `/${canary}/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js`,
    npm_config_prefix: `/${canary}/prefix`,
    npm_config_local_prefix: `/${canary}/durable-debugger`,
  });

  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  for (const listener of [postgres, npmRegistry, pipIndex]) listener?.close();
  process.env = savedEnvironment;
  for (const image of imagesBuilt)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

/** What each probe is told to try (the canary only encoded: the image check looks for it in every file). */
function targets(registry: string): string {
  return JSON.stringify({
    temporal: `127.0.0.1:${new URL(`http://${server.address}`).port}`,
    postgres: `127.0.0.1:${portOf(postgres)}`,
    nonRegistry: 'storage.googleapis.com:443',
    registry,
    hostNpmrc,
    canaries: [canary].map((value) => Buffer.from(value).toString('base64')),
  });
}

// --- the two registries the host's settings name -------------------------------------------

const packed: { npm?: Buffer; sdist?: Buffer; shadow?: Buffer } = {};

async function packNpmProbe(): Promise<Buffer> {
  return packNpm('hostile-probe', {
    'probe.js': await readFile(join(repositories, 'probe.js'), 'utf8'),
    'targets.json': targets('registry.npmjs.org:443'),
  });
}

async function packSdist(): Promise<Buffer> {
  const folder = join(scratch, 'sdist', 'hostile_sdist-1.0.0');
  await cp(join(repositories, 'packages', 'hostile-sdist'), folder, { recursive: true });
  await cp(join(repositories, 'probe.py'), join(folder, 'probe.py'));
  await writeFile(join(folder, 'targets.json'), targets('pypi.org:443'));
  await writeFile(join(folder, 'PKG-INFO'), 'Metadata-Version: 2.1\nName: hostile-sdist\nVersion: 1.0.0\n');
  const tarball = join(scratch, 'hostile_sdist-1.0.0.tar.gz');
  await run('tar', ['-czf', tarball, '-C', join(scratch, 'sdist'), 'hostile_sdist-1.0.0']);
  return readFile(tarball);
}

/** A package folder of the test's, packed as npm packs it (its files under package/). */
async function packNpm(name: string, extra: Record<string, string> = {}): Promise<Buffer> {
  const folder = join(scratch, `npm-pack-${name}`, 'package');
  await cp(join(repositories, 'packages', name), folder, { recursive: true });
  for (const [path, text] of Object.entries(extra)) await writeFile(join(folder, path), text);
  const tarball = join(scratch, `${name}-1.0.0.tgz`);
  await run('tar', ['-czf', tarball, '-C', join(scratch, `npm-pack-${name}`), 'package']);
  return readFile(tarball);
}

function serveNpm(url: string, response: import('node:http').ServerResponse): void {
  registryRequests.push(`npm ${url}`);
  for (const [name, tarball, postinstall] of [
    ['probe', packed.npm, 'node probe.js npm-postinstall'],
    ['shadow', packed.shadow, 'node plant.js'],
  ] as const) {
    if (!tarball) continue;
    if (url === `/@hostile%2f${name}` || url === `/@hostile/${name}`) {
      const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          name: `@hostile/${name}`,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: `@hostile/${name}`,
              version: '1.0.0',
              main: 'index.js',
              scripts: { postinstall },
              dist: {
                tarball: `http://127.0.0.1:${portOf(npmRegistry)}/@hostile/${name}/-/${name}-1.0.0.tgz`,
                integrity,
                shasum: createHash('sha1').update(tarball).digest('hex'),
              },
            },
          },
        }),
      );
      return;
    }
    if (url === `/@hostile/${name}/-/${name}-1.0.0.tgz`) return void response.writeHead(200).end(tarball);
  }
  response.writeHead(404).end();
}

function servePip(url: string, response: import('node:http').ServerResponse): void {
  registryRequests.push(`pip ${url}`);
  const sdist = packed.sdist;
  if (sdist && url === '/simple/hostile-sdist/') {
    const sha256 = createHash('sha256').update(sdist).digest('hex');
    response
      .writeHead(200, { 'Content-Type': 'text/html' })
      .end(
        `<!DOCTYPE html><html><body><a href="/packages/hostile_sdist-1.0.0.tar.gz#sha256=${sha256}">hostile_sdist-1.0.0.tar.gz</a></body></html>`,
      );
    return;
  }
  if (sdist && url === '/packages/hostile_sdist-1.0.0.tar.gz') return void response.writeHead(200).end(sdist);
  response.writeHead(404).end();
}

// --- the cases ----------------------------------------------------------------------------

interface Attempt {
  attempt: string;
  reached: boolean;
  detail: string;
}

/** Runs the repository to its report, then reads what its probe recorded in the built image. */
async function buildHostile(name: string, probeCase: string, prepare?: (repo: string) => Promise<void>) {
  const repo = join(scratch, 'repositories', name);
  await cp(join(repositories, name), repo, { recursive: true });
  await prepare?.(repo);
  const requestsBefore = worker.fake.requests.length;
  const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-${name}-${process.pid}`);
  if (report.environment) {
    imagesBuilt.add(report.environment.image);
    hostileImages.add(report.environment.image);
  }
  // The environment built, and the repository's tests (which use what was installed) passed in it.
  assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
  assert.equal(report.environment?.reused, false);
  assert.equal(worker.fake.requests.length, requestsBefore, 'no model call');
  const attempts = JSON.parse(
    await readFromImage(report.environment?.image as string, `/hostile-probes/${probeCase}.json`),
  ) as Attempt[];
  return { report, attempts };
}

/** What files of a built image hold (read in a container of it without network). */
async function readFromImage(image: string, ...paths: string[]): Promise<string> {
  const { stdout } = await run('docker', ['run', '--rm', '--network', 'none', image, 'cat', ...paths]);
  return stdout;
}

/**
 * Every attempt failed but the one at the registry, which must work. A Dockerfile's RUN steps keep
 * Docker's default capabilities (its builder refuses security options; docs/environments.md).
 */
function assertConfined(attempts: Attempt[], options: { dockerBuilder?: boolean } = {}): void {
  const byName = new Map(attempts.map((attempt) => [attempt.attempt, attempt]));
  const expected = [
    "the Temporal server's port",
    'PostgreSQL',
    "PostgreSQL's default port",
    'a host that is no registry',
    "the Temporal server's port through the proxy",
    'PostgreSQL through the proxy',
    'a host that is no registry through the proxy',
    '~/.npmrc',
    '/root/.npmrc',
    "the host's npmrc",
    'credential variables',
    'privileges beyond owning files',
    'the package registry through the proxy',
  ];
  assert.deepEqual([...byName.keys()], expected, 'the probe ran every attempt');
  for (const attempt of attempts) {
    if (attempt.attempt === 'the package registry through the proxy') {
      assert.equal(attempt.reached, true, `the registry must still work: ${attempt.detail}`);
      continue;
    }
    if (attempt.attempt === 'privileges beyond owning files' && options.dockerBuilder) continue;
    assert.equal(attempt.reached, false, `${attempt.attempt} was reached: ${attempt.detail}`);
  }
  // The proxy itself refused (not merely a missing route): 403 for every host that is no registry.
  for (const name of [
    "the Temporal server's port through the proxy",
    'PostgreSQL through the proxy',
    'a host that is no registry through the proxy',
  ])
    assert.match(byName.get(name)?.detail ?? '', /^HTTP\/1\.1 403/, name);
  assert.deepEqual(postgresConnections, [], 'PostgreSQL never saw a connection');
}

test(
  'an npm postinstall of a dependency reaches nothing but the registries; the environment builds',
  { timeout: 600_000 },
  async () => {
    packed.npm = await packNpmProbe();
    const { attempts } = await buildHostile('npm_postinstall', 'npm-postinstall');
    assertConfined(attempts);
    assert.ok(registryRequests.includes('npm /@hostile%2fprobe'), 'the hostile package came from its registry');
  },
);

test(
  "a dependency's postinstall that plants a copy of the project where Node looks after the workspace (/node_modules) fails the build's own check: environment_error naming it",
  { timeout: 600_000 },
  async () => {
    packed.shadow = await packNpm('hostile-shadow');
    const repo = join(scratch, 'repositories', 'npm_own_name_copy');
    await cp(join(repositories, 'npm_own_name_copy'), repo, { recursive: true });
    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-own-name-${process.pid}`);
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(report.stopDetail ?? '', /would run the tests against another copy of the repository's own code/);
    assert.match(
      report.stopDetail ?? '',
      /node: require\("release-calendar"\) loads \/node_modules\/release-calendar, release-calendar@9\.9\.9 from the registry, not the workspace/,
    );
    assert.match(report.stopDetail ?? '', /keep the package out of node_modules/, "Node's advice");
    assert.doesNotMatch(report.stopDetail ?? '', /@@durable-debugger/);
    assert.ok(registryRequests.includes('npm /@hostile%2fshadow'), 'the planting package came from its registry');
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model call');
  },
);

test(
  'an sdist whose setup.py runs at install time reaches nothing but the registries; the environment builds',
  { timeout: 600_000 },
  async () => {
    packed.sdist = await packSdist();
    const { attempts } = await buildHostile('setup_py_sdist', 'setup-py-sdist');
    assertConfined(attempts);
    assert.ok(registryRequests.includes('pip /packages/hostile_sdist-1.0.0.tar.gz'), 'the sdist came from its index');
  },
);

test(
  'setup commands reach nothing but the registries (pypi.org answers them through the proxy)',
  { timeout: 600_000 },
  async () => {
    const { attempts } = await buildHostile('setup_command', 'setup-command', async (repo) => {
      await mkdir(join(repo, 'hostile'));
      await cp(join(repositories, 'probe.py'), join(repo, 'hostile', 'probe.py'));
      await writeFile(join(repo, 'hostile', 'targets.json'), targets('pypi.org:443'));
    });
    assertConfined(attempts);
  },
);

test('a Dockerfile RUN step reaches nothing but the registries', { timeout: 600_000 }, async () => {
  const { attempts } = await buildHostile('dockerfile_run', 'dockerfile-run', async (repo) => {
    await mkdir(join(repo, 'hostile'));
    await cp(join(repositories, 'probe.py'), join(repo, 'hostile', 'probe.py'));
    await writeFile(join(repo, 'hostile', 'targets.json'), targets('pypi.org:443'));
  });
  assertConfined(attempts, { dockerBuilder: true });
});

test(
  'no image built here holds a host setting: not in Config.Env, not in any file of its layers',
  { timeout: 600_000 },
  async () => {
    assert.equal(hostileImages.size, 4, 'every hostile build made an image');
    const markers = [
      canary,
      `@hostile:registry=http://127.0.0.1:${portOf(npmRegistry)}/`,
      'disable-pip-version-check = true',
      'https-proxy=http://127.0.0.1:',
      "export HTTPS_PROXY='http://127.0.0.1:",
    ];
    const problems: string[] = [];
    for (const image of hostileImages)
      problems.push(...(await hostSettingsInImage(docker, image, sandboxImage, markers)));
    assert.deepEqual(problems, []);
  },
);

// --- images a repository may name -----------------------------------------------------------

test(
  'a repository file may not name an image the user did not allow; the run’s input may, and DURABLE_DEBUGGER_ALLOWED_IMAGES allows it',
  { timeout: 600_000 },
  async () => {
    // An image on the engine that is neither ours nor an environment: a copy of the sandbox image under another name.
    const other = `durable-debugger-hostile-base:${process.pid}`;
    const [otherRepository, otherTag] = other.split(':') as [string, string];
    await docker.getImage(sandboxImage).tag({ repo: otherRepository, tag: otherTag });
    imagesBuilt.add(other);
    const repo = async (name: string, files: Record<string, string>) => {
      const path = join(scratch, 'images', name);
      await mkdir(path, { recursive: true });
      await writeFile(join(path, 'test_ok.py'), 'def test_ok():\n    assert True\n');
      for (const [file, text] of Object.entries(files)) await writeFile(join(path, file), text);
      return path;
    };
    const requestsBefore = worker.fake.requests.length;

    const configRepo = await repo('config_image', {
      'durable-debugger.json': JSON.stringify({ image: other, setup: ['true'] }),
    });
    const refused = await runToReport(server, worker.taskQueue, { repo: configRepo }, `hostile-image-${process.pid}`);
    assert.equal(refused.report.status, 'environment_error', refused.report.stopDetail);
    assert.match(
      refused.report.stopDetail,
      new RegExp(
        `^durable-debugger\\.json names the image ${other}, which repository files may not choose on this machine`,
      ),
    );
    assert.match(refused.report.stopDetail, /DURABLE_DEBUGGER_ALLOWED_IMAGES/);

    // The run's input is the user's own choice: the same image, with the repository's setup commands, builds.
    const chosen = await runToReport(
      server,
      worker.taskQueue,
      { repo: configRepo, environment: { image: other } },
      `hostile-image-input-${process.pid}`,
    );
    if (chosen.report.environment) imagesBuilt.add(chosen.report.environment.image);
    assert.equal(chosen.report.status, 'no_failing_tests', chosen.report.stopDetail);
    assert.equal(chosen.report.environment?.kind, 'custom');

    const dockerfileRepo = await repo('dockerfile_from', {
      'durable-debugger.Dockerfile': `FROM ${other}\nRUN true\n`,
    });
    const refusedFrom = await runToReport(
      server,
      worker.taskQueue,
      { repo: dockerfileRepo },
      `hostile-from-${process.pid}`,
    );
    assert.equal(refusedFrom.report.status, 'environment_error', refusedFrom.report.stopDetail);
    assert.match(
      refusedFrom.report.stopDetail,
      new RegExp(
        `^durable-debugger\\.Dockerfile \\(FROM\\) names the image ${other}, which repository files may not choose`,
      ),
    );
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model call');

    // A worker whose user allowed the image builds the same Dockerfile.
    const allowing = await startTestWorker(server, {
      fake: worker.fake,
      configOverrides: { DURABLE_DEBUGGER_ALLOWED_IMAGES: `python:3.12-slim, ${otherRepository}` },
    });
    try {
      const allowed = await runToReport(
        server,
        allowing.taskQueue,
        { repo: dockerfileRepo },
        `hostile-from-allowed-${process.pid}`,
      );
      if (allowed.report.environment) imagesBuilt.add(allowed.report.environment.image);
      assert.equal(allowed.report.status, 'no_failing_tests', allowed.report.stopDetail);
      assert.equal(allowed.report.environment?.kind, 'dockerfile');
    } finally {
      await allowing.stop();
    }
  },
);

test(
  'a build that needs a host that is no registry fails with environment_error naming the host it tried',
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'repositories', 'downloads_a_browser');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(
      join(repo, 'durable-debugger.json'),
      JSON.stringify({
        setup: ['python3 -c "import urllib.request; urllib.request.urlopen(\'https://storage.googleapis.com/\')"'],
      }),
    );
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-download-${process.pid}`);
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(
      report.stopDetail,
      /The build tried to reach storage\.googleapis\.com:443, which is not a package registry/,
    );
  },
);

test(
  "a registry's route reaches that registry without the proxy, and nothing else; the build cannot rewrite its hosts",
  { timeout: 300_000 },
  async () => {
    const repo = join(scratch, 'repositories', 'registry_routes');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
    const log = '>> /hostile-probes/routes.txt 2>&1';
    const noProxy = 'env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy -u NO_PROXY -u no_proxy';
    await writeFile(
      join(repo, 'durable-debugger.json'),
      JSON.stringify({
        setup: [
          `mkdir -p /hostile-probes && getent hosts pypi.org ${log}`,
          `${noProxy} python3 -c "import urllib.request; print('pypi.org without the proxy:', urllib.request.urlopen('https://pypi.org/simple/six/', timeout=60).status)" ${log}`,
          `python3 -c "import socket; socket.create_connection((socket.gethostbyname('pypi.org'), 80), timeout=5)" ${log} && echo 'port 80 of the route: reached' ${log} || echo 'port 80 of the route: refused' ${log}`,
          `(echo '127.0.0.1 pypi.org' >> /etc/hosts && echo 'hosts: written' || echo 'hosts: read-only') ${log}`,
        ],
      }),
    );
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-routes-${process.pid}`);
    if (report.environment) imagesBuilt.add(report.environment.image);
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    const stdout = await readFromImage(report.environment?.image as string, '/hostile-probes/routes.txt');
    assert.match(stdout, /^127\.1\.0\.\d+\s+pypi\.org$/m, 'pypi.org is a loopback route of the build');
    assert.match(stdout, /^pypi\.org without the proxy: 200$/m);
    assert.match(stdout, /^port 80 of the route: refused$/m);
    assert.match(stdout, /^hosts: read-only$/m);
    assert.match(stdout, /Read-only file system/);
  },
);

test(
  'changed package settings build a new image; a rotated token reuses the one built',
  { timeout: 600_000 },
  async () => {
    const repo = join(scratch, 'repositories', 'settings_change');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(join(repo, 'durable-debugger.json'), JSON.stringify({ setup: ['true'] }));
    const environmentOf = async (label: string) => {
      const { report } = await runToReport(
        server,
        worker.taskQueue,
        { repo },
        `hostile-settings-${label}-${process.pid}`,
      );
      assert.equal(report.status, 'no_failing_tests', report.stopDetail);
      imagesBuilt.add(report.environment?.image as string);
      return report.environment;
    };
    const first = await environmentOf('first');
    const npmrc = await readFile(hostNpmrc, 'utf8');
    await writeFile(hostNpmrc, npmrc.replace(`${canary}-registry-token`, `${canary}-rotated-token`));
    const rotated = await environmentOf('rotated');
    assert.equal(rotated?.image, first?.image, 'a new token is no new environment');
    assert.equal(rotated?.reused, true);
    const timeout = process.env.PIP_DEFAULT_TIMEOUT;
    process.env.PIP_DEFAULT_TIMEOUT = '77';
    try {
      const changed = await environmentOf('changed');
      assert.notEqual(changed?.image, first?.image, 'pip settings changed: a new image');
      assert.equal(changed?.reused, false);
    } finally {
      if (timeout === undefined) delete process.env.PIP_DEFAULT_TIMEOUT;
      else process.env.PIP_DEFAULT_TIMEOUT = timeout;
    }
  },
);

// --- a Dockerfile that would fetch or copy around the proxy and the image policy (issue 33 item 3) ---

/** A repository of one passing test and the given Dockerfile. */
async function dockerfileRepository(name: string, dockerfile: string): Promise<string> {
  const repo = join(scratch, 'repositories', name);
  await mkdir(repo, { recursive: true });
  await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
  await writeFile(join(repo, 'durable-debugger.Dockerfile'), dockerfile);
  return repo;
}

test(
  'a Dockerfile ADD of a URL is refused before anything is built: dockerd never fetches it on the host’s network',
  { timeout: 300_000 },
  async () => {
    const fetched: string[] = [];
    const service = await listen(
      createHttpServer((request, response) => (fetched.push(request.url ?? ''), response.end('secret'))),
    );
    try {
      // The line continuation with a trailing blank and a comment hides nothing from the reader either.
      const repo = await dockerfileRepository(
        'dockerfile_remote_add',
        `FROM ${sandboxImage}\nADD \\ \n# the Web UI, cloud metadata: anything dockerd reaches\n  http://127.0.0.1:${portOf(service)}/namespaces /fetched\n`,
      );
      // The repository's input is refused as a bad durable-debugger.json is: the run fails, naming the line.
      await assert.rejects(
        runToReport(server, worker.taskQueue, { repo }, `hostile-remote-add-${process.pid}`),
        (error: Error & { cause?: Error }) => {
          assert.match(
            error.cause?.message ?? '',
            /durable-debugger\.Dockerfile line 2: ADD "http:\/\/127\.0\.0\.1:\d+\/namespaces" would be fetched by Docker on the host's network/,
          );
          return true;
        },
      );
      assert.deepEqual(fetched, [], 'nothing was fetched');
    } finally {
      service.close();
    }
  },
);

test(
  'a Dockerfile COPY --from an image the user did not allow is refused; a stage of the file is not',
  { timeout: 600_000 },
  async () => {
    const other = `durable-debugger-hostile-copy:${process.pid}`;
    const [otherRepository, otherTag] = other.split(':') as [string, string];
    await docker.getImage(sandboxImage).tag({ repo: otherRepository, tag: otherTag });
    imagesBuilt.add(other);
    const refusedRepo = await dockerfileRepository(
      'dockerfile_copy_from',
      `FROM ${sandboxImage}\nCOPY --from=${other} /etc/hostname /copied\n`,
    );
    const refused = await runToReport(
      server,
      worker.taskQueue,
      { repo: refusedRepo },
      `hostile-copy-from-${process.pid}`,
    );
    if (refused.report.environment) imagesBuilt.add(refused.report.environment.image);
    assert.equal(refused.report.status, 'environment_error', refused.report.stopDetail);
    assert.match(
      refused.report.stopDetail,
      new RegExp(
        `^durable-debugger\\.Dockerfile \\(COPY --from\\) names the image ${other}, which repository files may not choose`,
      ),
    );

    // A stage of the file is no image: it builds, its RUN steps with memory, CPU and pids capped.
    const stagesRepo = await dockerfileRepository(
      'dockerfile_stages',
      [
        `FROM ${sandboxImage} AS first`,
        'RUN mkdir -p /limits && grep -E "(^|:)pids:" /proc/self/cgroup > /limits/pids && cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us > /limits/cpu',
        `FROM ${sandboxImage}`,
        'COPY --from=first /limits /limits',
        '',
      ].join('\n'),
    );
    const built = await runToReport(server, worker.taskQueue, { repo: stagesRepo }, `hostile-stages-${process.pid}`);
    if (built.report.environment) imagesBuilt.add(built.report.environment.image);
    assert.equal(built.report.status, 'no_failing_tests', built.report.stopDetail);
    const stdout = await readFromImage(built.report.environment?.image as string, '/limits/pids', '/limits/cpu');
    const [pids, cpu] = stdout.trim().split('\n');
    assert.match(
      pids ?? '',
      /pids:\/durable-debugger-build-[0-9a-f]{12}\//,
      'the RUN step ran in the build’s pids-capped cgroup',
    );
    assert.equal(cpu, '200000', 'the RUN step had 2 CPUs');
  },
);

// --- the registries' credentials in a failed build's output (issue 33 item 5) -----------------

test(
  'a setup command that prints the package settings: no credential reaches the report or the history; setup gets them only when the user opts in',
  { timeout: 600_000 },
  async () => {
    const repo = join(scratch, 'repositories', 'setup_prints_settings');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
    await writeFile(
      join(repo, 'durable-debugger.json'),
      JSON.stringify({
        setup: ['cat "$NPM_CONFIG_USERCONFIG" "$PIP_CONFIG_FILE"; echo "token: $YARN_NPM_AUTH_TOKEN"', 'exit 3'],
      }),
    );
    const leaks = async (handle: import('@temporalio/client').WorkflowHandle, report: object) => {
      const { default: proto } = await import('@temporalio/proto');
      const history = Buffer.from(proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish());
      return [JSON.stringify(report), history.toString('latin1')].filter((text) => text.includes(canary));
    };

    // By default the setup commands get the registries and CAs, not the credentials.
    const plain = await runToReport(server, worker.taskQueue, { repo }, `hostile-settings-print-${process.pid}`);
    assert.equal(plain.report.status, 'environment_error', plain.report.stopDetail);
    assert.match(
      plain.report.stopDetail,
      /@hostile:registry=http:\/\/127\.0\.0\.1:\d+\//,
      'the setup printed its npmrc',
    );
    assert.match(
      plain.report.stopDetail,
      /extra-index-url = http:\/\/127\.0\.0\.1:\d+\/simple/,
      'pip.conf, without the user',
    );
    assert.deepEqual(await leaks(plain.handle, plain.report), []);

    // Opted in, they get them, and what they print of them is redacted.
    const optedIn = await startTestWorker(server, {
      fake: worker.fake,
      configOverrides: { DURABLE_DEBUGGER_SETUP_CREDENTIALS: 'on' },
    });
    try {
      const given = await runToReport(server, optedIn.taskQueue, { repo }, `hostile-settings-opted-${process.pid}`);
      assert.equal(given.report.status, 'environment_error', given.report.stopDetail);
      assert.match(given.report.stopDetail, /\/\/npm\.private\.example\/:_authToken=<redacted>/);
      assert.match(
        given.report.stopDetail,
        /http:\/\/probe:<redacted>@127\.0\.0\.1:\d+\/simple|http:\/\/<redacted>@127\.0\.0\.1/,
      );
      assert.deepEqual(await leaks(given.handle, given.report), []);
    } finally {
      await optedIn.stop();
    }
  },
);

test('an environment build container has a CPU limit (2 CPUs), as a sandbox has', { timeout: 300_000 }, async () => {
  const repo = join(scratch, 'repositories', 'setup_reads_cpu_quota');
  await mkdir(repo, { recursive: true });
  await writeFile(join(repo, 'test_ok.py'), 'def test_ok():\n    assert True\n');
  await writeFile(
    join(repo, 'durable-debugger.json'),
    JSON.stringify({
      setup: [
        'echo "cpu quota: $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d" " -f1 /sys/fs/cgroup/cpu.max)"',
        'exit 3',
      ],
    }),
  );
  const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-cpu-quota-${process.pid}`);
  assert.equal(report.status, 'environment_error', report.stopDetail);
  assert.match(report.stopDetail, /cpu quota: 200000$/m);
});
