// The content-addressed store that every worker host reads and writes: file contents (blobs)
// and snapshot trees, from which any host rebuilds a run's workspace, and large patches.
// Entries are named by their SHA-256 and never change once written, so concurrent writers and
// readers need no locks. Two backends: a folder (the embedded default; every host must see the
// same folder) and PostgreSQL (hosts that share nothing but the network).
import type { Tree } from '../tree.js';

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
