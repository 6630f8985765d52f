// What a build container receives of the host's package settings: a folder of files (pip.conf,
// npmrc, CA bundles, env.sh) mounted read-only, never copied into the image, and variables its
// shell exports from env.sh before the build script (so they never enter the container's Env,
// which `docker commit` would keep). Only the ecosystems the build installs get their files.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Installer } from './planTypes.js';
import { buildMavenSettingsXml, centralMirror, mavenVariables } from './java/mavenSettings.js';
import {
  isNpmCredentialKey,
  registryTargets,
  settingsDigest,
  splitList,
  type HostPackageSettings,
  type RegistryTarget,
  type UpstreamProxy,
} from './hostPackageSettings.js';
import { buildGoProxy } from './go/goSettings.js';
import { aptMirrorVariables, defaultDebianMirrors } from './debian/debianMirrors.js';
import { shellQuote } from '../shellQuote.js';
import { hostsFile, registryRoutes } from './registryRoutes.js';

/** The variable naming the host's cargo settings file in a build (rust/cargoSettings.ts), when it has one. */
export const cargoConfigVariable = 'DURABLE_DEBUGGER_CARGO_CONFIG';

/** Where the settings folder is mounted in the build container. */
export const settingsMountPoint = '/run/durable-debugger-settings';

export interface BuildSettings {
  /** Files of the settings folder (name → text). */
  files: Record<string, string>;
  /** Host folders mounted read-only at settingsMountPoint/<name> (pip's local find-links). */
  folders: Record<string, string>;
  /** Variables the build's shell exports (env.sh): paths and the proxy. */
  variables: Record<string, string>;
  /** The hosts the registry proxy lets the build reach. */
  registries: RegistryTarget[];
  /** The host's own proxy, which the registry proxy goes through (its credentials stay in the worker). */
  upstream: UpstreamProxy;
  /** A secret-free hash of what the build receives: part of the image key. */
  digest: string;
  /** Every secret value the build receives (tokens, passwords), in each form it may print them: redacted from its output. */
  secrets: string[];
}

export interface BuildSettingsOptions {
  /** The installers whose settings and registries the build gets. */
  installers: readonly Installer[];
  /** The proxy as the build reaches it (http://127.0.0.1:port), or null when the build has the host's network. */
  proxyUrl: string | null;
  /**
   * Whether the registries' credentials (npm tokens, passwords in pip's index URLs) are passed on.
   * Installs get them; a repository's `setup` commands only when the user opts in
   * (DURABLE_DEBUGGER_SETUP_CREDENTIALS): they are the repository's code, and could print them.
   */
  credentials?: boolean;
}

