// The host's Go settings a build's `go mod download` needs: where modules come from (GOPROXY), what
// is checked against the checksum database (GOSUMDB, GONOSUMDB, GOPRIVATE, GONOPROXY, GOINSECURE) and
// GOFLAGS, as `go env` shows them (its variables and its config file), or from the environment when
// the host has no Go. They reach the build as its shell's variables, never the image.
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { fileStamp, ReadUntilChanged, variablesOf } from '../readUntilChanged.js';

const run = promisify(execFile);

export const goSettingNames = ['GOPROXY', 'GOSUMDB', 'GONOSUMDB', 'GOPRIVATE', 'GONOPROXY', 'GOINSECURE', 'GOFLAGS'];

/** Go's own defaults, for a host without Go. */
const goDefaults: Record<string, string> = { GOPROXY: 'https://proxy.golang.org,direct', GOSUMDB: 'sum.golang.org' };

const reads = new ReadUntilChanged<Record<string, string>>();

/** Read again only when a GO* variable, PATH, HOME, go's config file or the `go` that PATH finds changed (readUntilChanged.ts). */
export async function readHostGoSettings(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const configFile = env.GOENV ?? join(env.XDG_CONFIG_HOME ?? join(env.HOME ?? homedir(), '.config'), 'go', 'env');
  const binary = (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((folder) => fileStamp(join(folder, 'go')))
    .find((stamp) => stamp.length > 1);
  const fingerprint = JSON.stringify([
    variablesOf(env, (name) => name.startsWith('GO') || ['PATH', 'HOME', 'XDG_CONFIG_HOME'].includes(name)),
    fileStamp(configFile),
    binary ?? null,
  ]);
  return { ...(await reads.get(fingerprint, () => readGoEnv(env))) };
}

async function readGoEnv(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const shown = await run('go', ['env', '-json', ...goSettingNames], {
    timeout: 30_000,
    env: { ...env, GOTOOLCHAIN: 'local' },
  }).then(
    (result) => JSON.parse(result.stdout) as Record<string, string>,
    () => null,
  );
  const settings: Record<string, string> = {};
  for (const name of goSettingNames) {
    const value = shown ? shown[name] : (env[name] ?? goDefaults[name]);
    if (value) settings[name] = value;
  }
  return settings;
}

/** The module proxies of GOPROXY that a build can reach (http and https URLs; `direct` and `off` are no proxies). */
export function goProxyUrls(goproxy: string | undefined): string[] {
  return (goproxy ?? '')
    .split(/[,|]/)
    .map((entry) => entry.trim())
    .filter((entry) => /^https?:\/\//.test(entry));
}

/**
 * GOPROXY as a build uses it: its proxies only, with the separators that say when to try the next
 * (`,` on 404/410, `|` on any error). `direct` fetches from version control, which no build can reach.
 */
export function buildGoProxy(goproxy: string | undefined): string {
  const kept: string[] = [];
  for (const match of (goproxy ?? '').matchAll(/([^,|]+)([,|]?)/g)) {
    const entry = (match[1] as string).trim();
    if (/^https?:\/\//.test(entry)) kept.push(entry, match[2] || ',');
  }
  return kept.length ? kept.slice(0, -1).join('') : 'off';
}

/** The checksum database's host as GOSUMDB names it ("sum.golang.org", "name+key https://url"), or null when off. */
export function goSumDbUrl(gosumdb: string | undefined): string | null {
  const value = (gosumdb ?? 'sum.golang.org').trim();
  if (!value || value === 'off') return null;
  const [name, url] = value.split(/\s+/);
  if (url) return /^https?:\/\//.test(url) ? url : `https://${url}`;
  return `https://${(name as string).split('+')[0]}`;
}
