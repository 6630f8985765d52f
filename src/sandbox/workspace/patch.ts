// The run's patch: the difference between the original snapshot and the snapshot plus the
// mutation log, as a git patch that `git apply` accepts. It is computed from the content store
// alone, so any worker can produce it, even after the sandbox is gone. UTF-8 text is diffed as
// text; any other content (a binary file, text in Latin-1 or UTF-16) is a git binary patch, which
// gives back its exact bytes, after the decoded text's diff in comment lines for people to read.
// What test runs and commands left behind in files the agent never edited is left out.
import { readFile } from 'node:fs/promises';
import { structuredPatch } from 'diff';
import { diffLines } from '../../agent/parallelAttempts.js';
import { patchPreview, patchPreviewBytes, reportPatchBytes } from '../../agent/payloads.js';
import type { PatchForReport } from '../../agent/report.js';
import type { Mutation, PathState, WorkspaceLog } from '../../agent/workspace.js';
import type { ContentStore } from '../store/contentStore.js';
import { gitBinaryPatch, gitBlobId, noBlob } from './gitBinaryPatch.js';
import { decodeText, describeEncoding, isPlainUtf8, utf8TextOf, type DecodedText } from './textEncoding.js';
import { sha256, stateOf } from './tree.js';

export interface PatchOptions {
  /** Keep every change, also in files the agent never edited (test outputs, binary files a command wrote). */
  allChanges?: boolean;
}

export interface ComputedPatch {
  patch: string;
  /** Paths the workspace changed that the patch leaves out (see isByProduct). */
  leftOut: string[];
}

export async function computePatch(
  store: ContentStore,
  snapshotId: string,
  mutations: Mutation[],
  options: PatchOptions = {},
): Promise<ComputedPatch> {
  const parts: string[] = [];
  const leftOut: string[] = [];
  for await (const change of changedPaths(store, snapshotId, mutations)) {
    if (change.undone || (!options.allChanges && change.byProduct)) {
      leftOut.push(change.path);
      continue;
    }
    parts.push(fileDiff(change.path, change.before, change.after));
  }
  return { patch: parts.join(''), leftOut };
}

/**
 * The mutations that give each path the patch leaves out its snapshot state back: what a fresh
 * sandbox for the verification undoes, so that the suite runs on what the patch holds.
 */
export async function undoOfByProducts(
  store: ContentStore,
  log: Pick<WorkspaceLog, 'snapshotId' | 'mutations'>,
): Promise<Mutation[]> {
  const undo: Mutation[] = [];
  for await (const change of changedPaths(store, log.snapshotId, log.mutations)) {
    if (change.byProduct)
      undo.push({ path: change.path, after: change.before.state, toolUseId: 'verification', madeBy: 'verification' });
  }
  return undo;
}

interface PathChange {
  path: string;
  before: Side;
  after: Side;
  /** Left out of the patch unless it keeps every change (see isByProduct). */
  byProduct: boolean;
  /** Changed by commands or test runs, then undone for a verification: the same as in the snapshot again. */
  undone: boolean;
}

/** Every path the log leaves other than in the snapshot, in path order, and those it changed and then undid. */
async function* changedPaths(
  store: ContentStore,
  snapshotId: string,
  mutations: Mutation[],
): AsyncGenerator<PathChange> {
  const snapshot = await store.getTree(snapshotId);
  const original = new Map<string, PathState>(snapshot.entries.map((entry) => [entry.path, stateOf(entry)]));
  const final = new Map(original);
  const madeBy = new Map<string, Set<Maker>>();
  for (const mutation of mutations) {
    if (mutation.after === null) final.delete(mutation.path);
    else final.set(mutation.path, mutation.after);
    const makers = madeBy.get(mutation.path) ?? new Set<Maker>();
    makers.add(mutation.madeBy ?? 'file_tool');
    madeBy.set(mutation.path, makers);
  }
  const paths = [...new Set([...original.keys(), ...final.keys(), ...madeBy.keys()])].sort();
  for (const path of paths) {
    const before = original.get(path) ?? null;
    const after = final.get(path) ?? null;
    const makers = madeBy.get(path);
    if (JSON.stringify(before) === JSON.stringify(after)) {
      if (makers?.has('verification')) {
        const side = { state: before, content: null };
        yield { path, before: side, after: side, byProduct: false, undone: true };
      }
      continue;
    }
    const oldContent = await contentOf(store, before);
    const newContent = await contentOf(store, after);
    yield {
      path,
      before: { state: before, content: oldContent },
      after: { state: after, content: newContent },
      byProduct: isByProduct(makers, after, newContent),
      undone: false,
    };
  }
}

