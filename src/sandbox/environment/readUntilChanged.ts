// What a host tool prints of its settings (`pip config list`, `go env`) costs a process, and every
// environment build reads it, a cached one too. One read is kept until what the tool reads has
// changed (its files' times and sizes, its variables, the tool itself), and a read under way is shared.
import { statSync } from 'node:fs';

export class ReadUntilChanged<T> {
  private last: { fingerprint: string; value: Promise<T> } | null = null;

  /** The kept read when `fingerprint` is the one it was made under, else a new `read()`. */
  get(fingerprint: string, read: () => Promise<T>): Promise<T> {
    if (this.last?.fingerprint !== fingerprint) this.last = { fingerprint, value: read() };
    return this.last.value;
  }
}

/** What a fingerprint keeps of a file: its path, and its time and size when it is a file. */
export function fileStamp(path: string): [string] | [string, number, number] {
  try {
    const stats = statSync(path);
    return stats.isFile() ? [path, stats.mtimeMs, stats.size] : [path];
  } catch {
    return [path];
  }
}

/** The variables `keep` names, in a fixed order. */
export function variablesOf(
  env: NodeJS.ProcessEnv,
  keep: (name: string) => boolean,
): Array<[string, string | undefined]> {
  return Object.entries(env)
    .filter(([name]) => keep(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
