// The host's package settings as a build receives them: only the keys installers need, never
// npm's own process variables, the registries they name (the proxy lets through those only),
// and a secret-free hash that changes when the settings do.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildSettings } from '../../src/sandbox/environment/buildSettings.js';
import { readHostPackageSettings, registryTargets } from '../../src/sandbox/environment/hostPackageSettings.js';

let home: string;

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'host-settings-'));
});

after(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A machine's environment: its own HOME and PATH, no npmrc of this machine's, plus `extra`. */
function machine(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    npm_config_globalconfig: join(home, 'no-global-npmrc'),
    npm_config_userconfig: join(home, 'no-user-npmrc'),
    ...extra,
  };
}

test('npm’s own process variables (an `npm run` that started the worker) never reach a build; the user’s npmrc keys do', async () => {
  const npmrc = join(home, 'user.npmrc');
  await writeFile(
    npmrc,
    [
      'registry=https://npm.company.example/repo/',
      '@internal:registry=https://npm.internal.example/',
      '//npm.company.example/repo/:_authToken=${COMPANY_NPM_TOKEN}',
      'nodedir=/usr',
      'prefix=/home/someone/.npm-global',
      'strict-ssl=true',
      '',
    ].join('\n'),
  );
  const env = machine({
    // What `npm run worker` sets, pointing at the host's own paths:
    npm_config_userconfig: npmrc,
    npm_config_node_gyp: '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
    npm_config_prefix: '/usr',
    npm_config_local_prefix: '/home/someone/durable-debugger',
    npm_config_nodedir: '/usr',
    npm_config_user_agent: 'npm/10 node/v20',
    COMPANY_NPM_TOKEN: 'npm-token-4c1d',
    ANTHROPIC_API_KEY: 'sk-ant-canary',
  });
  const host = await readHostPackageSettings(env);
  assert.deepEqual(host.npm, {
    registry: 'https://npm.company.example/repo/',
    '@internal:registry': 'https://npm.internal.example/',
    '//npm.company.example/repo/:_authToken': 'npm-token-4c1d',
    'strict-ssl': 'true',
  });
  const settings = buildSettings(host, { installers: ['npm'], proxyUrl: 'http://127.0.0.1:3128' });
  const everything = JSON.stringify(settings);
  for (const leaked of [
    'node_gyp',
    'node-gyp',
    'local_prefix',
    '/home/someone',
    'nodedir',
    'user_agent',
    'sk-ant-canary',
  ])
    assert.ok(!everything.includes(leaked), `${leaked} reached the build's settings`);
  assert.equal(settings.variables.NPM_CONFIG_USERCONFIG, '/run/durable-debugger-settings/npmrc');
  assert.match(settings.files.npmrc as string, /^registry=https:\/\/npm\.company\.example\/repo\/$/m);
  assert.match(settings.files.npmrc as string, /^https-proxy=http:\/\/127\.0\.0\.1:3128$/m);
  // The registries on 443 are reached by their routes (registryRoutes.ts), not through the proxy.
  assert.match(settings.files.npmrc as string, /^noproxy=npm\.company\.example,npm\.internal\.example$/m);
  assert.equal(settings.variables.NO_PROXY, 'npm.company.example,npm.internal.example');
  assert.match(settings.files.hosts as string, /^127\.1\.0\.1\tnpm\.company\.example$/m);
  assert.match(settings.files.hosts as string, /^127\.1\.0\.2\tnpm\.internal\.example$/m);
  assert.equal(settings.variables.YARN_NPM_REGISTRY_SERVER, 'https://npm.company.example/repo/');
  assert.equal(settings.variables.BUN_CONFIG_REGISTRY, 'https://npm.company.example/repo/');
  // The registry's token, for the installers that read no npmrc.
  assert.equal(settings.variables.YARN_NPM_AUTH_TOKEN, 'npm-token-4c1d');
  assert.equal(settings.variables.BUN_CONFIG_TOKEN, 'npm-token-4c1d');
  // The proxy lets through the registries named, not the defaults they replace.
  assert.deepEqual(settings.registries, [
    { host: 'npm.company.example', port: 443 },
    { host: 'npm.internal.example', port: 443 },
  ]);
  // No pip settings for a Node build.
  assert.equal(settings.files['pip.conf'], undefined);
});

