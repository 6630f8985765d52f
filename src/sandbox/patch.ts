// The run's patch: the difference between the original snapshot and the snapshot plus the
// mutation log, as a git-style unified diff that `git apply` accepts. It is computed from the
// content store alone, so any worker can produce it, even after the sandbox is gone.
import { structuredPatch } from 'diff';
import type { Mutation, PathState } from '../agent/workspace.js';
import type { ContentStore } from './store.js';
import { isBinary } from './fileTools.js';

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
  else if (before && after && modeOf(before) !== modeOf(after)) header.push(`old mode ${modeOf(before)}`, `new mode ${modeOf(after)}`);

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
