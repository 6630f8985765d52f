// Hostile Rust builds, through the real worker, Docker, cargo and the registry proxy: a crate from
// a registry the host's cargo config names (served here) whose build.rs runs while the environment
// compiles the dependencies, and the repository's own build.rs, which runs in the sandbox when the
// tests compile. Both try the Temporal server's port and a host that is no registry, directly and
// through the proxy, and read cargo's credentials (the host has a token for that registry) and any
// token variable: every attempt is recorded, and each must fail but the registry's. A dependency
// from a git host is refused, and the run says which host. No image holds the host's settings.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { readHostRustToolchains } from '../../src/sandbox/environment/rust/rustupToolchains.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';
import { hostSettingsInImage } from '../support/imageInspection.js';

const run = promisify(execFile);

/**
 * The host's stable cargo from rustup's folder, as the Rust environment finds its toolchains, not
 * through PATH (CI's PATH has only system folders, and rustup's proxies live in ~/.cargo/bin).
 */
const cargo = (() => {
  const stable = readHostRustToolchains().filter((toolchain) => toolchain.channel === 'stable');
  const bin = join((stable.at(-1) ?? { path: '/nonexistent' }).path, 'bin');
  return { command: join(bin, 'cargo'), env: { PATH: `${bin}:${process.env.PATH ?? ''}` } };
})();
const docker = connectDocker();
const sandboxImage = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';
const repositories = join(import.meta.dirname, 'repositories', 'hostile_rust_builds');
const canary = `hostile-canary-${randomBytes(6).toString('hex')}`;
const savedEnvironment = { ...process.env };
const imagesBuilt = new Set<string>();
const registryRequests: string[] = [];

let server: TestServer;
let worker: TestWorker;
let scratch: string;
let registry: Server;
let crate: Buffer | undefined;

const registryAddress = () => `127.0.0.1:${(registry.address() as AddressInfo).port}`;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hostile-rust-builds-'));
  registry = await new Promise<Server>((resolve) => {
    const listener = createServer((request, response) => serveRegistry(request.url ?? '', response));
    listener.listen(0, '127.0.0.1', () => resolve(listener));
  });
  // The host's cargo: a registry of its own, and a token for it in credentials.toml.
  const cargoHome = join(scratch, 'cargo-home');
  await mkdir(cargoHome);
  await writeFile(
    join(cargoHome, 'config.toml'),
    `[registries.hostile]\nindex = "sparse+http://${registryAddress()}/index/"\n`,
  );
  await writeFile(join(cargoHome, 'credentials.toml'), `[registries.hostile]\ntoken = "${canary}-cargo-token"\n`);
  Object.assign(process.env, {
    CARGO_HOME: cargoHome,
    CARGO_REGISTRIES_HOSTILE_TOKEN: `${canary}-cargo-variable`,
    RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(process.env.HOME ?? '/root', '.rustup'),
  });
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  registry?.close();
  process.env = savedEnvironment;
  for (const image of imagesBuilt)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

/** probe.rs with this run's targets written in. */
async function probeSource(): Promise<string> {
  return (await readFile(join(repositories, 'probe.rs'), 'utf8'))
    .replaceAll('@TEMPORAL@', `127.0.0.1:${new URL(`http://${server.address}`).port}`)
    .replaceAll('@REGISTRY@', registryAddress());
}

/** The .crate of hostile-build (a tar.gz of hostile-build-0.1.0/), its build script the probe. */
async function packCrate(): Promise<Buffer> {
  const folder = join(scratch, 'crate', 'hostile-build-0.1.0');
  await cp(join(repositories, 'packages', 'hostile-build'), folder, { recursive: true });
  await writeFile(join(folder, 'build.rs'), await probeSource());
  const file = join(scratch, 'hostile-build-0.1.0.crate');
  await run('tar', ['-czf', file, '-C', join(scratch, 'crate'), 'hostile-build-0.1.0']);
  return readFile(file);
}

/** A sparse registry (cargo's index protocol) with the one crate. */
function serveRegistry(url: string, response: import('node:http').ServerResponse): void {
  registryRequests.push(url);
  if (url === '/index/config.json')
    return void response
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ dl: `http://${registryAddress()}/dl/{crate}/{version}.crate` }));
  if (url === '/index/ho/st/hostile-build' && crate)
    return void response.writeHead(200).end(
      `${JSON.stringify({
        name: 'hostile-build',
        vers: '0.1.0',
        deps: [],
        cksum: createHash('sha256').update(crate).digest('hex'),
        features: {},
        yanked: false,
      })}\n`,
    );
  if (url === '/dl/hostile-build/0.1.0.crate' && crate) return void response.writeHead(200).end(crate);
  response.writeHead(404).end();
}

interface Attempt {
  attempt: string;
  reached: boolean;
  detail: string;
}