/** The patch alone (see computePatch). */
export async function patchFor(
  store: ContentStore,
  snapshotId: string,
  mutations: Mutation[],
  options: PatchOptions = {},
): Promise<string> {
  return (await computePatch(store, snapshotId, mutations, options)).patch;
}

type Maker = NonNullable<Mutation['madeBy']>;

/**
 * A change the agent never made itself: a path no file tool touched that only test runs changed
 * (a .coverage, a SQLite database, a junit.xml), or that a command left as a binary file.
 */
function isByProduct(makers: Set<Maker> | undefined, after: PathState, content: Buffer | null): boolean {
  if (!makers || makers.has('file_tool')) return false;
  if (!makers.has('command')) return true;
  return after?.kind === 'file' && content !== null && decodeText(content) === null;
}

/**
 * The patch as the report carries it: whole when it is small enough; otherwise stored in the
 * content store (any worker and the CLI on this machine can read it back) and shown in part.
 */
export async function patchForReport(store: ContentStore, computed: ComputedPatch | string): Promise<PatchForReport> {
  const { patch, leftOut } = typeof computed === 'string' ? { patch: computed, leftOut: [] } : computed;
  const left = leftOut.length > 0 ? { leftOut } : {};
  const content = Buffer.from(patch, 'utf8');
  if (content.length <= reportPatchBytes) return { patch, fullPatch: null, ...left };
  const blob = sha256(content);
  await store.putBlob(blob, content);
  const file = store.whereIs(blob);
  return {
    patch: patchPreview(
      patch,
      patchPreviewBytes,
      `\`durable-debugger result <workflow id> --patch\` prints all of it (content-store blob ${blob}, ${file})`,
    ),
    fullPatch: { blob, bytes: content.length, file, changedLines: diffLines(patch) },
    ...left,
  };
}

/** The whole patch could not be read back (its content store is elsewhere, or its blob is damaged). */
export class PatchUnavailableError extends Error {}

