// The Debian mirror a build installs from: the one this host's apt is configured with
// (/etc/apt/sources.list and sources.list.d, one-line and deb822 formats), else deb.debian.org.
// Only entries of Debian's own archive count (suites such as bookworm, bookworm-updates,
// trixie-security): a third-party repository the host also names (nodesource, a cloud SDK's) is
// no Debian mirror, and the build never reaches it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DebianMirrors {
  /** The archive of Debian's releases and their -updates: http://deb.debian.org/debian */
  main: string;
  /** The security archive: http://deb.debian.org/debian-security */
  security: string;
}

export const defaultDebianMirrors: DebianMirrors = {
  main: 'http://deb.debian.org/debian',
  security: 'http://deb.debian.org/debian-security',
};

/** The variables the build's shell gets the mirrors in (buildSettings' env.sh); the apt fragment reads them. */
export const aptMirrorVariables = {
  main: 'DURABLE_DEBUGGER_APT_MIRROR',
  security: 'DURABLE_DEBUGGER_APT_SECURITY_MIRROR',
} as const;

const debianSuite =
  /^(buster|bullseye|bookworm|trixie|forky|duke|sid|stable|testing|unstable|oldstable|oldoldstable)(-updates|-security|\/updates|-backports|-proposed-updates)?$/;

interface SourceEntry {
  uri: string;
  suites: string[];
}

/** The deb entries of one sources file: one-line (`deb [opts] uri suite comp…`) or deb822 (`Types: deb`). */
export function parseAptSources(text: string, deb822: boolean): SourceEntry[] {
  if (!deb822) {
    return text
      .split('\n')
      .map((line) => line.replace(/#.*/, '').trim())
      .map((line) => line.replace(/\[[^\]]*\]\s*/, '').split(/\s+/))
      .filter((words) => words[0] === 'deb' && words.length >= 3)
      .map((words) => ({ uri: words[1] as string, suites: [words[2] as string] }));
  }
  return text
    .split(/\n\s*\n/)
    .map((stanza) => {
      const fields: Record<string, string> = {};
      let last = '';
      for (const raw of stanza.split('\n')) {
        if (/^\s*#/.test(raw)) continue;
        const field = raw.match(/^([\w-]+):\s*(.*)$/);
        if (field) fields[(last = (field[1] as string).toLowerCase())] = field[2] as string;
        else if (/^\s+\S/.test(raw) && last) fields[last] += ` ${raw.trim()}`;
      }
      return fields;
    })
    .filter((fields) => (fields.types ?? '').split(/\s+/).includes('deb') && fields.enabled?.trim() !== 'no')
    .flatMap((fields) =>
      (fields.uris ?? '')
        .split(/\s+/)
        .filter(Boolean)
        .map((uri) => ({ uri, suites: (fields.suites ?? '').split(/\s+/).filter(Boolean) })),
    );
}

/** The mirrors of Debian's archive the entries name (the first of each kind), else the defaults. */
export function debianMirrorsOf(entries: SourceEntry[]): DebianMirrors {
  const mirrors = { ...defaultDebianMirrors };
  const usable = entries.filter((entry) => /^https?:\/\//.test(entry.uri));
  const isSecurity = (suite: string) => /-security$|\/updates$/.test(suite);
  const security = usable.find((entry) => entry.suites.some((suite) => isSecurity(suite) && debianSuite.test(suite)));
  const main = usable.find((entry) => entry.suites.some((suite) => !isSecurity(suite) && debianSuite.test(suite)));
  if (main) mirrors.main = main.uri.replace(/\/+$/, '');
  if (security) mirrors.security = security.uri.replace(/\/+$/, '');
  return mirrors;
}

/** The host's Debian mirrors, as its apt reads them (sources.list, then sources.list.d/*.list and *.sources). */
export function readHostDebianMirrors(etcApt = '/etc/apt'): DebianMirrors {
  const entries: SourceEntry[] = [];
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  };
  const main = read(join(etcApt, 'sources.list'));
  if (main !== null) entries.push(...parseAptSources(main, false));
  let parts: string[] = [];
  try {
    parts = readdirSync(join(etcApt, 'sources.list.d')).sort();
  } catch {
    // no sources.list.d: not a Debian host, or apt without parts
  }
  for (const name of parts) {
    if (!/^[\w.-]+\.(list|sources)$/.test(name)) continue;
    const text = read(join(etcApt, 'sources.list.d', name));
    if (text !== null) entries.push(...parseAptSources(text, name.endsWith('.sources')));
  }
  return debianMirrorsOf(entries);
}
