// The host's cargo settings a build gets (installer 'cargo'): the registries and sources of
// $CARGO_HOME/config.toml (a crates.io mirror through [source] replace-with, an alternative
// registry in [registries]), as a file the build's cargo reads with --config and whose hosts the
// proxy allows. Tokens stay on the host: credentials.toml is never read, and a `token` in the
// config is dropped, so a registry that needs one fails in the build saying so.
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';

/** crates.io's sparse index and its downloads. */
export const defaultCargoRegistries = ['https://index.crates.io/', 'https://static.crates.io/'];

export interface HostCargoSettings {
  /** The kept sections ([source], [registries], [registry] without tokens), as TOML; '' when there are none. */
  config: string;
  /** The URLs they name (sparse+https://…, https://…): the proxy allows their hosts. */
  urls: string[];
  /**
   * The CA bundle cargo trusts (CARGO_HTTP_CAINFO, SSL_CERT_FILE, the system's): the sandbox images
   * have none, and a company proxy's CA is in the host's.
   */
  caFile?: string | null;
}

const systemCaBundles = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];

function caBundle(env: NodeJS.ProcessEnv): string | null {
  const candidates = [env.CARGO_HTTP_CAINFO, env.SSL_CERT_FILE, ...systemCaBundles];
  return (
    candidates.find((path): path is string => {
      if (!path?.startsWith('/')) return false;
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    }) ?? null
  );
}

function tableOf(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function readHostCargoSettings(env: NodeJS.ProcessEnv = process.env): HostCargoSettings {
  return { ...readHostCargoConfig(env), caFile: caBundle(env) };
}

function readHostCargoConfig(env: NodeJS.ProcessEnv): HostCargoSettings {
  const home = env.CARGO_HOME ?? join(homedir(), '.cargo');
  for (const name of ['config.toml', 'config']) {
    let text: string;
    try {
      text = readFileSync(join(home, name), 'utf8');
    } catch {
      continue;
    }
    try {
      return keptCargoSettings(parse(text) as Record<string, unknown>);
    } catch {
      return { config: '', urls: [] };
    }
  }
  return { config: '', urls: [] };
}

/** The registry and source sections of a cargo config, without credentials, and the URLs they name. */
export function keptCargoSettings(config: Record<string, unknown>): HostCargoSettings {
  const kept: Record<string, Record<string, unknown>> = {};
  const urls: string[] = [];
  const url = (value: unknown) =>
    typeof value === 'string' ? value.replace(/^sparse\+/, '').replace(/^registry\+/, '') : null;
  for (const section of ['source', 'registries'] as const) {
    for (const [name, entry] of Object.entries(tableOf(config[section]))) {
      const table = { ...tableOf(entry) };
      delete table.token;
      delete table['credential-provider'];
      for (const key of ['registry', 'index']) {
        const named = url(table[key]);
        if (named) urls.push(named);
      }
      (kept[section] ??= {})[name] = table;
    }
  }
  const registry = { ...tableOf(config.registry) };
  delete registry.token;
  delete registry['global-credential-providers'];
  if (Object.keys(registry).length) kept.registry = registry;
  return {
    config: Object.keys(kept).length ? stringify(kept) : '',
    urls: urls.filter((each) => /^https?:\/\//.test(each)),
  };
}

/** The URLs a build's cargo reaches: crates.io unless a [source] replaces it, and every URL the settings name. */
export function cargoRegistryUrls(settings: HostCargoSettings | undefined): string[] {
  const replaced = /\[source\.crates-io\][^[]*replace-with/.test(settings?.config ?? '');
  return [...(replaced ? [] : defaultCargoRegistries), ...(settings?.urls ?? [])];
}
