// The content-addressed store shared by all workers: file contents (blobs) and snapshot trees.
// Entries never change once written, so concurrent writers and readers need no locks.
import { mkdir, readFile, rename, writeFile, access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Tree } from './tree.js';

export class ContentStore {
  constructor(readonly root: string) {}

  /** The file that holds a blob (also where a person finds a large patch). */
  blobPath(blob: string): string {
    if (!/^[0-9a-f]{64}$/.test(blob)) throw new Error(`not a blob id: ${blob}`);
    return join(this.root, 'blobs', blob.slice(0, 2), blob);
  }

  private treePath(digest: string): string {
    if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error(`not a tree digest: ${digest}`);
    return join(this.root, 'trees', `${digest}.json`);
  }

  async putBlob(blob: string, content: Buffer): Promise<void> {
    const path = this.blobPath(blob);
    if (await exists(path)) return;
    await writeAtomically(path, content);
  }

  async getBlob(blob: string): Promise<Buffer> {
    return readFile(this.blobPath(blob));
  }

  async putTree(tree: Tree): Promise<void> {
    const path = this.treePath(tree.digest);
    if (await exists(path)) return;
    await writeAtomically(path, Buffer.from(JSON.stringify(tree)));
  }

  async getTree(digest: string): Promise<Tree> {
    return JSON.parse(await readFile(this.treePath(digest), 'utf8')) as Tree;
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function writeAtomically(path: string, content: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}