export function buildSettings(host: HostPackageSettings, options: BuildSettingsOptions): BuildSettings {
  const files: Record<string, string> = {};
  const folders: Record<string, string> = {};
  const variables: Record<string, string> = {};
  const at = (name: string) => `${settingsMountPoint}/${name}`;
  const digestParts: Record<string, Record<string, string> | string | null> = {};
  const credentials = options.credentials ?? true;
  const secrets = new Set<string>();
  // A URL's user:password, kept (and remembered as secret) or dropped.
  const urlCredentials = (value: string) =>
    value.replace(/(\w+:\/\/)([^/@\s]+)@/g, (_whole, scheme: string, userinfo: string) => {
      if (!credentials) return scheme;
      rememberSecret(secrets, userinfo);
      const password = userinfo.split(':').slice(1).join(':');
      if (password) rememberSecret(secrets, password);
      return `${scheme}${userinfo}@`;
    });
  if (!credentials) digestParts.credentials = 'withheld';

  const registries = registryTargets(host, options.installers);
  // The registries on port 443 are at loopback routes of their own, named by the build's /etc/hosts
  // (registryRoutes.ts): reached without the proxy. Anything else the build asks for goes to the
  // proxy, loopback included: the proxy refuses what is no registry.
  const routes = options.proxyUrl ? registryRoutes(registries) : [];
  const routedHosts = routes.map((route) => route.host);
  if (options.proxyUrl) {
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) variables[name] = options.proxyUrl;
    variables.NO_PROXY = variables.no_proxy = routedHosts.join(',');
    files.hosts = hostsFile(routes);
  }

  if (options.installers.includes('pip')) {
    const pip: Record<string, string> = {};
    for (const [key, value] of Object.entries(host.pip)) {
      if (key === 'cert') continue;
      if (key === 'find-links') {
        const links = splitList(value).flatMap((link) => {
          const path = link.startsWith('file:') ? fileURLToPath(link) : link;
          if (!path.startsWith('/')) return [link];
          if (!isFolder(path)) return [];
          const name = `find-links-${Object.keys(folders).length}`;
          folders[name] = path;
          return [at(name)];
        });
        if (links.length) pip[key] = links.join('\n    ');
        continue;
      }
      pip[key] = urlCredentials(splitList(value).join('\n    ') || value);
    }
    if (host.pipCaFile) {
      const bundle = readBundle(host.pipCaFile);
      files['pip-ca.pem'] = bundle.text;
      pip.cert = at('pip-ca.pem');
      // uv, requests and OpenSSL-based tools in setup commands trust the same bundle.
      variables.SSL_CERT_FILE = variables.REQUESTS_CA_BUNDLE = at('pip-ca.pem');
      digestParts.pipCa = bundle.digest;
    }
    files['pip.conf'] = [
      '[global]',
      ...Object.entries(pip).map(([key, value]) => `${key} = ${value}`),
      // Ours: a build has no use for pip's look at its own newest version.
      'disable-pip-version-check = true',
      '',
    ].join('\n');
    variables.PIP_CONFIG_FILE = at('pip.conf');
    digestParts.pip = pip;
  }

  if (options.installers.includes('npm')) {
    const npm: Record<string, string> = {};
    for (const [key, value] of Object.entries(host.npm)) {
      if (key === 'cafile') continue;
      if (isNpmCredentialKey(key)) {
        if (!credentials) continue;
        if (!/(^|:)(username|email|always-auth)$/.test(key)) rememberSecret(secrets, value);
        npm[key] = value;
        continue;
      }
      npm[key] = urlCredentials(value);
    }
    if (host.nodeCaFile) {
      const bundle = readBundle(host.nodeCaFile);
      files['node-ca.pem'] = bundle.text;
      variables.NODE_EXTRA_CA_CERTS = at('node-ca.pem');
      if (host.npm.cafile) npm.cafile = at('node-ca.pem');
      digestParts.nodeCa = bundle.digest;
    }
    digestParts.npm = { ...npm };
    // yarn 1 reads its proxy from the npmrc only; npm and pnpm take it from there too.
    if (options.proxyUrl) npm.proxy = npm['https-proxy'] = options.proxyUrl;
    if (routedHosts.length) npm.noproxy = routedHosts.join(',');
    files.npmrc = Object.entries(npm)
      .map(([key, value]) => `${key}=${value}\n`)
      .join('');
    variables.NPM_CONFIG_USERCONFIG = at('npmrc');
    // Yarn 4 reads no npmrc: the same settings as its own variables.
    if (options.proxyUrl) variables.YARN_HTTP_PROXY = variables.YARN_HTTPS_PROXY = options.proxyUrl;
    if (npm.registry) variables.YARN_NPM_REGISTRY_SERVER = npm.registry;
    if (npm['strict-ssl'] === 'false') variables.YARN_ENABLE_STRICT_SSL = 'false';
    const registryToken = npm.registry && npm[`${nerfDart(npm.registry)}:_authToken`];
    if (registryToken) variables.YARN_NPM_AUTH_TOKEN = registryToken;
    // Bun reads the npmrc since 1.1.18; older releases only their variables (and the proxy from HTTPS_PROXY).
    if (npm.registry) variables.BUN_CONFIG_REGISTRY = npm.registry;
    if (registryToken) variables.BUN_CONFIG_TOKEN = registryToken;
  }

  if (options.installers.includes('apt')) {
    const mirrors = host.apt ?? defaultDebianMirrors;
    // The apt fragment (debian/debianPackages.ts) writes its sources from these, for the image's own release.
    variables[aptMirrorVariables.main] = urlCredentials(mirrors.main);
    variables[aptMirrorVariables.security] = urlCredentials(mirrors.security);
    files['apt.conf'] = [
      // A build has no CAP_SETUID: apt's download methods run as root instead of dropping to _apt.
      'APT::Sandbox::User "root";',
      'Acquire::Languages "none";',
      // dpkg's progress lines (carriage returns) would fill the build's last lines.
      'Dpkg::Use-Pty "0";',
      'Acquire::Retries "3";',
      ...(options.proxyUrl
        ? [`Acquire::http::Proxy "${options.proxyUrl}";`, `Acquire::https::Proxy "${options.proxyUrl}";`]
        : []),
      '',
    ].join('\n');
    variables.APT_CONFIG = at('apt.conf');
    digestParts.apt = { ...mirrors };
  }

  if (options.installers.includes('go')) {
    const go: Record<string, string> = {};
    for (const [key, value] of Object.entries(host.go ?? {})) go[key] = urlCredentials(value);
    // Only the module proxies: `direct` would fetch from version control hosts no build reaches.
    go.GOPROXY = buildGoProxy(go.GOPROXY);
    Object.assign(variables, go);
    if (host.goCaFile && !variables.SSL_CERT_FILE) {
      const bundle = readBundle(host.goCaFile);
      files['go-ca.pem'] = bundle.text;
      variables.SSL_CERT_FILE = at('go-ca.pem');
      digestParts.goCa = bundle.digest;
    }
    digestParts.go = go;
  }

  if (options.installers.includes('cargo')) {
    // The image's cargo trusts no CA of its own: the host's bundle.
    const caFile = host.cargo?.caFile ?? host.pipCaFile;
    if (caFile) {
      const bundle = readBundle(caFile);
      files['cargo-ca.pem'] = bundle.text;
      variables.CARGO_HTTP_CAINFO = at('cargo-ca.pem');
      digestParts.cargoCa = bundle.digest;
    }
  }
  if (options.installers.includes('cargo') && host.cargo?.config) {
    // Read with `cargo --config` from the settings folder: the image never has the host's cargo config.
    files['cargo-config.toml'] = host.cargo.config;
    variables[cargoConfigVariable] = at('cargo-config.toml');
    digestParts.cargo = host.cargo.config;
  }

  if (options.installers.includes('maven')) {
    // Maven reads no HTTPS_PROXY: its settings.xml names the proxy, the host's mirrors and their credentials.
    files['maven-settings.xml'] = buildMavenSettingsXml(host.maven, options.proxyUrl, credentials);
    for (const server of credentials ? Object.values(host.maven?.servers ?? {}) : [])
      if (server.password) rememberSecret(secrets, server.password);
    variables[mavenVariables.settings] = at('maven-settings.xml');
    const mirror = centralMirror(host.maven);
    if (mirror) variables[mavenVariables.repository] = urlCredentials(mirror.url);
    // Java trusts only its own cacerts: the host's CA bundle (a company proxy's CA) becomes a truststore in the build.
    if (host.pipCaFile) {
      const bundle = readBundle(host.pipCaFile);
      files['maven-ca.pem'] = bundle.text;
      variables[mavenVariables.caBundle] = at('maven-ca.pem');
      // Python fetches the Maven distribution: it trusts the same bundle.
      variables.SSL_CERT_FILE ??= at('maven-ca.pem');
      digestParts.mavenCa = bundle.digest;
    }
    digestParts.maven = {
      mirrors: JSON.stringify(host.maven?.mirrors ?? []),
      servers: Object.keys(host.maven?.servers ?? {}).join(','),
    };
  }

  files['env.sh'] = Object.entries(variables)
    .map(([key, value]) => `export ${key}=${shellQuote(value)}\n`)
    .join('');
  return {
    files,
    folders,
    variables,
    registries,
    upstream: host.upstream,
    digest: settingsDigest(digestParts),
    secrets: [...secrets],
  };
}

