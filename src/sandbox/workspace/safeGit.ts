// Every git command in the user's repository runs through here. The repository is untrusted (its
// .git/config included): settings in it can make git run programs on the host, so each command
// runs with those settings overridden from the environment (GIT_CONFIG_COUNT/KEY/VALUE, which
// outrank every config file and, unlike `-c`, take any key as it is):
//   core.fsmonitor   a command git runs to ask which files changed (ls-files, status)
//   core.hooksPath   hooks (reference-transaction on update-ref, post-index-change, …)
//   filter.<x>.*     clean/smudge/process drivers, chosen per path by .gitattributes
//   commit.gpgSign   gpg.program on commit-tree
//   and the pager, the attributes file, and automatic gc/maintenance.
// Filter driver names cannot be wildcarded, so each one the configuration names is read first
// (`git config --get-regexp`, which runs nothing) and emptied: git runs no filter whose command
// is empty. A filter of the user's own global config is emptied too: its files compare by bytes.
import { execFile, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { promisify } from 'node:util';

type Setting = [key: string, value: string];

const inertSettings: Setting[] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.attributesFile', '/dev/null'],
  ['commit.gpgSign', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

const filterLookup = ['config', '-z', '--name-only', '--get-regexp', '^filter\\.'];

export interface GitOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
}

/** Runs `git args` in `repo` with the repository's executable settings off; git's result as it is. */
export function gitSync(repo: string, args: string[], options: GitOptions = {}): SpawnSyncReturns<string> {
  const lookup = spawnSync('git', ['-C', repo, ...filterLookup], {
    encoding: 'utf8',
    env: withSettings(inertSettings, process.env),
  });
  return spawnSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    input: options.input,
    maxBuffer: 64 * 1024 * 1024,
    env: settingsFor(lookup.status === 0 ? lookup.stdout : '', { ...process.env, ...options.env }),
  });
}

/** Whether `git args` succeeds in `repo` (run as gitSync runs it). */
export function gitSucceeds(repo: string, args: string[]): boolean {
  return gitSync(repo, args).status === 0;
}

/** Runs `git args` in `repo` with the repository's executable settings off; its standard output, or a rejection. */
export async function gitOutput(
  repo: string,
  args: string[],
  options: { timeoutMs?: number; maxBuffer?: number } = {},
): Promise<string> {
  const run = promisify(execFile);
  const filters = await run('git', ['-C', repo, ...filterLookup], { env: withSettings(inertSettings, process.env) })
    .then(({ stdout }) => stdout)
    .catch(() => '');
  const { stdout } = await run('git', ['-C', repo, ...args], {
    maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
    timeout: options.timeoutMs ?? 0,
    env: settingsFor(filters, process.env),
  });
  return stdout;
}

/** The environment with every inert setting, and every filter driver named in `filterKeys` (NUL-separated) emptied. */
function settingsFor(filterKeys: string, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const drivers = new Set<string>();
  for (const key of filterKeys.split('\0')) {
    const name = key.slice('filter.'.length, key.lastIndexOf('.'));
    if (key.startsWith('filter.') && name) drivers.add(name);
  }
  const emptied = [...drivers].flatMap((name): Setting[] => [
    [`filter.${name}.clean`, ''],
    [`filter.${name}.smudge`, ''],
    [`filter.${name}.process`, ''],
    [`filter.${name}.required`, 'false'],
  ]);
  return withSettings([...inertSettings, ...emptied], base);
}

/** Settings added after any the user's environment already gives (theirs are trusted and kept). */
function withSettings(settings: Setting[], base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const first = Number(base.GIT_CONFIG_COUNT) || 0;
  const env: NodeJS.ProcessEnv = { ...base, GIT_CONFIG_COUNT: String(first + settings.length) };
  settings.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${first + index}`] = key;
    env[`GIT_CONFIG_VALUE_${first + index}`] = value;
  });
  return env;
}
