// The repository files that decide the environment, read from the repository's snapshot in the
// content store, never from the repository folder: a symlink is what the snapshot recorded (a link,
// never followed out of the repository), a device or FIFO is not in it, and every file has a size
// known before it is read. The snapshot step and the environment build read them here alike.
import { posix } from 'node:path';
import type { TreeEntry } from '../workspace/tree.js';
import { manifestCandidates } from './plan.js';
import { EnvironmentConfigError } from './planTypes.js';

/** Lockfiles, committed package-manager releases and patches are large in real repositories; the other manifests are not. */
export const manifestSizeLimits = { manifest: 1024 * 1024, lockfile: 64 * 1024 * 1024 };

const lockfiles = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lock',
  'bun.lockb',
  'uv.lock',
  'poetry.lock',
]);

/** Manifests that are not text (Bun's lockfile before 1.2): read as base64, and written back as their bytes for the build. */
const binaryManifests = new Set(['bun.lockb']);

/** A plan's input file as the build gets it: a binary manifest's bytes, any other file's text. */
export function inputFileContent(path: string, text: string): string | Buffer {
  return binaryManifests.has(path) ? Buffer.from(text, 'base64') : text;
}

function sizeLimitOf(path: string): number {
  return lockfiles.has(path) || path.startsWith('.yarn/') || path.endsWith('.patch')
    ? manifestSizeLimits.lockfile
    : manifestSizeLimits.manifest;
}

/** How many links a manifest's symlink may go through, inside the repository, to reach its file. */
const maxLinkHops = 8;

/**
 * The file entry `path` names: itself, or through symlinks whose targets stay inside the repository.
 * Null for a link that leaves the repository (absolute, or `..` above its root), dangles, or loops.
 */
export function fileEntryOf(
  path: string,
  byPath: ReadonlyMap<string, TreeEntry>,
): Extract<TreeEntry, { kind: 'file' }> | null {
  let current = path;
  for (let hop = 0; hop <= maxLinkHops; hop++) {
    const entry = byPath.get(current);
    if (!entry) return null;
    if (entry.kind === 'file') return entry;
    if (posix.isAbsolute(entry.target)) return null;
    const next = posix.normalize(posix.join(posix.dirname(current), entry.target));
    if (next === '..' || next.startsWith('../') || next === '.') return null;
    current = next;
  }
  return null;
}

/**
 * The manifests a snapshot has (path → text; a binary one's base64), for planEnvironment. A manifest whose link leaves the
 * repository is left out, as if absent; one above its size limit is refused, naming the file and its size.
 */
export async function readManifests(
  store: { getBlob(blob: string): Promise<Buffer> },
  entries: readonly TreeEntry[],
): Promise<Record<string, string>> {
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));
  const manifests: Record<string, string> = {};
  for (const path of manifestCandidates(entries.map((entry) => entry.path))) {
    const entry = fileEntryOf(path, byPath);
    if (!entry) continue;
    const limit = sizeLimitOf(path);
    if (entry.size > limit)
      throw new EnvironmentConfigError(
        `${path} is ${megabytes(entry.size)}, more than the ${megabytes(limit)} durable-debugger reads of such a file`,
      );
    manifests[path] = (await store.getBlob(entry.blob)).toString(binaryManifests.has(path) ? 'base64' : 'utf8');
  }
  return manifests;
}

/** How much of a snapshot's sources a warm-up reads (planTypes' SourcesWarmup): more is left unread, the warm-up being a head start only. */
export const sourceReadLimits = { files: 20_000, fileBytes: 4 * 1024 * 1024, totalBytes: 256 * 1024 * 1024 };

/** The snapshot's files `reads` picks (path → text): files only, no link followed, within sourceReadLimits. */
export async function readSourceFiles(
  store: { getBlob(blob: string): Promise<Buffer> },
  entries: readonly TreeEntry[],
  reads: (path: string) => boolean,
): Promise<Record<string, string>> {
  const sources: Record<string, string> = {};
  let files = 0;
  let bytes = 0;
  for (const entry of entries) {
    if (entry.kind !== 'file' || !reads(entry.path) || entry.size > sourceReadLimits.fileBytes) continue;
    if (files === sourceReadLimits.files || bytes + entry.size > sourceReadLimits.totalBytes) break;
    sources[entry.path] = (await store.getBlob(entry.blob)).toString('utf8');
    files += 1;
    bytes += entry.size;
  }
  return sources;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
