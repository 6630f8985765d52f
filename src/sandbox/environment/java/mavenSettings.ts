// The host's Maven settings a build gets (installer 'maven'): the mirrors of ~/.m2/settings.xml
// (a company repository that mirrors Central) and, for those mirrors only, their servers'
// credentials. The build receives them as a settings.xml in the read-only settings folder,
// never in the image; with the registry proxy as Maven's proxy, since Maven reads no HTTPS_PROXY.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface MavenMirror {
  id: string;
  url: string;
  mirrorOf: string;
}

export interface HostMavenSettings {
  mirrors: MavenMirror[];
  /** Credentials of the mirrors' servers (by server id). */
  servers: Record<string, { username?: string; password?: string }>;
}

export const mavenCentral = ['https://repo.maven.apache.org/maven2', 'https://repo1.maven.org/maven2'];

/** The variables the build's shell gets (buildSettings' env.sh). */
export const mavenVariables = {
  settings: 'DURABLE_DEBUGGER_MAVEN_SETTINGS',
  /** Where Central's artifacts come from: the mirror of central, else Central (the Maven distribution is fetched from there). */
  repository: 'DURABLE_DEBUGGER_MAVEN_REPOSITORY',
  /** The host's CA bundle (PEM), made into Java's truststore for the build. */
  caBundle: 'DURABLE_DEBUGGER_MAVEN_CA',
} as const;

function tag(xml: string, name: string): string | undefined {
  const value = xml.match(new RegExp(`<${name}>\\s*([^<]*?)\\s*</${name}>`))?.[1];
  return value?.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

export function parseMavenSettings(raw: string, env: NodeJS.ProcessEnv = {}): HostMavenSettings {
  const xml = raw.replace(/<!--[\s\S]*?-->/g, '');
  // Maven expands ${env.NAME} in settings; a value it cannot expand stays as written.
  const expand = (value: string | undefined) =>
    value?.replace(/\$\{env\.([^}]+)\}/g, (whole, name: string) => env[name] ?? whole);
  const mirrors = [...xml.matchAll(/<mirror>([\s\S]*?)<\/mirror>/g)]
    .map((match) => ({
      id: tag(match[1] as string, 'id') ?? '',
      url: expand(tag(match[1] as string, 'url')) ?? '',
      mirrorOf: tag(match[1] as string, 'mirrorOf') ?? '',
    }))
    .filter((mirror) => mirror.id && /^https?:\/\//.test(mirror.url));
  const servers: HostMavenSettings['servers'] = {};
  for (const match of xml.matchAll(/<server>([\s\S]*?)<\/server>/g)) {
    const id = tag(match[1] as string, 'id');
    if (!id || !mirrors.some((mirror) => mirror.id === id)) continue;
    servers[id] = {
      username: expand(tag(match[1] as string, 'username')),
      password: expand(tag(match[1] as string, 'password')),
    };
  }
  return { mirrors, servers };
}

/** ~/.m2/settings.xml (or the file MAVEN_SETTINGS names), as far as a build needs it. */
export function readHostMavenSettings(env: NodeJS.ProcessEnv = process.env): HostMavenSettings {
  const path = env.DURABLE_DEBUGGER_MAVEN_SETTINGS_FILE ?? join(env.HOME ?? homedir(), '.m2', 'settings.xml');
  try {
    return parseMavenSettings(readFileSync(path, 'utf8'), env);
  } catch {
    return { mirrors: [], servers: {} };
  }
}

/** The mirror that serves Central (mirrorOf central, * or a list with central), if any. */
export function centralMirror(settings: HostMavenSettings | undefined): MavenMirror | undefined {
  return settings?.mirrors.find((mirror) =>
    mirror.mirrorOf.split(',').some((entry) => ['*', 'central', 'external:*'].includes(entry.trim())),
  );
}

/** The URLs the registry proxy lets a Maven build reach: the mirrors, and Central unless a mirror serves it. */
export function mavenRepositoryUrls(settings: HostMavenSettings | undefined): string[] {
  const mirrors = settings?.mirrors.map((mirror) => mirror.url) ?? [];
  return centralMirror(settings) ? mirrors : [...mavenCentral, ...mirrors];
}

function escape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The settings.xml of a build: the host's mirrors (credentials only when `credentials`), and the
 * registry proxy as Maven's proxy for http and https.
 */
export function buildMavenSettingsXml(
  settings: HostMavenSettings | undefined,
  proxyUrl: string | null,
  credentials: boolean,
): string {
  const proxy = proxyUrl ? new URL(proxyUrl) : null;
  const lines = ['<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">'];
  if (proxy) {
    lines.push('  <proxies>');
    for (const protocol of ['http', 'https'])
      lines.push(
        `    <proxy><id>durable-debugger-${protocol}</id><active>true</active><protocol>${protocol}</protocol><host>${proxy.hostname}</host><port>${proxy.port}</port><nonProxyHosts>durable-debugger.invalid</nonProxyHosts></proxy>`,
      );
    lines.push('  </proxies>');
  }
  const mirrors = settings?.mirrors ?? [];
  if (mirrors.length) {
    lines.push('  <mirrors>');
    for (const mirror of mirrors)
      lines.push(
        `    <mirror><id>${escape(mirror.id)}</id><url>${escape(mirror.url)}</url><mirrorOf>${escape(mirror.mirrorOf)}</mirrorOf></mirror>`,
      );
    lines.push('  </mirrors>');
  }
  const servers = credentials ? Object.entries(settings?.servers ?? {}) : [];
  if (servers.length) {
    lines.push('  <servers>');
    for (const [id, server] of servers)
      lines.push(
        `    <server><id>${escape(id)}</id>${server.username ? `<username>${escape(server.username)}</username>` : ''}${server.password ? `<password>${escape(server.password)}</password>` : ''}</server>`,
      );
    lines.push('  </servers>');
  }
  lines.push('</settings>', '');
  return lines.join('\n');
}
