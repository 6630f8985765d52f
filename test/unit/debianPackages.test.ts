// Debian's archive as a registry of the build (installer 'apt'): the package names a repository
// may give, the host's mirror read from its apt sources, what the proxy lets through and what the
// build's apt is told.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildSettings } from '../../src/sandbox/environment/buildSettings.js';
import {
  aptInstallScript,
  aptPackageProblem,
  checkedAptPackages,
  withAptPackages,
} from '../../src/sandbox/environment/debian/debianPackages.js';
import { readHostDebianMirrors } from '../../src/sandbox/environment/debian/debianMirrors.js';
import { registryTargets, type HostPackageSettings } from '../../src/sandbox/environment/hostPackageSettings.js';
import { parseRepositoryConfig, planEnvironment } from '../../src/sandbox/environment/plan.js';
import { EnvironmentConfigError } from '../../src/sandbox/environment/planTypes.js';

test('package names follow Debian’s grammar; options, shell words and paths are refused', () => {
  for (const name of ['libssl-dev', 'g++', 'libstdc++-12-dev', 'python3.11-dev', 'zlib1g-dev', 'cmake=3.25.1-1'])
    assert.equal(aptPackageProblem(name), null, name);
  for (const name of [
    '-oAPT::Get::AllowUnauthenticated=1',
    '--allow-unauthenticated',
    'libssl-dev; curl evil.example',
    '$(id)',
    'LibSSL',
    'a',
    '../x.deb',
    '/tmp/x.deb',
    'name=',
    'name=1=2',
    'name=$(id)',
  ])
    assert.notEqual(aptPackageProblem(name), null, name);
  assert.throws(
    () => checkedAptPackages(['libssl-dev', 'x y'], 'durable-debugger.json: apt'),
    /"x y" is not a Debian package name/,
  );
  assert.throws(() => checkedAptPackages('libssl-dev', 'durable-debugger.json: apt'), /must be a list/);
  assert.deepEqual(checkedAptPackages(['libssl-dev', ' libssl-dev '], 'apt'), ['libssl-dev']);
});

test('durable-debugger.json `apt` is read and checked, and a plan that builds installs the packages first', () => {
  assert.deepEqual(parseRepositoryConfig('{"apt": ["libpq-dev"]}').apt, ['libpq-dev']);
  assert.throws(() => parseRepositoryConfig('{"apt": ["--force-yes"]}'), EnvironmentConfigError);
  const plan = planEnvironment(['requirements.txt', 'durable-debugger.json'], {
    'requirements.txt': 'psycopg2==2.9.9\n',
    'durable-debugger.json': '{"apt": ["libpq-dev", "gcc"]}',
  });
  assert.ok(plan);
  assert.ok(plan.installers?.includes('apt') && plan.installers.includes('pip'));
  assert.match(plan.description, /apt libpq-dev gcc/);
  assert.ok(
    plan.script.indexOf('install -y --no-install-recommends libpq-dev gcc') < plan.script.indexOf('pip install'),
  );
  assert.throws(
    () => planEnvironment(['durable-debugger.json'], { 'durable-debugger.json': '{"image": "x:1", "apt": ["gcc"]}' }),
    /image is used as it is/,
  );
});

test('the apt fragment installs without recommends from the image’s own release and leaves no package lists', () => {
  const script = aptInstallScript(['libssl-dev', 'cmake']);
  assert.match(script, /%s-security main.*"\$VERSION_CODENAME"/);
  assert.match(script, /^\. \/etc\/os-release$/m);
  assert.match(script, /install -y --no-install-recommends libssl-dev cmake/);
  assert.match(script, /rm -rf \S+ \/var\/lib\/apt\/lists\/\*/);
  assert.throws(() => aptInstallScript(['ok-name', '-y']), EnvironmentConfigError);
  assert.equal(aptInstallScript([]), '');
  const unchanged = { kind: 'custom', installers: ['apt'], script: 'x', description: 'd' } as never;
  assert.equal(withAptPackages(unchanged, ['gcc']), unchanged, 'a plan that runs apt itself names its own packages');
});

test('the host’s Debian mirror comes from its apt sources; third-party repositories and disabled files are no mirror', async () => {
  const etc = await mkdtemp(join(tmpdir(), 'etc-apt-'));
  try {
    assert.deepEqual(readHostDebianMirrors(etc), {
      main: 'http://deb.debian.org/debian',
      security: 'http://deb.debian.org/debian-security',
    });
    await mkdir(join(etc, 'sources.list.d'));
    await writeFile(join(etc, 'sources.list'), 'deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n');
    await writeFile(
      join(etc, 'sources.list.d', 'nodesource.sources'),
      'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\nComponents: main\n',
    );
    await writeFile(
      join(etc, 'sources.list.d', 'old.list.disabled'),
      'deb http://disabled.example/debian bookworm main\n',
    );
    await writeFile(
      join(etc, 'sources.list.d', 'debian.sources'),
      [
        'Types: deb',
        '# http://snapshot.debian.org/archive/debian/20250520T000000Z',
        'URIs: http://mirror.company.example/debian/',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        '',
        'Types: deb',
        'URIs: http://security.company.example/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        '',
      ].join('\n'),
    );
    const mirrors = readHostDebianMirrors(etc);
    assert.deepEqual(mirrors, {
      main: 'http://mirror.company.example/debian',
      security: 'http://security.company.example/debian-security',
    });
    const host: HostPackageSettings = {
      pip: {},
      npm: {},
      pipCaFile: null,
      nodeCaFile: null,
      upstream: { https: null, http: null, noProxy: [] },
      apt: mirrors,
    };
    assert.deepEqual(registryTargets(host, ['apt']), [
      { host: 'mirror.company.example', port: 80 },
      { host: 'security.company.example', port: 80 },
    ]);
    assert.deepEqual(
      registryTargets({ ...host, apt: undefined }, ['apt']),
      [{ host: 'deb.debian.org', port: 80 }],
      'deb.debian.org when the host names no Debian mirror',
    );
    assert.ok(!registryTargets(host, ['pip']).some((target) => target.host.includes('company')), 'apt’s only');
    const settings = buildSettings(host, { installers: ['apt'], proxyUrl: 'http://127.0.0.1:3128' });
    assert.match(settings.files['apt.conf'] as string, /^Acquire::http::Proxy "http:\/\/127\.0\.0\.1:3128";$/m);
    assert.match(settings.files['apt.conf'] as string, /^APT::Sandbox::User "root";$/m);
    assert.equal(settings.variables.APT_CONFIG, '/run/durable-debugger-settings/apt.conf');
    assert.equal(settings.variables.DURABLE_DEBUGGER_APT_MIRROR, 'http://mirror.company.example/debian');
    const other = buildSettings({ ...host, apt: undefined }, { installers: ['apt'], proxyUrl: null });
    assert.notEqual(other.digest, settings.digest, 'another mirror is another image');
    assert.equal(buildSettings(host, { installers: ['pip'], proxyUrl: null }).files['apt.conf'], undefined);
  } finally {
    await rm(etc, { recursive: true, force: true });
  }
});
