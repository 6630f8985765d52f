// What durable-debugger keeps is private to its user: config.json may hold an API key, the data
// home holds every transcript (temporal.db), whole copies of repositories (the store) and patches.
// Our processes create it all with umask 077 (src/cli/main.ts); `doctor` warns on what other
// users can read, made by an earlier version or by hand.
import { lstat } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { CheckResult } from './parts.js';
import { shellWord } from '../sandbox/shellQuote.js';

/** Folders 0700 and files 0600: what we create, whatever the user's umask. */
export const privateUmask = 0o077;

/** Warns on config.json and the data folders when a user other than their owner can read them. */
export async function checkPrivateData(config: Config): Promise<CheckResult> {
  const name = 'private data';
  const places = [
    { path: config.configFile, folder: false, what: 'config.json (it may hold an API key)' },
    { path: config.home, folder: true, what: 'the data home' },
    ...(config.contentStore.kind === 'folder'
      ? [{ path: config.contentStore.root, folder: true, what: 'the content store' }]
      : []),
    { path: config.workspaceRoot, folder: true, what: 'the workspaces' },
  ];
  const open: Array<{ path: string; folder: boolean; what: string; mode: number }> = [];
  for (const place of places) {
    const stats = await lstat(place.path).catch(() => null);
    if (stats && (stats.mode & 0o077) !== 0) open.push({ ...place, mode: stats.mode & 0o777 });
  }
  if (open.length === 0)
    return { name, status: 'ok', detail: 'config.json and the data folders are private to their owner' };
  return {
    name,
    status: 'warn',
    detail: open
      .map(
        (place) =>
          `${place.what} ${place.path} is open to other users (mode ${place.mode.toString(8).padStart(4, '0')})`,
      )
      .join('; '),
    fix: open.map((place) => `chmod ${place.folder ? '700' : '600'} ${shellWord(place.path)}`).join(' && '),
  };
}
