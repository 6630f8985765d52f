// The file tools (list, read, edit, write), working on the workspace folder on the host.
// Every path goes through resolveInsideWorkspace first, and no process of the sandbox runs
// meanwhile (see quiesce.ts), so what it checked still holds when the path is used.
// Failures are messages for the model.
import { lstat, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { ignoredFolders } from './tree.js';
import { dominantLineEnding, findIgnoringLineEndings, hasCrlf, linesOf, withLineEndingsOf } from './lineEndings.js';
import { moveMtimePast, statBeforeWrite } from './mtimePast.js';
import { PathRefusedError, resolveInsideWorkspace } from './paths.js';
import {
  decodeText,
  describeEncoding,
  encodeText,
  isPlainUtf8,
  UnencodableTextError,
  utf8,
  type TextEncoding,
} from './textEncoding.js';

export class ToolInputError extends Error {}

const maxListedEntries = 500;
const maxReadBytes = 2_000_000;
const maxReadLines = 800;

/** Whether a path (relative to the workspace) is ignored by a .gitignore rule. */
export type IgnoredCheck = (path: string, isFolder: boolean) => Promise<boolean>;

/** Ignored entries are shown, marked, but ignored folders are not opened: they are build artefacts, not the code. */
export async function listFiles(
  workspace: string,
  path: string | undefined,
  isIgnored?: IgnoredCheck,
): Promise<string> {
  const { relative, absolute } = await resolveInsideWorkspace(workspace, path ?? '');
  const stats = await lstat(absolute).catch(() => null);
  if (!stats) throw new ToolInputError(`"${relative || '.'}" does not exist.`);
  if (!stats.isDirectory())
    throw new ToolInputError(`"${relative}" is a file, not a folder. Use read_file to read it.`);
  const lines: string[] = [];
  let omitted = 0;
  async function visit(folder: string, depth: number): Promise<void> {
    const dirents = (await readdir(posix.join(absolute, folder), { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const dirent of dirents) {
      if (ignoredFolders.has(dirent.name)) continue;
      const child = folder ? `${folder}/${dirent.name}` : dirent.name;
      if (lines.length >= maxListedEntries) {
        omitted++;
        continue;
      }
      const indent = '  '.repeat(depth);
      const ignored = (await isIgnored?.(relative ? `${relative}/${child}` : child, dirent.isDirectory())) ?? false;
      if (dirent.isDirectory()) {
        if (ignored) {
          lines.push(`${indent}${dirent.name}/ (ignored by .gitignore; not listed)`);
          continue;
        }
        lines.push(`${indent}${dirent.name}/`);
        await visit(child, depth + 1);
      } else if (dirent.isSymbolicLink()) {
        lines.push(`${indent}${dirent.name} (symlink${ignored ? '; ignored by .gitignore' : ''})`);
      } else {
        const size = (await lstat(posix.join(absolute, child))).size;
        lines.push(`${indent}${dirent.name} (${formatSize(size)}${ignored ? '; ignored by .gitignore' : ''})`);
      }
    }
  }
  await visit('', 0);
  const header = `${relative || '.'}/`;
  if (lines.length === 0) return `${header}\n(empty)`;
  const footer = omitted ? `\n[${omitted} more entries not shown; list a subfolder to see them]` : '';
  return `${header}\n${lines.join('\n')}${footer}`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

interface TextFile {
  relative: string;
  absolute: string;
  /** The file's bytes, and their text in the file's own encoding. */
  content: Buffer;
  text: string;
  encoding: TextEncoding;
}

async function readTextFile(workspace: string, path: string): Promise<TextFile> {
  const { relative, absolute } = await resolveInsideWorkspace(workspace, path);
  // stat follows a symlink, which resolveInsideWorkspace has checked stays inside.
  const stats = await stat(absolute).catch(() => null);
  if (!stats) throw new ToolInputError(`"${relative}" does not exist. Use list_files to see the files.`);
  if (stats.isDirectory()) throw new ToolInputError(`"${relative}" is a folder. Use list_files to list it.`);
  if (!stats.isFile()) throw notRegularFile(relative);
  if (stats.size > maxReadBytes) {
    throw new ToolInputError(
      `"${relative}" is ${formatSize(stats.size)}, too large to read (limit ${formatSize(maxReadBytes)}).`,
    );
  }
  const content = await readFile(absolute);
  const decoded = decodeText(content);
  if (!decoded)
    throw new ToolInputError(
      `"${relative}" is a binary file (not text in any encoding), so it cannot be read or edited as text.`,
    );
  return { relative, absolute, content, ...decoded };
}

export async function readTextForTool(
  workspace: string,
  input: { path: string; start_line?: number; end_line?: number },
): Promise<string> {
  const { relative, text, encoding } = await readTextFile(workspace, input.path);
  // Shown without `\r`, so that what the model copies into an edit matches (see lineEndings.ts).
  const lines = linesOf(text);
  const start = input.start_line ?? 1;
  if (start > Math.max(lines.length, 1)) {
    throw new ToolInputError(`"${relative}" has ${lines.length} lines; start_line ${start} is past its end.`);
  }
  const requestedEnd = Math.min(input.end_line ?? lines.length, lines.length);
  if (requestedEnd < start) throw new ToolInputError(`end_line (${input.end_line}) is before start_line (${start}).`);
  const end = Math.min(requestedEnd, start + maxReadLines - 1);
  const width = String(end).length;
  const numbered = lines
    .slice(start - 1, end)
    .map((line, index) => `${String(start + index).padStart(width)}\t${line}`);
  const endings = hasCrlf(text) ? '; Windows line endings, kept by edits' : '';
  const encodingNote = isPlainUtf8(encoding) ? '' : `; ${describeEncoding(encoding)} text, kept by edits`;
  const header = `${relative} (lines ${start}-${end} of ${lines.length}${endings}${encodingNote})`;
  const more =
    end < requestedEnd ? `\n[stopped after ${maxReadLines} lines; read from line ${end + 1} to see more]` : '';
  return `${header}\n${numbered.join('\n')}${more}`;
}

export async function editFileForTool(
  workspace: string,
  input: { path: string; old_string: string; new_string: string },
): Promise<string> {
  const file = await readTextFile(workspace, input.path);
  const { relative, absolute, text } = file;
  // The model writes `\n` where a Windows file has `\r\n`: in such a file, either matches (and
  // a text that occurs once as-is but also elsewhere with other endings is ambiguous).
  const occurrences = hasCrlf(text)
    ? findIgnoringLineEndings(text, input.old_string)
    : findAll(text, input.old_string).map((start) => ({ start, end: start + input.old_string.length }));
  if (occurrences.length === 0) {
    throw new ToolInputError(
      `old_string was not found in ${relative}. It must match exactly, including whitespace.${closestRegion(text, input.old_string)}`,
    );
  }
  if (occurrences.length > 1) {
    const lines = occurrences.map(({ start }) => text.slice(0, start).split('\n').length);
    throw new ToolInputError(
      `old_string occurs ${occurrences.length} times in ${relative} (at lines ${lines.join(', ')}). Include more surrounding lines so that it matches exactly once.`,
    );
  }
  const { start, end } = occurrences[0] as { start: number; end: number };
  // A file with Windows line endings keeps them: the new text takes the endings of the text it replaces.
  const replacement = hasCrlf(text)
    ? withLineEndingsOf(input.new_string, text.slice(start, end), text)
    : input.new_string;
  await writeSeenChanged(absolute, splice(file, start, end, replacement));
  const line = text.slice(0, start).split('\n').length;
  const removed = input.old_string.split('\n').length;
  const added = input.new_string.split('\n').length;
  return `Edited ${relative} at line ${line}: replaced ${removed} line(s) with ${added} line(s).`;
}

export async function writeFileForTool(workspace: string, input: { path: string; content: string }): Promise<string> {
  const { relative, absolute } = await resolveInsideWorkspace(workspace, input.path);
  if (!relative) throw new PathRefusedError('write_file needs a file path, not the repository root.');
  const stats = await lstat(absolute).catch(() => null);
  if (stats?.isDirectory()) throw new ToolInputError(`"${relative}" is a folder.`);
  if (stats?.isSymbolicLink())
    throw new ToolInputError(`"${relative}" is a symlink; write to the file it points to instead.`);
  if (stats && !stats.isFile()) throw notRegularFile(relative);
  const existing = stats && stats.size <= maxReadBytes ? decodeText(await readFile(absolute)) : null;
  const encoding = existing?.encoding ?? utf8;
  const bytes = encoded(relative, withExistingLineEndings(existing?.text ?? null, input.content), encoding);
  await mkdir(posix.dirname(absolute), { recursive: true });
  await writeSeenChanged(absolute, bytes);
  const lines = input.content.split('\n').length;
  const kept = isPlainUtf8(encoding) ? '' : `, kept in ${describeEncoding(encoding)}`;
  return `${stats ? 'Replaced' : 'Created'} ${relative} (${lines} lines${kept}).`;
}

/** A write of the file tools, seen as a change by bytecode caches (mtimePast.ts). */
async function writeSeenChanged(absolute: string, content: Uint8Array | string): Promise<void> {
  const previous = await statBeforeWrite(absolute);
  await writeFile(absolute, content);
  await moveMtimePast(absolute, previous);
}

/** New content for a text file that uses Windows line endings throughout gets them too (unless it has some itself). */
function withExistingLineEndings(existing: string | null, content: string): string {
  if (existing === null || hasCrlf(content) || !content.includes('\n')) return content;
  return dominantLineEnding(existing) === '\r\n' ? content.replace(/\n/g, '\r\n') : content;
}

/**
 * The file's bytes with text[start, end) replaced: every byte before and after the edit is the
 * file's own (the encodings decodeText accepts encode piece by piece, which this checks).
 */
function splice(file: TextFile, start: number, end: number, replacement: string): Buffer {
  const { content, text, encoding, relative } = file;
  const before = encodeText(text.slice(0, start), encoding);
  const after = encodeText(text.slice(end), { ...encoding, bom: Buffer.alloc(0) });
  const middle = encoded(relative, replacement, { ...encoding, bom: Buffer.alloc(0) });
  const afterStart = content.length - after.length;
  if (!content.subarray(0, before.length).equals(before) || !content.subarray(afterStart).equals(after)) {
    throw new ToolInputError(
      `"${relative}" (${describeEncoding(encoding)}) cannot be edited without changing bytes outside the edit; use write_file to replace it whole.`,
    );
  }
  return Buffer.concat([content.subarray(0, before.length), middle, content.subarray(afterStart)]);
}

function encoded(relative: string, text: string, encoding: TextEncoding): Buffer {
  try {
    return encodeText(text, encoding);
  } catch (error) {
    if (error instanceof UnencodableTextError)
      throw new ToolInputError(
        `"${relative}" is ${describeEncoding(encoding)} text: ${error.message}. Write those characters another way (an escape sequence, for example).`,
      );
    throw error;
  }
}

/** A FIFO, socket or device would block or misbehave on the worker: never open one. */
function notRegularFile(relative: string): ToolInputError {
  return new ToolInputError(
    `"${relative}" is not a regular file (it is a FIFO, socket or device), so it cannot be read or written.`,
  );
}

function findAll(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + 1)) {
    found.push(index);
    if (found.length > 50) break;
  }
  return found;
}

/** Points the model at the lines that look most like what it tried to replace. */
function closestRegion(text: string, wanted: string): string {
  const fileLines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  const wantedLines = wanted.split('\n').filter((line) => line.trim());
  const firstWanted = normalize(wantedLines[0] ?? '');
  if (!firstWanted) return '';
  let bestLine = -1;
  let bestScore = 0;
  fileLines.forEach((line, index) => {
    const score = similarity(normalize(line), firstWanted);
    if (score > bestScore) {
      bestScore = score;
      bestLine = index;
    }
  });
  if (bestLine < 0 || bestScore < 0.5) return ' No similar text was found; read the file again.';
  const from = Math.max(0, bestLine - 2);
  const to = Math.min(fileLines.length, bestLine + Math.max(wantedLines.length, 1) + 2);
  const region = fileLines
    .slice(from, to)
    .map((line, index) => `${from + index + 1}\t${line}`)
    .join('\n');
  return ` The closest match is near line ${bestLine + 1}:\n${region}`;
}

function normalize(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

/** Dice coefficient over character bigrams: cheap and good enough to spot a near-miss. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const bigrams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const gram = a.slice(i, i + 2);
    bigrams.set(gram, (bigrams.get(gram) ?? 0) + 1);
  }
  let overlap = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2);
    const count = bigrams.get(gram) ?? 0;
    if (count > 0) {
      bigrams.set(gram, count - 1);
      overlap++;
    }
  }
  return (2 * overlap) / (a.length + b.length - 2);
}
