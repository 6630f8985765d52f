// The content store in a folder: blobs/<2 hex>/<id> and trees/<digest>.json, each written to a
// temporary file and renamed, so a reader never sees half a file. Shared by the hosts only if
// they share the folder (one machine, or a shared volume).
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { checkDigest, type Tree } from '../workspace/tree.js';
import { verifiedBlob, verifiedTree, type ContentStore } from './contentStore.js';

export class FolderStore implements ContentStore {
  constructor(readonly root: string) {}

  /** The file that holds a blob (also where a person finds a large patch). */
  blobPath(blob: string): string {
    checkDigest(blob, 'blob id');
    return join(this.root, 'blobs', blob.slice(0, 2), blob);
  }

  whereIs(blob: string): string {
    return this.blobPath(blob);
  }

  private treePath(digest: string): string {
    return join(this.root, 'trees', `${checkDigest(digest, 'tree digest')}.json`);
  }

  async putBlob(blob: string, content: Buffer): Promise<void> {
    const path = this.blobPath(blob);
    if (await exists(path)) return;
    await writeAtomically(path, content);
  }

  async getBlob(blob: string): Promise<Buffer> {
    return verifiedBlob(this, blob, await readFile(this.blobPath(blob)));
  }

  async putTree(tree: Tree): Promise<void> {
    const path = this.treePath(tree.digest);
    if (await exists(path)) return;
    await writeAtomically(path, Buffer.from(JSON.stringify(tree)));
  }

  async getTree(digest: string): Promise<Tree> {
    return verifiedTree(this, digest, await readFile(this.treePath(digest), 'utf8'));
  }

  describe(): string {
    return `folder ${this.root}`;
  }

  async close(): Promise<void> {}
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
