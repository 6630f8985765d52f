// The install-scripts runner with the real npm on a node_modules made here: every package's scripts
// run, dependencies first; a failing one is reported with its last lines and the next ones still
// run; known downloaders run with their opt-out set. With --install, on dependencies packed here:
// npm's install runs their scripts itself, and only when it fails or does not end in time does the
// runner install again without them and run them one by one; under the real pnpm 10 and Bun, the
// scripts the project does not allow are reported as not allowed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import {
  installScriptRunner,
  parseInstallScriptsLabel,
  parseInstallScriptsLine,
} from '../../src/sandbox/environment/node/installScripts.js';

const run = promisify(execFile);

async function writePackage(dir: string, manifest: Record<string, unknown>): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ version: '1.0.0', ...manifest }));
}

/** A postinstall that records, in the project's order.txt, that it ran (and what it saw). */
const record = (text: string) =>
  `node -e "require('fs').appendFileSync(process.env.INIT_CWD + '/order.txt', ${text} + '\\n')"`;

test('dependencies’ install scripts run one by one, dependencies first; a failure is reported and the rest still run', async () => {
  const project = await mkdtemp(join(tmpdir(), 'install-scripts-'));
  try {
    await writePackage(project, {
      name: 'screenshots',
      dependencies: { alpha: '1.0.0', broken: '1.0.0', puppeteer: '1.0.0', plain: '1.0.0' },
    });
    const modules = join(project, 'node_modules');
    // alpha depends on beta (through plain, which has no script): beta's script runs first.
    await writePackage(join(modules, 'alpha'), {
      name: 'alpha',
      dependencies: { plain: '1.0.0' },
      scripts: { postinstall: record("'alpha'") },
    });
    await writePackage(join(modules, 'plain'), { name: 'plain', dependencies: { beta: '1.0.0' } });
    await writePackage(join(modules, 'beta'), { name: 'beta', scripts: { install: record("'beta'") } });
    await writePackage(join(modules, 'broken'), {
      name: 'broken',
      scripts: {
        postinstall: `node -e "console.log('downloading the binary from https://example.invalid/broken.tgz'); console.error('Error: getaddrinfo ENOTFOUND example.invalid'); process.exit(3)"`,
      },
    });
    await writePackage(join(modules, 'puppeteer'), {
      name: 'puppeteer',
      version: '23.11.1',
      scripts: { postinstall: record("'puppeteer skip=' + process.env.PUPPETEER_SKIP_DOWNLOAD") },
    });
    // A nested copy (another version) is found too.
    await writePackage(join(modules, 'alpha', 'node_modules', 'gamma'), {
      name: 'gamma',
      version: '2.0.0',
      scripts: { preinstall: record("'gamma'") },
    });
    const runner = join(project, installScriptRunner.file);
    await writeFile(runner, installScriptRunner.text);

    const { stdout } = await run('node', [runner, 'npm'], {
      cwd: project,
      env: { ...process.env, INIT_CWD: project },
      timeout: 120_000,
    });
    const order = (await readFile(join(project, 'order.txt'), 'utf8')).trim().split('\n');
    assert.deepEqual([...order].sort(), ['alpha', 'beta', 'gamma', 'puppeteer skip=true'], stdout);
    assert.ok(order.indexOf('beta') < order.indexOf('alpha'), `beta before alpha: ${order.join(', ')}\n${stdout}`);

    const summary = stdout
      .split('\n')
      .map(parseInstallScriptsLine)
      .find((each) => each !== null);
    assert.ok(summary, stdout);
    assert.equal(summary.ran, 5);
    assert.deepEqual(
      summary.problems.map((problem) => [problem.package, problem.outcome, problem.detail]),
      [
        ['broken@1.0.0', 'failed', 'exit 3'],
        [
          'puppeteer@23.11.1',
          'opted out',
          'ran with PUPPETEER_SKIP_DOWNLOAD=true PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=true: what it downloads is not installed',
        ],
      ],
    );
    const broken = summary.problems[0]?.lastLines.join('\n') ?? '';
    assert.match(broken, /getaddrinfo ENOTFOUND example\.invalid/);
    assert.match(stdout, /install script: broken@1\.0\.0 failed \(exit 3\); the install goes on/);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test('a script that never ends is stopped and reported as timed out; the next one runs', async () => {
  const project = await mkdtemp(join(tmpdir(), 'install-scripts-'));
  try {
    await writePackage(project, { name: 'app', dependencies: { forever: '1.0.0', quick: '1.0.0' } });
    await writePackage(join(project, 'node_modules', 'forever'), {
      name: 'forever',
      scripts: {
        postinstall: `node -e "console.log('waiting for a host that never answers'); setInterval(() => {}, 1000)"`,
      },
    });
    await writePackage(join(project, 'node_modules', 'quick'), {
      name: 'quick',
      scripts: { postinstall: record("'quick'") },
    });
    const runner = join(project, installScriptRunner.file);
    await writeFile(runner, installScriptRunner.text);
    const started = Date.now();
    const { stdout } = await run('node', [runner, 'npm'], {
      cwd: project,
      env: { ...process.env, INIT_CWD: project, DURABLE_DEBUGGER_SCRIPT_TIMEOUT_MS: '10000' },
      timeout: 120_000,
    });
    assert.ok(Date.now() - started < 60_000, 'the runner did not wait for the script');
    const summary = stdout
      .split('\n')
      .map(parseInstallScriptsLine)
      .find((each) => each !== null);
    assert.deepEqual(
      summary?.problems.map((problem) => [problem.package, problem.outcome, problem.detail]),
      [['forever@1.0.0', 'timed out', 'stopped after 10 s']],
    );
    assert.match(summary?.problems[0]?.lastLines.join('\n') ?? '', /waiting for a host that never answers/);
    assert.equal((await readFile(join(project, 'order.txt'), 'utf8')).trim(), 'quick');
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test('the runner’s summary is checked: a line an install script prints cannot inject anything but well-formed problems', () => {
  assert.equal(parseInstallScriptsLine('install-scripts: not json'), null);
  assert.equal(parseInstallScriptsLine('install-scripts: {"problems": []}'), null);
  assert.equal(parseInstallScriptsLine('packages: 12'), null);
  const parsed = parseInstallScriptsLine(
    `install-scripts: ${JSON.stringify({
      ran: 2,
      problems: [
        { package: 'x@1', outcome: 'deleted your files', detail: '', lastLines: [] },
        { package: 'y@1', outcome: 'failed', detail: 'exit 1', lastLines: ['a'.repeat(5000), 7] },
      ],
    })}`,
  );
  assert.deepEqual(parsed?.problems, [
    { package: 'y@1', outcome: 'failed', detail: 'exit 1', lastLines: ['a'.repeat(300), ''] },
  ]);
  assert.deepEqual(parseInstallScriptsLabel('{"not": "a list"}'), []);
  assert.deepEqual(parseInstallScriptsLabel(undefined), []);
});

/** A project whose dependencies are packed tarballs beside it (npm installs them without a registry): each named package with its scripts. */
async function packedProject(packages: Record<string, Record<string, string>>): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), 'install-scripts-'));
  const dependencies: Record<string, string> = {};
  for (const [name, scripts] of Object.entries(packages)) {
    const source = join(project, 'sources', name);
    await writePackage(source, { name, version: '1.0.0', scripts });
    await run('npm', ['pack', '--pack-destination', project], { cwd: source });
    dependencies[name] = `file:./${name}-1.0.0.tgz`;
  }
  await writePackage(project, { name: 'app', dependencies });
  await writeFile(join(project, installScriptRunner.file), installScriptRunner.text);
  return project;
}

/** The runner with --install: the project's install by the manager, with the dependencies' scripts. */
async function installWithScripts(project: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(
    'node',
    [installScriptRunner.file, 'npm', '--install', 'npm install --no-audit --no-fund', '--ignore-scripts'],
    { cwd: project, env: { ...process.env, ...env }, timeout: 120_000 },
  );
  return stdout;
}

const summaryOf = (stdout: string) =>
  stdout
    .split('\n')
    .map(parseInstallScriptsLine)
    .find((each) => each !== null);

test('with --install, the manager’s install runs the dependencies’ scripts itself, as CI does (one start of it), known downloaders with their opt-out', async () => {
  const project = await packedProject({
    alpha: { postinstall: record("'alpha'") },
    puppeteer: { postinstall: record("'puppeteer skip=' + process.env.PUPPETEER_SKIP_DOWNLOAD") },
  });
  try {
    const stdout = await installWithScripts(project);
    const order = (await readFile(join(project, 'order.txt'), 'utf8')).trim().split('\n');
    assert.deepEqual([...order].sort(), ['alpha', 'puppeteer skip=true'], stdout);
    assert.match(stdout, /install scripts: 2 ran in the install/);
    assert.doesNotMatch(stdout, /install script: alpha|again without them/);
    assert.deepEqual(
      summaryOf(stdout)?.problems.map((problem) => [problem.package, problem.outcome]),
      [['puppeteer@1.0.0', 'opted out']],
    );
    assert.equal(summaryOf(stdout)?.ran, 2);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test('with --install, an install whose dependency’s script fails is done again without the scripts, and each runs on its own: the failure reported, the install goes on', async () => {
  const project = await packedProject({
    alpha: { postinstall: record("'alpha'") },
    broken: { postinstall: `node -e "console.error('Error: getaddrinfo ENOTFOUND example.invalid'); process.exit(3)"` },
  });
  try {
    const stdout = await installWithScripts(project);
    assert.match(stdout, /install: exit \d+ with the dependencies' install scripts; again without them/);
    assert.match(stdout, /install script: broken@1\.0\.0 failed \(exit 3\); the install goes on/);
    const summary = summaryOf(stdout);
    assert.deepEqual(
      summary?.problems.map((problem) => [problem.package, problem.outcome, problem.detail]),
      [['broken@1.0.0', 'failed', 'exit 3']],
    );
    assert.match(summary?.problems[0]?.lastLines.join('\n') ?? '', /ENOTFOUND example\.invalid/);
    assert.ok((await readFile(join(project, 'order.txt'), 'utf8')).includes('alpha'));
    await readFile(join(project, 'node_modules', 'alpha', 'package.json'));
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test('with --install, an install that does not end in time is stopped with its scripts and done again without them', async () => {
  const project = await packedProject({
    forever: { postinstall: `node -e "setInterval(() => {}, 1000)"` },
    quick: { postinstall: record("'quick'") },
  });
  try {
    const started = Date.now();
    const stdout = await installWithScripts(project, { DURABLE_DEBUGGER_SCRIPT_TIMEOUT_MS: '5000' });
    assert.ok(Date.now() - started < 60_000, 'the runner did not wait for the script');
    assert.match(stdout, /install: stopped after 5 s with the dependencies' install scripts; again without them/);
    assert.deepEqual(
      summaryOf(stdout)?.problems.map((problem) => [problem.package, problem.outcome]),
      [['forever@1.0.0', 'timed out']],
    );
    await readFile(join(project, 'node_modules', 'quick', 'package.json'));
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

test('with --install, an install that fails without the scripts too fails the build, with its exit code', async () => {
  const project = await packedProject({ alpha: {} });
  try {
    await writePackage(project, { name: 'app', dependencies: { missing: 'file:./missing-1.0.0.tgz' } });
    await assert.rejects(installWithScripts(project), (error: { code?: number; stdout?: string }) => {
      assert.notEqual(error.code, 0);
      assert.match(error.stdout ?? '', /again without them/);
      assert.doesNotMatch(error.stdout ?? '', /install-scripts: /);
      return true;
    });
  } finally {
    await rm(project, { recursive: true, force: true });
  }
});

// pnpm 10.0 writes node_modules/.modules.yaml as YAML with names, later releases as JSON with specs;
// a packed dependency is allowed by its name in the first, by its spec (as pnpm names it) in the latter.
for (const [version, allowed] of [
  ['10.0.0', 'alpha'],
  ['10.34.9', 'alpha@file:alpha-1.0.0.tgz'],
]) {
  test(`with --install under pnpm ${version}, scripts the project does not allow (onlyBuiltDependencies) are reported as not allowed, not as run`, async () => {
    const project = await packedProject({
      alpha: { postinstall: record("'alpha'") },
      beta: { postinstall: record("'beta'") },
    });
    try {
      // The real pnpm, from the registry as the build container gets it.
      const tool = join(project, 'tool');
      await run('npm', ['install', '--prefix', tool, '--no-save', '--no-audit', '--no-fund', `pnpm@${version}`], {
        timeout: 120_000,
      });
      const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(
        join(project, 'package.json'),
        JSON.stringify({ ...manifest, pnpm: { onlyBuiltDependencies: [allowed] } }),
      );
      const pnpm = join(tool, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
      const { stdout } = await run(
        'node',
        [installScriptRunner.file, 'pnpm', '--install', `node ${pnpm} install`, '--ignore-scripts'],
        {
          cwd: project,
          env: { ...process.env, npm_config_store_dir: join(project, 'store'), npm_config_update_notifier: 'false' },
          timeout: 120_000,
        },
      );
      assert.deepEqual((await readFile(join(project, 'order.txt'), 'utf8')).trim().split('\n'), ['alpha'], stdout);
      assert.match(stdout, /install scripts: 1 ran in the install/);
      assert.match(stdout, /install scripts: 1 not allowed by the project/);
      assert.doesNotMatch(stdout, /again without them/);
      const summary = summaryOf(stdout);
      assert.equal(summary?.ran, 1);
      assert.deepEqual(
        summary?.problems.map((problem) => [problem.package, problem.outcome]),
        [['beta@1.0.0', 'not allowed']],
      );
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
}

// Bun's default linker puts each package in node_modules; its isolated one (a workspace's default since 1.3)
// in node_modules/.bun, with links.
for (const linker of ['hoisted', 'isolated']) {
  test(`with --install under Bun (${linker} linker), the scripts of dependencies it does not trust (trustedDependencies) are reported as not allowed, not as run`, async () => {
    const project = await packedProject({
      alpha: { postinstall: record("'alpha'") },
      beta: { postinstall: record("'beta'") },
    });
    try {
      // The real Bun, the binary of the package the build container unpacks.
      const tool = join(project, 'tool');
      await run('npm', ['install', '--prefix', tool, '--no-save', '--no-audit', '--no-fund', '@oven/bun-linux-x64@1'], {
        timeout: 120_000,
      });
      const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(join(project, 'package.json'), JSON.stringify({ ...manifest, trustedDependencies: ['alpha'] }));
      await writeFile(join(project, 'bunfig.toml'), `[install]\nlinker = "${linker}"\n`);
      const bin = join(tool, 'node_modules', '@oven', 'bun-linux-x64', 'bin');
      // As in the build container, where no npm ran before: Bun keeps an INIT_CWD it inherits (npm's, under
      // `npm test`), where npm sets its own, and the scripts write there.
      const { INIT_CWD: _npmsCwd, ...env } = process.env;
      const { stdout } = await run(
        'node',
        [installScriptRunner.file, 'bun', '--install', 'bun install', '--ignore-scripts'],
        {
          cwd: project,
          env: { ...env, PATH: `${bin}:${process.env.PATH}`, BUN_INSTALL_CACHE_DIR: join(project, 'cache') },
          timeout: 120_000,
        },
      );
      assert.deepEqual((await readFile(join(project, 'order.txt'), 'utf8')).trim().split('\n'), ['alpha'], stdout);
      assert.match(stdout, /install scripts: 1 ran in the install/);
      assert.match(stdout, /install scripts: 1 not allowed by the project/);
      const summary = summaryOf(stdout);
      assert.deepEqual(
        summary?.problems.map((problem) => [problem.package, problem.outcome, problem.detail]),
        [
          [
            'beta@1.0.0',
            'not allowed',
            'Bun runs only the install scripts of trusted dependencies (package.json trustedDependencies), as its CI does',
          ],
        ],
      );
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
}
