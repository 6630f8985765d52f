// The host's package settings (pip's configuration, .npmrc, CA bundles, the upstream proxy),
// reduced to what installers need: the registries they install from, the CAs they trust, TLS
// strictness and the registries' own credentials. Nothing else of the host reaches a build: not
// npm's own process variables (npm_config_prefix, npm_config_node_gyp, npm_config_userconfig, …
// set by an `npm run` that started the worker, naming host paths), not the worker's secrets.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Installer } from './planTypes.js';
import { fileStamp, ReadUntilChanged, variablesOf } from './readUntilChanged.js';
import { mavenRepositoryUrls, readHostMavenSettings, type HostMavenSettings } from './java/mavenSettings.js';
import { goProxyUrls, goSumDbUrl, readHostGoSettings } from './go/goSettings.js';
import { defaultDebianMirrors, readHostDebianMirrors, type DebianMirrors } from './debian/debianMirrors.js';
import { cargoRegistryUrls, readHostCargoSettings, type HostCargoSettings } from './rust/cargoSettings.js';

const run = promisify(execFile);

/** A host and port a build may reach through the registry proxy. */
export interface RegistryTarget {
  host: string;
  port: number;
}

export interface HostPackageSettings {
  /** pip's options (index-url, extra-index-url, find-links, cert, …) as `pip config list` shows them. */
  pip: Record<string, string>;
  /** The kept .npmrc keys (registry, @scope:registry, //host/:_authToken, strict-ssl, ca), files then variables. */
  npm: Record<string, string>;
  /** The CA bundle pip trusts (its `cert`, REQUESTS_CA_BUNDLE, SSL_CERT_FILE, …), when the host names one. */
  pipCaFile: string | null;
  /** The CA bundle Node installers trust: NODE_EXTRA_CA_CERTS, npm's cafile, else pip's bundle. */
  nodeCaFile: string | null;
  /** The host's own proxy for HTTPS (and HTTP) with its NO_PROXY list: the registry proxy goes through it. */
  upstream: UpstreamProxy;
  /** The mirrors (and their servers' credentials) of ~/.m2/settings.xml; for installer 'maven'. */
  maven?: HostMavenSettings;
  /** The host's Go settings (GOPROXY, GOSUMDB, GONOSUMDB, GOPRIVATE, GOFLAGS, …) as `go env` shows them; for installer 'go'. */
  go?: Record<string, string>;
  /** The CA bundle Go trusts (SSL_CERT_FILE, pip's bundle, the system's): the sandbox images have none of their own. */
  goCaFile?: string | null;
  /** The Debian mirrors the host's apt names (/etc/apt/sources.list*), else deb.debian.org; for installer 'apt'. */
  apt?: DebianMirrors;
  /** The registries and sources of the host's cargo config (no tokens), and its CA bundle; for installer 'cargo'. */
  cargo?: HostCargoSettings;
}

export interface UpstreamProxy {
  https: string | null;
  http: string | null;
  noProxy: string[];
}

/** The pip options a build keeps; everything else of pip's configuration stays on the host. */
const pipKeys = [
  'index-url',
  'extra-index-url',
  'find-links',
  'no-index',
  'trusted-host',
  'cert',
  'timeout',
  'retries',
  'only-binary',
  'no-binary',
  'prefer-binary',
];

/** .npmrc keys a build keeps (plus @scope:registry and per-registry //host/:auth keys). */
const npmKeys = ['registry', 'strict-ssl', 'ca', 'cafile', 'fetch-retries', 'fetch-timeout', 'replace-registry-host'];
/** Per-registry keys (`//host/path/:<key>`) that carry a registry's credentials. */
const npmRegistryAuthKeys = ['_authToken', '_auth', 'username', '_password', 'always-auth', 'email'];
const npmSecretKeys = ['_authToken', '_auth', 'username', '_password', 'email'];
const npmProxyKeys = ['https-proxy', 'proxy', 'noproxy'];

export const defaultRegistries = {
  pip: ['https://pypi.org/simple', 'https://files.pythonhosted.org'],
  npm: ['https://registry.npmjs.org/', 'https://registry.yarnpkg.com/'],
};

