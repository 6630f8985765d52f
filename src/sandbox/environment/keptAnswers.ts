// Answers that depend only on what names them (an image's id, the hash of what decided a probe), kept
// per host as files of a folder of the worker's own: a worker that starts finds what earlier ones
// learnt instead of starting a container to learn it again.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class KeptAnswers {
  constructor(private readonly folder: string) {}

  /** The answer kept under `key` (empty for a mere "yes"), or null. */
  async get(key: string): Promise<string | null> {
    return readFile(join(this.folder, key), 'utf8').catch(() => null);
  }

  /** Keeps `answer` under `key`, whole or not at all (another worker may read it meanwhile). */
  async keep(key: string, answer = ''): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    const partial = join(this.folder, `${key}.${process.pid}.partial`);
    await writeFile(partial, answer, { mode: 0o600 });
    await rename(partial, join(this.folder, key));
  }
}
