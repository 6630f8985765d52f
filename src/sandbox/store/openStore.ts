// Opens the content store a worker is configured with: a folder, or a PostgreSQL database.
import type { ContentStore } from './contentStore.js';
import { FolderStore } from './folderStore.js';
import { PostgresStore } from './postgresStore.js';

/** DURABLE_DEBUGGER_STORE: a folder, or a `postgres://` (`postgresql://`) connection URL. */
export type ContentStoreLocation = { kind: 'folder'; root: string } | { kind: 'postgres'; url: string };

export function openContentStore(location: ContentStoreLocation): ContentStore {
  return location.kind === 'folder' ? new FolderStore(location.root) : new PostgresStore(location.url);
}
