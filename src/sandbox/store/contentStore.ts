// The content-addressed store that every worker host reads and writes: file contents (blobs)
// and snapshot trees, from which any host rebuilds a run's workspace, and large patches.
// Entries are named by their SHA-256 and never change once written, so concurrent writers and
// readers need no locks. Two backends: a folder (the embedded default; every host must see the
// same folder) and PostgreSQL (hosts that share nothing but the network).
import { sha256, treeDigest, type Tree } from '../workspace/tree.js';

export interface ContentStore {
  putBlob(blob: string, content: Buffer): Promise<void>;
  getBlob(blob: string): Promise<Buffer>;
  putTree(tree: Tree): Promise<void>;
  getTree(digest: string): Promise<Tree>;
  /** Where a person finds a blob: its file, or the database and table that hold it (never a password). */
  whereIs(blob: string): string;
  /** The store, as the worker announces it: a folder, or a database URL without its password. */
  describe(): string;
  /** Lets go of connections (a folder has none). */
  close(): Promise<void>;
}

/**
 * An entry whose content does not hash to the name it is stored under (a damaged disk, a file or
 * row replaced by hand): it is never used, since it would become the user's code silently.
 */
export class DamagedContentError extends Error {}

/** The blob's content, once it hashes to its id; otherwise an error naming the blob and where it is. */
export function verifiedBlob(store: ContentStore, blob: string, content: Buffer): Buffer {
  const actual = sha256(content);
  if (actual === blob) return content;
  throw new DamagedContentError(
    `Blob ${blob} in the content store is damaged: its ${content.length} bytes hash to ${actual}, not to its id, so it is not used. ` +
      `Delete it (${store.whereIs(blob)}) so that the next snapshot of a repository with that content stores it again, or restore the store from a backup.`,
  );
}

/** The tree stored under `digest`, once its entries hash to that digest; otherwise an error naming the tree. */
export function verifiedTree(store: ContentStore, digest: string, text: string): Tree {
  let tree: Tree | null = null;
  try {
    tree = JSON.parse(text) as Tree;
  } catch {
    // not JSON: damaged as well
  }
  const actual = Array.isArray(tree?.entries) ? treeDigest(tree.entries) : null;
  if (tree && actual === digest && tree.digest === digest) return tree;
  throw new DamagedContentError(
    `Snapshot tree ${digest} in the content store (${store.describe()}) is damaged: ${actual ? `its entries hash to ${actual}` : 'it is not a tree'}, so it is not used. ` +
      'Start the run again from the repository (a new snapshot stores its tree again), or restore the store from a backup.',
  );
}