/** The whole patch of a report, read back from the content store (and checked) when the report holds only its beginning. */
export async function fullPatchOf(store: ContentStore, report: PatchForReport): Promise<string> {
  const stored = report.fullPatch;
  if (!stored) return report.patch;
  // This store first; then the file the report names (a folder store this process is not configured with).
  const reads = [() => store.getBlob(stored.blob), () => readFile(stored.file)];
  let damaged = false;
  for (const read of reads) {
    const content = await read().catch(() => null);
    if (content && sha256(content) === stored.blob) return content.toString('utf8');
    if (content) damaged = true;
  }
  if (damaged) {
    throw new PatchUnavailableError(
      `The whole patch (${stored.bytes} bytes, content-store blob ${stored.blob}) is damaged: its content no longer has the SHA-256 it is stored under. ` +
        'Run the repository again to get a new patch.',
    );
  }
  throw new PatchUnavailableError(
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

interface Side {
  state: PathState;
  content: Buffer | null;
}

function fileDiff(path: string, before: Side, after: Side): string {
  const header = [`diff --git ${quotedPath('a/', path)} ${quotedPath('b/', path)}`];
  if (!before.state && after.state) header.push(`new file mode ${modeOf(after.state)}`);
  else if (!after.state && before.state) header.push(`deleted file mode ${modeOf(before.state)}`);
  else if (before.state && after.state && modeOf(before.state) !== modeOf(after.state))
    header.push(`old mode ${modeOf(before.state)}`, `new mode ${modeOf(after.state)}`);

  const oldString = utf8Of(before);
  const newString = utf8Of(after);
  if (oldString === undefined || newString === undefined) {
    // git apply checks a binary patch against the file's blob id: the index line is required.
    const ids = `index ${before.content ? gitBlobId(before.content) : noBlob}..${after.content ? gitBlobId(after.content) : noBlob}`;
    const sameMode = before.state && after.state && modeOf(before.state) === modeOf(after.state);
    return (
      readableView(path, decodedOf(before), decodedOf(after)) +
      `${[...header, sameMode ? `${ids} ${modeOf(after.state as Exclude<PathState, null>)}` : ids].join('\n')}\n` +
      gitBinaryPatch(before.content, after.content)
    );
  }
  if (oldString === newString) return `${header.join('\n')}\n`;
  const lines = [
    ...header,
    `--- ${before.state ? quotedPath('a/', path) : '/dev/null'}`,
    `+++ ${after.state ? quotedPath('b/', path) : '/dev/null'}`,
    ...hunks(oldString, newString),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A side's bytes as the text of a unified diff: '' when there is no file; undefined unless its
 * bytes are UTF-8 (whatever the file declares: an ASCII file in Latin-1 is diffed as text), which
 * then go into the patch as they are, a byte-order mark included.
 */
function utf8Of(side: Side): string | undefined {
  if (!side.content) return '';
  // A symlink's target is its content: shown as text, whatever its bytes.
  if (side.state?.kind === 'symlink') return side.content.toString('utf8');
  return utf8TextOf(side.content) ?? undefined;
}

/** A side's text in its own encoding; null when there is no file, undefined when it is binary. */
function decodedOf(side: Side): DecodedText | null | undefined {
  return side.content ? (decodeText(side.content) ?? undefined) : null;
}

function hunks(oldText: string, newText: string): string[] {
  const lines: string[] = [];
  for (const hunk of structuredPatch('a', 'b', oldText, newText, '', '', { context: 3 }).hunks) {
    const oldRange = hunk.oldLines === 1 ? `${hunk.oldStart}` : `${hunk.oldStart},${hunk.oldLines}`;
    const newRange = hunk.newLines === 1 ? `${hunk.newStart}` : `${hunk.newStart},${hunk.newLines}`;
    lines.push(`@@ -${oldRange} +${newRange} @@`, ...hunk.lines);
  }
  return lines;
}

/**
 * Text in another encoding (Latin-1, UTF-16, …): its change decoded, as comment lines before
 * the binary patch (git apply and patch skip lines that start with "#" between files).
 */
function readableView(
  path: string,
  oldText: DecodedText | null | undefined,
  newText: DecodedText | null | undefined,
): string {
  if (oldText === undefined || newText === undefined) return '';
  const encoding = (newText ?? oldText)?.encoding;
  if (!encoding || isPlainUtf8(encoding)) return '';
  const body = hunks(oldText?.text ?? '', newText?.text ?? '');
  const lines = [
    `${quotedPath('', path)}: ${describeEncoding(encoding)} text, its change shown decoded; git apply uses the binary patch below`,
    ...body,
  ];
  return lines.map((line) => `# ${line.replace(/\r$/, '')}\n`).join('');
}

/**
 * A path as git writes it in a patch with core.quotePath on (its default): as it is when every
 * byte is printable ASCII other than `"` and `\`; otherwise C-quoted, its UTF-8 bytes escaped
 * (\n, \t, \", \\, … and three octal digits for other control and non-ASCII bytes). No
 * path can then end a line of the patch, in its header or in a comment line.
 */
function quotedPath(prefix: string, path: string): string {
  const bytes = Buffer.from(`${prefix}${path}`, 'utf8');
  if (bytes.every((byte) => byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c)) return bytes.toString();
  let quoted = '';
  for (const byte of bytes) {
    const escape = cEscapes[byte];
    if (escape) quoted += `\\${escape}`;
    else if (byte < 0x20 || byte >= 0x7f) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += String.fromCharCode(byte);
  }
  return `"${quoted}"`;
}

/** git's quote_c_style escapes, by byte. */
const cEscapes: Record<number, string> = {
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x22: '"',
  0x5c: '\\',
};
