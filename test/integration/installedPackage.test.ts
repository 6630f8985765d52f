// The installed tool, as a new user gets it (issue 25): the tarball of `npm pack`, installed with
// `npm install -g` into a prefix of its own under `env -i` (a fresh home, the system's PATH), then
// `setup`, `run .` in a copy of a fixture outside the checkout (the scripted model through
// ANTHROPIC_BASE_URL, the embedded Temporal server on free ports) and `doctor`. Once as root and
// once as a user who is not root but in the docker group. Nothing is written inside the installed
// package's folder, and everything the tool writes is the user's.
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import { freePort } from '../../src/freePort.js';
import { loadFixtures, scriptsByName } from '../../src/demo/fixtures.js';
import {
  freshEnvironment,
  installGlobally,
  packTarball,
  runCommand,
  type AsUser,
} from '../../harness/installedPackage.js';

const fixture = '01_off_by_one';
let scratch: string;
let tarball: string;
let fake: FakeAnthropicApi;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'durable-debugger-installed-'));
  chmodSync(scratch, 0o755);
  tarball = await packTarball(scratch);
  chmodSync(tarball, 0o644);
  fake = new FakeAnthropicApi({ scripts: scriptsByName(await loadFixtures()) });
  await fake.start();
});
after(async () => {
  await fake?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('the tarball holds the built package and what a user needs, nothing of the checkout', async () => {
  const listed = await runCommand('tar', ['-tzf', tarball], { cwd: scratch, env: process.env });
  const files = listed.output
    .trim()
    .split('\n')
    .map((line) => line.replace(/^package\//, ''));
  for (const needed of [
    'package.json',
    'README.md',
    'dist/cli.js',
    'dist/workflow-bundle.js',
    'dist/workflow-worker-thread.js',
    'deploy/sandbox-image/build-rootfs.sh',
    `fixtures/${fixture}/script.json`,
  ])
    assert.ok(files.includes(needed), `${needed} is in the tarball`);
  const strays = files.filter((file) =>
    /^(src|test|bench|harness|scripts|workflows|activities|\.ci)\/|docker-compose/.test(file),
  );
  assert.deepEqual(strays, []);
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
  // Nothing to install, so no dependency's install script for npm to warn about.
  assert.equal(manifest.dependencies, undefined);
});

test(
  'installed as root under env -i: setup, run . to fixed, doctor; the package folder stays untouched',
  { timeout: 900_000 },
  async () => {
    await asFreshUser('root');
  },
);

test(
  'installed by a user who is not root, in the docker group: setup, run, doctor; every file it writes is theirs',
  { timeout: 900_000, skip: process.getuid?.() !== 0 && 'needs root to act as another user' },
  async () => {
    await asFreshUser('user', { uid: 4242, gid: lstatSync(dockerSocket()).gid });
  },
);

async function asFreshUser(label: string, user?: AsUser): Promise<void> {
  const area = join(scratch, label);
  const home = join(area, 'home');
  const prefix = join(area, 'prefix');
  const repo = join(area, 'work', fixture);
  for (const folder of [home, prefix]) mkdirSync(folder, { recursive: true });
  cpSync(join(projectRoot, 'fixtures', fixture), repo, { recursive: true });
  if (user) chownTree(area, user);
  const [temporalPort, uiPort] = [await freePort(), await freePort()];
  const env = freshEnvironment(home, prefix, {
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'test-key',
    NO_COLOR: '1',
  });
  const dataHome = join(home, '.local', 'share', 'durable-debugger');
  try {
    const installed = await installGlobally(tarball, prefix, env, user);
    assert.doesNotMatch(installed.output, /npm warn/i, installed.output);
    const untouched = snapshot(installed.packageFolder);
    const tool = (args: string[]) => runCommand('durable-debugger', args, { cwd: repo, env, user, timeoutMs: 600_000 });

    const setup = await tool(['setup']);
    assert.equal(setup.code, 0, setup.output);
    assert.match(setup.output, /setup: Temporal CLI: installed/);
    assert.match(setup.output, /setup: sandbox image: .* is up to date/);

    const run = await tool(['run', '.']);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /Status: fixed/);

    const doctor = await tool(['doctor', '--json']);
    assert.equal(doctor.code, 0, doctor.output);
    const checks = JSON.parse(doctor.output.trim().split('\n').pop() as string) as {
      ok: boolean;
      checks: { name: string; status: string }[];
    };
    assert.equal(checks.ok, true, doctor.output);
    for (const part of ['Docker engine', 'sandbox image', 'Temporal CLI', 'Temporal server', 'model API'])
      assert.equal(checks.checks.find((check) => check.name === part)?.status, 'ok', `${part}: ${doctor.output}`);

    if (label === 'root') {
      const npx = await runCommand('npx', ['--yes', `./${basename(tarball)}`, '--version'], { cwd: scratch, env });
      assert.equal(npx.code, 0, npx.output);
      assert.doesNotMatch(npx.output, /npm warn/i, npx.output);
      assert.match(npx.output, /\d+\.\d+\.\d+/);
    }

    assert.deepEqual(snapshot(installed.packageFolder), untouched, 'nothing was written inside the installed package');
    assert.ok(existsSync(join(dataHome, 'temporal.db')), 'the server database is in $XDG_DATA_HOME/durable-debugger');
    assert.ok(
      existsSync(join(home, '.cache', 'durable-debugger', 'tools', 'temporal', 'bin', 'temporal')),
      'tools are in the cache',
    );
    if (user) {
      // What needs root is refused with the exact command to run instead.
      const noImage = await runCommand('durable-debugger', ['setup'], {
        cwd: repo,
        env: { ...env, DURABLE_DEBUGGER_SANDBOX_IMAGE: 'durable-debugger-sandbox:not-built' },
        user,
      });
      assert.equal(noImage.code, 2, noImage.output);
      assert.match(
        noImage.output,
        /building it needs root \(debootstrap\)\. Run: sudo \S*node \S*durable-debugger\S* setup/,
      );
      const outsider = { uid: user.uid, gid: user.uid };
      for (const args of [['setup'], ['run', '.'], ['doctor']]) {
        const refused = await runCommand('durable-debugger', args, { cwd: repo, env, user: outsider });
        assert.notEqual(refused.code, 0, refused.output);
        assert.match(
          refused.output,
          /add yourself to the docker group: sudo usermod -aG docker /,
          `${args[0]}: ${refused.output}`,
        );
      }
      const foreign = filesOf(area).filter((path) => lstatSync(path).uid !== user.uid);
      assert.deepEqual(foreign, [], 'every file the tool wrote belongs to the user');
    }
  } finally {
    stopEmbeddedServer(dataHome);
  }
}

function dockerSocket(): string {
  const host = process.env.DOCKER_HOST;
  return host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock';
}

function chownTree(root: string, user: AsUser): void {
  for (const path of [root, ...filesOf(root)]) chownSync(path, user.uid, user.gid);
}

/** Every entry below root (symlinks not followed). */
function filesOf(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true }).map((entry) => join(entry.parentPath, entry.name));
}

/** Each file's size and modification time: a write inside the folder changes it. */
function snapshot(folder: string): Record<string, string> {
  return Object.fromEntries(
    filesOf(folder).map((path) => {
      const stats = lstatSync(path);
      return [path, `${stats.size} ${stats.mtimeMs}`];
    }),
  );
}

/** The embedded server the tool started in the background (its pid file is in the data home). */
function stopEmbeddedServer(dataHome: string): void {
  try {
    process.kill(Number(readFileSync(join(dataHome, 'temporal.pid'), 'utf8')), 'SIGTERM');
  } catch {
    // It never started.
  }
}