/** A secret and the forms a tool may print it in: as given, percent-decoded or -encoded, base64-decoded (npm's _auth, _password). */
function rememberSecret(secrets: Set<string>, value: string): void {
  const forms = [value, encodeURIComponent(value)];
  try {
    forms.push(decodeURIComponent(value));
  } catch {
    // not percent-encoded
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (/^[\x20-\x7e]+$/.test(decoded)) forms.push(decoded, ...decoded.split(':').slice(1));
  }
  // Too short a value would blank out ordinary words of the output.
  for (const form of forms) if (form.length >= minimumSecretLength) secrets.add(form);
}

const minimumSecretLength = 6;

/** Replaces every secret in `text`; one function for every line of output that leaves a build. */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  // Longest first: a secret that contains another is replaced whole.
  const sorted = [...new Set(secrets)].sort((a, b) => b.length - a.length);
  return (text) => sorted.reduce((redacted, secret) => redacted.split(secret).join('<redacted>'), text);
}

/** npm's key prefix for a registry's own settings: https://npm.example.com/repo/ → //npm.example.com/repo/ */
function nerfDart(registry: string): string {
  const url = new URL(registry);
  return `//${url.host}${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}`;
}

const bundles = new Map<string, { stamp: string; text: string; digest: string }>();

/** A CA bundle's text and hash, read again only when the file changes (every preparation asks for them). */
function readBundle(path: string): { text: string; digest: string } {
  const stats = statSync(path);
  const stamp = `${stats.mtimeMs}:${stats.size}`;
  const known = bundles.get(path);
  if (known?.stamp === stamp) return known;
  const text = readFileSync(path, 'utf8');
  const bundle = { stamp, text, digest: createHash('sha256').update(text).digest('hex').slice(0, 16) };
  bundles.set(path, bundle);
  return bundle;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
