// The run's patch: the difference between the original snapshot and the snapshot plus the
// mutation log, as a git-style unified diff that `git apply` accepts. It is computed from the
// content store alone, so any worker can produce it, even after the sandbox is gone.
import { readFile } from 'node:fs/promises';
import { structuredPatch } from 'diff';
import { patchPreview, patchPreviewBytes, reportPatchBytes } from '../agent/payloads.js';
import type { PatchForReport } from '../agent/report.js';
import type { Mutation, PathState } from '../agent/workspace.js';
import type { ContentStore } from './store/contentStore.js';
import { isBinary } from './fileTools.js';
import { sha256 } from './tree.js';

export async function patchFor(store: ContentStore, snapshotId: string, mutations: Mutation[]): Promise<string> {
  const snapshot = await store.getTree(snapshotId);
  const original = new Map<string, PathState>(
    snapshot.entries.map((entry) => [
      entry.path,
      entry.kind === 'file'
        ? { kind: 'file', blob: entry.blob, executable: entry.executable }
        : { kind: 'symlink', target: entry.target },
    ]),
  );
  const final = new Map(original);
  for (const mutation of mutations) {
    if (mutation.after === null) final.delete(mutation.path);
    else final.set(mutation.path, mutation.after);
  }
  const paths = [...new Set([...original.keys(), ...final.keys()])].sort();
  const parts: string[] = [];
  for (const path of paths) {
    const before = original.get(path) ?? null;
    const after = final.get(path) ?? null;
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    parts.push(await fileDiff(store, path, before, after));
  }
  return parts.join('');
}

/**
 * The patch as the report carries it: whole when it is small enough; otherwise stored in the
 * content store (any worker and the CLI on this machine can read it back) and shown in part.
 */
export async function patchForReport(store: ContentStore, patch: string): Promise<PatchForReport> {
  const content = Buffer.from(patch, 'utf8');
  if (content.length <= reportPatchBytes) return { patch, fullPatch: null };
  const blob = sha256(content);
  await store.putBlob(blob, content);
  const file = store.whereIs(blob);
  return {
    patch: patchPreview(
      patch,
      patchPreviewBytes,
      `\`durable-debugger result <workflow id> --patch\` prints all of it (content-store blob ${blob}, ${file})`,
    ),
    fullPatch: { blob, bytes: content.length, file },
  };
}

/** The whole patch of a report: read back from the content store when the report holds only its beginning. */
export async function fullPatchOf(store: ContentStore, report: PatchForReport): Promise<string> {
  const stored = report.fullPatch;
  if (!stored) return report.patch;
  // This store first; then the file the report names (a folder store this process is not configured with).
  const reads = [() => store.getBlob(stored.blob), () => readFile(stored.file)];
  for (const read of reads) {
    const content = await read().catch(() => null);
    if (content && sha256(content) === stored.blob) return content.toString('utf8');
  }
  throw new Error(
    `The whole patch (${stored.bytes} bytes) is kept in the content store of the worker that ran this run (${stored.file}), which cannot be read here. ` +
      'Run this command on that machine, or point DURABLE_DEBUGGER_STORE (a folder or a postgres:// URL, or DURABLE_DEBUGGER_HOME) at that content store.',
  );
}

async function contentOf(store: ContentStore, state: PathState): Promise<Buffer | null> {
  if (state === null) return null;
  if (state.kind === 'symlink') return Buffer.from(state.target);
  return store.getBlob(state.blob);
}

function modeOf(state: Exclude<PathState, null>): string {
  if (state.kind === 'symlink') return '120000';
  return state.executable ? '100755' : '100644';
}

async function fileDiff(store: ContentStore, path: string, before: PathState, after: PathState): Promise<string> {
  const header = [`diff --git a/${path} b/${path}`];
  if (before === null && after !== null) header.push(`new file mode ${modeOf(after)}`);
  else if (after === null && before !== null) header.push(`deleted file mode ${modeOf(before)}`);
  else if (before && after && modeOf(before) !== modeOf(after))
    header.push(`old mode ${modeOf(before)}`, `new mode ${modeOf(after)}`);

  const oldContent = await contentOf(store, before);
  const newContent = await contentOf(store, after);
  if ((oldContent && isBinary(oldContent)) || (newContent && isBinary(newContent))) {
    return `${header.join('\n')}\nBinary files ${before ? `a/${path}` : '/dev/null'} and ${after ? `b/${path}` : '/dev/null'} differ\n`;
  }
  const oldText = oldContent?.toString('utf8') ?? '';
  const newText = newContent?.toString('utf8') ?? '';
  if (oldText === newText) return `${header.join('\n')}\n`;
  const patch = structuredPatch(`a/${path}`, `b/${path}`, oldText, newText, '', '', { context: 3 });
  const lines = [...header, `--- ${before ? `a/${path}` : '/dev/null'}`, `+++ ${after ? `b/${path}` : '/dev/null'}`];
  for (const hunk of patch.hunks) {
    const oldRange = hunk.oldLines === 1 ? `${hunk.oldStart}` : `${hunk.oldStart},${hunk.oldLines}`;
    const newRange = hunk.newLines === 1 ? `${hunk.newStart}` : `${hunk.newStart},${hunk.newLines}`;
    lines.push(`@@ -${oldRange} +${newRange} @@`, ...hunk.lines);
  }
  return `${lines.join('\n')}\n`;
}