function assertConfined(attempts: Attempt[], where: 'build' | 'sandbox'): void {
  const byName = new Map(attempts.map((attempt) => [attempt.attempt, attempt]));
  assert.deepEqual(
    [...byName.keys()],
    [
      "the Temporal server's port",
      'a host that is no registry',
      "the Temporal server's port through the proxy",
      'a host that is no registry through the proxy',
      "cargo's credentials",
      'token variables',
      'the registry through the proxy',
    ],
  );
  for (const attempt of attempts) {
    if (attempt.attempt === 'the registry through the proxy' && where === 'build') {
      assert.equal(attempt.reached, true, `the registry must still work: ${attempt.detail}`);
      continue;
    }
    assert.equal(attempt.reached, false, `${attempt.attempt} was reached in the ${where}: ${attempt.detail}`);
  }
  if (where === 'build')
    // The proxy itself refused: 403 for every host that is no registry.
    for (const name of ["the Temporal server's port through the proxy", 'a host that is no registry through the proxy'])
      assert.match(byName.get(name)?.detail ?? '', /^HTTP\/1\.1 403/, name);
}

test(
  "a registry crate's build.rs (in the build) and the repository's own (in the sandbox) reach nothing but the registry, and find no credentials",
  { timeout: 900_000 },
  async () => {
    crate = await packCrate();
    const repo = join(scratch, 'registry_build_script');
    await cp(join(repositories, 'registry_build_script'), repo, { recursive: true });
    await writeFile(join(repo, 'build.rs'), await probeSource());
    // A real lockfile, by the host's cargo against the served registry.
    await run(cargo.command, ['generate-lockfile'], { cwd: repo, env: { ...process.env, ...cargo.env } });
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-rust-${process.pid}`);
    if (report.environment) imagesBuilt.add(report.environment.image);
    // The environment built; the tests (which assert that neither build script reached anything) passed.
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.testsBefore?.passed, 2);
    assert.ok(registryRequests.includes('/dl/hostile-build/0.1.0.crate'), 'the crate came from its registry');
    const image = report.environment?.image as string;
    const read = async (command: string) =>
      (await run('docker', ['run', '--rm', '--network', 'none', image, 'sh', '-c', command])).stdout;
    // What the dependency's build script recorded while the build compiled it.
    assertConfined(
      JSON.parse(await read('cat /opt/rust-target/debug/build/hostile-build-*/out/attempts.json')),
      'build',
    );
    // The repository's own build script ran only in the sandbox: the image has no record of it.
    assert.equal(
      (await read('ls -d /opt/rust-target/debug/build/uses-hostile-build-*/out 2>/dev/null || true')).trim(),
      '',
    );
    const problems = await hostSettingsInImage(docker, image, sandboxImage, [canary, 'cargo-config.toml']);
    assert.deepEqual(problems, []);
  },
);

test('a dependency from a git host is refused, and the run names the host', { timeout: 900_000 }, async () => {
  const repo = join(scratch, 'git_dependency');
  await cp(join(repositories, 'git_dependency'), repo, { recursive: true });
  const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-rust-git-${process.pid}`);
  assert.equal(report.status, 'environment_error');
  assert.match(report.stopDetail ?? '', /github\.com/);
  assert.match(
    report.stopDetail ?? '',
    /refused a connection to github\.com:443: builds reach only the package registries/,
  );
});

test(
  'a workspace crate that a member also takes from crates.io (a published release of the same name) is caught by the probe',
  { timeout: 900_000 },
  async () => {
    // Fixture 45 with semver-lite renamed itoa: changelog's `itoa = "1.0"` is crates.io's, not the workspace's crate.
    const repo = join(scratch, 'registry_copy');
    await cp(join(import.meta.dirname, '..', '..', 'fixtures', '45_rust_workspace_semver'), repo, { recursive: true });
    const edit = async (path: string, change: (text: string) => string) =>
      writeFile(join(repo, path), change(await readFile(join(repo, path), 'utf8')));
    await edit('Cargo.toml', (text) => text.replace('version = "0.3.1" }', 'version = "0.3.1", package = "itoa" }'));
    await edit('crates/semver-lite/Cargo.toml', (text) =>
      text.replace('name = "semver-lite"', 'name = "itoa"').replace('itoa.workspace = true', 'itoa = "1.0"'),
    );
    await edit('crates/changelog/Cargo.toml', (text) =>
      text.replace('semver-lite.workspace = true', 'semver-lite.workspace = true\nitoa = "1.0"'),
    );
    await rm(join(repo, 'rust-toolchain.toml'));
    await run(cargo.command, ['generate-lockfile'], { cwd: repo, env: { ...savedEnvironment, ...cargo.env } });
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-rust-copy-${process.pid}`);
    assert.equal(report.status, 'environment_error');
    assert.match(
      report.stopDetail ?? '',
      /cargo: itoa 1\.0\.\d+ comes from registry\+https:\/\/github\.com\/rust-lang\/crates\.io-index, not the workspace's crates\/semver-lite\/Cargo\.toml \(used by changelog/,
    );
  },
);