test('pip settings: index URLs (with their credentials), find-links folders mounted, the defaults only when none is named', async () => {
  const wheels = await mkdtemp(join(home, 'wheels-'));
  const named = await readHostPackageSettings(
    machine({
      PIP_INDEX_URL: 'https://builder:pypi-pass-77@pypi.company.example/simple',
      PIP_EXTRA_INDEX_URL: 'http://127.0.0.1:8081/simple',
      PIP_FIND_LINKS: `${wheels} https://wheels.company.example/links/`,
      PIP_DEFAULT_TIMEOUT: '60',
      PIP_REQUIRE_VIRTUALENV: 'true',
    }),
  );
  const settings = buildSettings(named, { installers: ['pip'], proxyUrl: 'http://127.0.0.1:3128' });
  const pipConf = settings.files['pip.conf'] as string;
  assert.match(pipConf, /^index-url = https:\/\/builder:pypi-pass-77@pypi\.company\.example\/simple$/m);
  assert.match(pipConf, /^extra-index-url = http:\/\/127\.0\.0\.1:8081\/simple$/m);
  assert.match(
    pipConf,
    /^find-links = \/run\/durable-debugger-settings\/find-links-0\n {4}https:\/\/wheels\.company\.example\/links\/$/m,
  );
  assert.match(pipConf, /^timeout = 60$/m);
  assert.doesNotMatch(pipConf, /require-virtualenv/, 'only the keys installers need');
  assert.deepEqual(settings.folders, { 'find-links-0': wheels });
  assert.deepEqual(settings.registries, [
    { host: 'pypi.company.example', port: 443 },
    { host: '127.0.0.1', port: 8081 },
    { host: 'wheels.company.example', port: 443 },
  ]);
  assert.equal(settings.files.npmrc, undefined);

  const defaults = buildSettings(await readHostPackageSettings(machine({})), {
    installers: ['pip', 'npm'],
    proxyUrl: null,
  });
  const hosts = defaults.registries.map((target) => target.host);
  for (const host of ['pypi.org', 'files.pythonhosted.org', 'registry.npmjs.org', 'registry.yarnpkg.com'])
    assert.ok(hosts.includes(host), `${host} is a default registry`);
  assert.equal(defaults.variables.HTTPS_PROXY, undefined, 'no proxy variables without a proxy');
});

test('the settings hash changes with the registries, not with a token, and holds no secret', async () => {
  const npmrc = join(home, 'hash.npmrc');
  const digest = async (registry: string, token: string) => {
    await writeFile(npmrc, `registry=${registry}\n//npm.company.example/:_authToken=${token}\n`);
    const host = await readHostPackageSettings(machine({ npm_config_userconfig: npmrc }));
    return buildSettings(host, { installers: ['npm'], proxyUrl: null }).digest;
  };
  const first = await digest('https://npm.company.example/', 'token-one');
  assert.equal(
    await digest('https://npm.company.example/', 'token-two'),
    first,
    'a new token is not a new environment',
  );
  assert.notEqual(await digest('https://npm.mirror.example/', 'token-one'), first, 'another registry is');
  assert.match(first, /^[0-9a-f]{16}$/);
});

// A machine whose registry CA is named only for pip (pip's config or PIP_CERT), as many company
// machines have it: the build container's npm, pnpm and yarn must trust the same bundle.
test('a CA bundle named for pip is the one Node installers trust in the build container', async () => {
  const companyCa = join(home, 'company-ca.pem');
  await writeFile(companyCa, '-----BEGIN CERTIFICATE-----\ncompany\n-----END CERTIFICATE-----\n');
  const host = await readHostPackageSettings(machine({ PIP_CERT: companyCa }));
  assert.equal(host.nodeCaFile, companyCa);
  const settings = buildSettings(host, { installers: ['pip', 'npm'], proxyUrl: null });
  assert.equal(settings.files['node-ca.pem'], settings.files['pip-ca.pem']);
  assert.match(settings.files['pip-ca.pem'] as string, /company/);
  assert.equal(settings.variables.NODE_EXTRA_CA_CERTS, '/run/durable-debugger-settings/node-ca.pem');
  assert.match(settings.files['pip.conf'] as string, /^cert = \/run\/durable-debugger-settings\/pip-ca\.pem$/m);

  const nodeCa = join(home, 'node-ca.pem');
  await writeFile(nodeCa, 'node bundle\n');
  const own = await readHostPackageSettings(machine({ PIP_CERT: companyCa, NODE_EXTRA_CA_CERTS: nodeCa }));
  assert.equal(own.nodeCaFile, nodeCa, 'a bundle named for Node itself wins');
});

test('registryTargets reads ports and IPv6 hosts from the URLs', () => {
  const targets = registryTargets(
    {
      pip: { 'index-url': 'http://[::1]:3141/root/pypi/+simple/' },
      npm: { registry: 'http://localhost:4873/' },
      pipCaFile: null,
      nodeCaFile: null,
      upstream: { https: null, http: null, noProxy: [] },
    },
    ['pip', 'npm'],
  );
  assert.deepEqual(targets, [
    { host: '::1', port: 3141 },
    { host: 'localhost', port: 4873 },
  ]);
});