export async function readHostPackageSettings(env: NodeJS.ProcessEnv = process.env): Promise<HostPackageSettings> {
  const pip = await pipConfig(env);
  const { kept: npm, proxies } = npmConfig(env);
  const firstFile = (...candidates: Array<string | undefined>) =>
    candidates.find((path): path is string => !!path && path.startsWith('/') && isFile(path)) ?? null;
  const pipCaFile = firstFile(pip.cert, env.PIP_CERT, env.REQUESTS_CA_BUNDLE, env.SSL_CERT_FILE, env.CURL_CA_BUNDLE);
  // Node's installers trust only Node's own CA list: a bundle the host names for pip or OpenSSL (a
  // company proxy's CA, often only in pip's config) is the one they need too.
  const nodeCaFile = firstFile(env.NODE_EXTRA_CA_CERTS, npm.cafile) ?? pipCaFile;
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? proxies.noproxy ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  return {
    pip,
    npm,
    pipCaFile,
    nodeCaFile,
    upstream: {
      https: env.HTTPS_PROXY || env.https_proxy || proxies['https-proxy'] || null,
      http: env.HTTP_PROXY || env.http_proxy || proxies.proxy || null,
      noProxy,
    },
    maven: readHostMavenSettings(env),
    go: await readHostGoSettings(env),
    goCaFile: firstFile(env.SSL_CERT_FILE, pipCaFile ?? undefined, ...systemCaBundles),
    apt: readHostDebianMirrors(),
    cargo: readHostCargoSettings(env),
  };
}

/** The registry hosts the settings name, with the defaults of each ecosystem the settings leave at default. */
export function registryTargets(settings: HostPackageSettings, wanted: readonly Installer[]): RegistryTarget[] {
  const urls: string[] = [];
  if (wanted.includes('pip')) {
    const { pip } = settings;
    if (!pip['index-url'] && pip['no-index'] === undefined) urls.push(...defaultRegistries.pip);
    if (pip['index-url']) urls.push(pip['index-url']);
    for (const key of ['extra-index-url', 'find-links']) urls.push(...splitList(pip[key]));
  }
  if (wanted.includes('npm')) {
    const { npm } = settings;
    if (npm.registry) urls.push(npm.registry);
    else urls.push(...defaultRegistries.npm);
    for (const [key, value] of Object.entries(npm)) if (/^@[^:]+:registry$/.test(key)) urls.push(value);
  }
  if (wanted.includes('cargo')) urls.push(...cargoRegistryUrls(settings.cargo));
  if (wanted.includes('apt')) {
    const apt = settings.apt ?? defaultDebianMirrors;
    urls.push(apt.main, apt.security);
  }
  if (wanted.includes('go')) {
    urls.push(...goProxyUrls(settings.go?.GOPROXY));
    // Go asks the checksum database through the proxy when it offers it, else directly.
    const sumdb = goSumDbUrl(settings.go?.GOSUMDB);
    if (sumdb) urls.push(sumdb);
  }
  if (wanted.includes('maven')) urls.push(...mavenRepositoryUrls(settings.maven));
  const targets = new Map<string, RegistryTarget>();
  for (const text of urls) {
    const url = parseUrl(text);
    if (!url || !['http:', 'https:'].includes(url.protocol)) continue;
    const target = {
      host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
      port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    };
    targets.set(`${target.host}:${target.port}`, target);
  }
  return [...targets.values()];
}

/** Where Debian, Fedora and Alpine keep the system's CA bundle. */
const systemCaBundles = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];

export function splitList(value: string | undefined): string[] {
  return (value ?? '').split(/\s+/).filter(Boolean);
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether an npm key carries a registry's credentials (`//host/:_authToken`, `_auth`, `_password`, `username`, `email`). */
export function isNpmCredentialKey(key: string): boolean {
  return npmRegistryAuthKeys.some((secret) => key === secret || key.endsWith(`:${secret}`));
}

/** The value with any password or token replaced, for hashing and messages. */
export function withoutSecret(key: string, value: string): string {
  if (npmSecretKeys.some((secret) => key === secret || key.endsWith(`:${secret}`))) return '<secret>';
  return value.replace(/(\w+:\/\/)[^/@\s]+@/g, '$1<secret>@');
}

// --- pip ---------------------------------------------------------------------------------

const pipReads = new ReadUntilChanged<Record<string, string>>();
let pipWarmed = false;

/**
 * Reads pip's configuration once, in the background, a few seconds after a worker starts: `pip config
 * list` is a Python process of its own (about half a second), which the worker's first build would
 * otherwise wait for. Later reads find it unless a file or variable changed.
 */
export function warmHostPackageSettings(env: NodeJS.ProcessEnv = process.env, afterMs = 3_000): void {
  if (pipWarmed) return;
  pipWarmed = true;
  setTimeout(() => void pipConfig(env).catch(() => undefined), afterMs).unref();
}

/**
 * pip's own configuration on this host (`pip config list`: its files and PIP_* variables), kept
 * keys only. Re-read when a config file or a PIP_* variable changes, so that changed settings
 * build a new image without a worker restart.
 */
async function pipConfig(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const home = env.HOME ?? homedir();
  const files = [
    '/etc/xdg/pip/pip.conf',
    '/etc/pip.conf',
    join(home, '.pip', 'pip.conf'),
    join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'pip', 'pip.conf'),
    ...(env.PIP_CONFIG_FILE ? [env.PIP_CONFIG_FILE] : []),
  ];
  const fingerprint = JSON.stringify([files.map(fileStamp), variablesOf(env, (name) => name.startsWith('PIP_'))]);
  return pipReads.get(fingerprint, () => readPipConfig(env));
}

async function readPipConfig(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const output = await run('python3', ['-m', 'pip', 'config', 'list'], {
    timeout: 30_000,
    env: { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  }).then(
    (result) => result.stdout,
    () => '',
  );
  // pip's precedence: a command's own section over [global], PIP_* variables over every file.
  const order = ['global', 'download', 'install', ':env:'];
  const found = output
    .split('\n')
    .map((line) => line.match(/^(global|install|download|:env:)\.([\w-]+)='(.*)'$/))
    .filter((match): match is RegExpMatchArray => match !== null)
    .sort((a, b) => order.indexOf(a[1] as string) - order.indexOf(b[1] as string));
  const config: Record<string, string> = {};
  for (const [, , name, value] of found) {
    const key = name === 'default-timeout' ? 'timeout' : (name as string);
    if (pipKeys.includes(key)) config[key] = value as string;
  }
  return config;
}

// --- npm ---------------------------------------------------------------------------------

/**
 * The kept keys of the host's npm configuration: the global npmrc, then the user's (where
 * npm_config_userconfig points, else ~/.npmrc), then NPM_CONFIG_* variables of kept keys.
 * `${VAR}` in a value is expanded here, on the host, as npm would.
 */
function npmConfig(env: NodeJS.ProcessEnv): { kept: Record<string, string>; proxies: Record<string, string> } {
  const variable = (name: string) => env[`npm_config_${name}`] ?? env[`NPM_CONFIG_${name.toUpperCase()}`];
  const prefix = variable('prefix') ?? dirname(dirname(process.execPath));
  const files = [
    variable('globalconfig') ?? join(prefix, 'etc', 'npmrc'),
    variable('userconfig') ?? join(env.HOME ?? homedir(), '.npmrc'),
  ];
  const values: Record<string, string> = {};
  for (const path of files) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      if (!line || line.startsWith('#') || line.startsWith(';')) continue;
      const equals = line.indexOf('=');
      if (equals < 0) continue;
      const key = line.slice(0, equals).trim();
      let value = line.slice(equals + 1).trim();
      if (/^".*"$/.test(value)) value = value.slice(1, -1);
      values[key] = value.replace(/\$\{([^}]+)\}/g, (_whole, name: string) => env[name] ?? '');
    }
  }
  for (const key of [...npmKeys, ...npmProxyKeys]) {
    const value = variable(key.replace(/-/g, '_'));
    if (value !== undefined && value !== '') values[key] = value;
  }
  const kept: Record<string, string> = {};
  const proxies: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (npmProxyKeys.includes(key)) proxies[key] = value;
    else if (
      npmKeys.includes(key) ||
      /^@[^:]+:registry$/.test(key) ||
      npmRegistryAuthKeys.some((auth) => key.startsWith('//') && key.endsWith(`:${auth}`))
    )
      kept[key] = value;
  }
  return { kept, proxies };
}

/** A hash of the settings a build receives, secrets left out: part of the image key. */
export function settingsDigest(parts: Record<string, Record<string, string> | string | null>): string {
  const redacted = Object.fromEntries(
    Object.entries(parts).map(([name, part]) => [
      name,
      part && typeof part === 'object'
        ? Object.fromEntries(
            Object.entries(part)
              .sort()
              .map(([key, value]) => [key, withoutSecret(key, value)]),
          )
        : part,
    ]),
  );
  return createHash('sha256').update(JSON.stringify(redacted)).digest('hex').slice(0, 16);
}
