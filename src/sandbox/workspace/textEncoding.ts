// Text or binary, told by content, and the encoding of a text file: UTF-8, or the one its
// byte-order mark or its coding line declares (`# -*- coding: latin-1 -*-`, `<?xml … encoding=…?>`),
// or else the one the bytes look like (chardet's detector). A text file is shown to the model as
// text and written back in its own encoding; only encodings whose decoding gives the very same
// bytes back are used, so an edit can never change a byte it did not touch.
import chardet from 'chardet';
import iconv from 'iconv-lite';

export interface TextEncoding {
  /** The encoding's name as iconv-lite knows it ('utf-8', 'ISO-8859-1', 'UTF-16LE', 'Shift_JIS', …). */
  name: string;
  /** The byte-order mark the file starts with (kept when it is written back); empty when it has none. */
  bom: Buffer;
  /** How it was found. */
  foundBy: 'utf-8' | 'byte-order mark' | 'declared' | 'detected';
}

export interface DecodedText {
  text: string;
  encoding: TextEncoding;
}

/** New files, and UTF-8 files without a byte-order mark. */
export const utf8: TextEncoding = { name: 'utf-8', bom: Buffer.alloc(0), foundBy: 'utf-8' };

export class UnencodableTextError extends Error {}

const byteOrderMarks: Array<{ bytes: number[]; name: string }> = [
  { bytes: [0xef, 0xbb, 0xbf], name: 'utf-8' },
  { bytes: [0xff, 0xfe, 0x00, 0x00], name: 'UTF-32LE' },
  { bytes: [0x00, 0x00, 0xfe, 0xff], name: 'UTF-32BE' },
  { bytes: [0xff, 0xfe], name: 'UTF-16LE' },
  { bytes: [0xfe, 0xff], name: 'UTF-16BE' },
];

/** How much of a file the binary check and the detector look at. */
const sampleBytes = 64 * 1024;
/** A detector's guess below this confidence (of 100) is not taken. */
const minimumConfidence = 10;

/** The file's text and encoding, or null when it is binary (or text in no encoding we can keep byte for byte). */
export function decodeText(content: Buffer): DecodedText | null {
  const marked = byteOrderMarks.find(({ bytes }) => bytes.every((byte, index) => content[index] === byte));
  if (marked) {
    const bom = Buffer.from(content.subarray(0, marked.bytes.length));
    const decoded = decodedAs(content, { name: marked.name, bom, foundBy: 'byte-order mark' });
    if (decoded) return decoded;
  }
  const declared = declaredEncoding(content);
  if (declared) {
    const decoded = decodedAs(content, { name: declared, bom: Buffer.alloc(0), foundBy: 'declared' });
    if (decoded) return decoded;
  }
  const sample = content.subarray(0, sampleBytes);
  if (!sample.includes(0)) {
    const text = strictUtf8(content);
    if (text !== null) return { text, encoding: utf8 };
  }
  for (const name of likelyEncodings(content, sample)) {
    const decoded = decodedAs(content, { name, bom: Buffer.alloc(0), foundBy: 'detected' });
    if (decoded) return decoded;
  }
  return null;
}

export function isPlainUtf8(encoding: TextEncoding): boolean {
  return encoding.name === 'utf-8' && encoding.bom.length === 0;
}

/** `text` in `encoding`, with its byte-order mark; refused when a character has no place in it. */
export function encodeText(text: string, encoding: TextEncoding): Buffer {
  if (encoding.name === 'utf-8') return Buffer.concat([encoding.bom, Buffer.from(text, 'utf8')]);
  const bytes = iconv.encode(text, encoding.name, { addBOM: false });
  const back = iconv.decode(bytes, encoding.name, { stripBOM: false });
  if (back !== text) {
    const lost = [
      ...new Set(
        [...text].filter(
          (character) => iconv.decode(iconv.encode(character, encoding.name), encoding.name) !== character,
        ),
      ),
    ];
    throw new UnencodableTextError(
      `${lost.map((character) => JSON.stringify(character)).join(', ')} cannot be written in ${encoding.name}, the file's encoding`,
    );
  }
  return Buffer.concat([encoding.bom, bytes]);
}

/** For the model and the patch: "ISO-8859-1 (declared)", "UTF-16LE (byte-order mark)". */
export function describeEncoding(encoding: TextEncoding): string {
  const how = encoding.foundBy === 'utf-8' ? '' : ` (${encoding.foundBy})`;
  return `${encoding.name === 'utf-8' ? 'UTF-8' : encoding.name}${how}`;
}

/** The bytes as text when they are UTF-8 without a NUL (a byte-order mark kept): text as git diffs it. */
export function utf8TextOf(content: Buffer): string | null {
  return content.includes(0) ? null : strictUtf8(content);
}

function strictUtf8(content: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(content);
  } catch {
    return null;
  }
}

/** The text, when `encoding` decodes the file to text that encodes back to exactly its bytes. */
function decodedAs(content: Buffer, given: TextEncoding): DecodedText | null {
  // `utf8`, `UTF-8` and `utf_8` are all UTF-8.
  const isUtf8 = given.name.toLowerCase().replace(/[^a-z0-9]/g, '') === 'utf8';
  const encoding = isUtf8 ? { ...given, name: 'utf-8' } : given;
  const body = content.subarray(encoding.bom.length);
  let text: string | null;
  if (encoding.name === 'utf-8') text = strictUtf8(body);
  else {
    if (!iconv.encodingExists(encoding.name)) return null;
    text = iconv.decode(body, encoding.name, { stripBOM: false });
    if (!iconv.encode(text, encoding.name, { addBOM: false }).equals(body)) return null;
  }
  // A coding line or a detector's guess can be wrong about a binary file: its text must look like text.
  if (text === null || (encoding.name !== 'utf-8' && !looksLikeText(text))) return null;
  return { text, encoding };
}

// Python (PEP 263), Emacs and Vim put the coding line, a comment, in the first two lines; XML in its declaration.
const codingLine = /^[ \t\f]*(?:#|\/\/|\/\*|--|;|%|\*).*?coding[:=][ \t]*([-\w.]+)/;
const xmlDeclaration = /^<\?xml[^>]*\sencoding=["']([-\w.]+)["']/;

function declaredEncoding(content: Buffer): string | null {
  // Every encoding a coding line can name keeps ASCII as ASCII (UTF-16 has a byte-order mark instead).
  const head = content.subarray(0, 1024).toString('latin1');
  const xml = head.match(xmlDeclaration)?.[1];
  if (xml) return xml;
  const firstLines = head.split('\n').slice(0, 2);
  for (const line of firstLines) {
    const name = line.match(codingLine)?.[1];
    if (name) return name;
  }
  return null;
}

/** Encodings the file may be in, likeliest first: UTF-16 without a mark, then the detector's guesses. */
function likelyEncodings(content: Buffer, sample: Buffer): string[] {
  const utf16 = utf16WithoutMark(sample);
  if (utf16) return [utf16];
  if (sample.includes(0)) return [];
  const guesses = chardet
    .analyse(sample)
    .filter((match) => match.confidence >= minimumConfidence && !/^UTF-/i.test(match.name))
    .map((match) => match.name);
  // Bytes 0x80–0x9f are control characters in ISO-8859-1 but letters and quotes in windows-1252
  // (as browsers read such files too): a file that has them is read as windows-1252 first. The
  // detector has nothing to go on in a few bytes: the two are the last resort (text must still look like text).
  const hasC1 = sample.some((byte) => byte >= 0x80 && byte <= 0x9f);
  const westernEuropean = hasC1 ? ['windows-1252', 'ISO-8859-1'] : ['ISO-8859-1'];
  return [
    ...new Set([...guesses.flatMap((name) => (name === 'ISO-8859-1' ? westernEuropean : [name])), ...westernEuropean]),
  ];
}

/** UTF-16 text without a byte-order mark: mostly ASCII, so one byte of nearly every pair is zero. */
function utf16WithoutMark(sample: Buffer): string | null {
  if (sample.length < 4 || sample.length % 2 !== 0) return null;
  let zerosAtEven = 0;
  let zerosAtOdd = 0;
  for (let index = 0; index < sample.length; index++) {
    if (sample[index] !== 0) continue;
    if (index % 2 === 0) zerosAtEven++;
    else zerosAtOdd++;
  }
  const pairs = sample.length / 2;
  if (zerosAtOdd > pairs * 0.7 && zerosAtEven < pairs * 0.05) return 'UTF-16LE';
  if (zerosAtEven > pairs * 0.7 && zerosAtOdd < pairs * 0.05) return 'UTF-16BE';
  return null;
}

// Control characters that text does not hold (tab, line breaks, form feed, escape and the DOS
// end-of-file mark are left out): more than one in a hundred characters means binary.
// eslint-disable-next-line no-control-regex -- control characters are what this counts
const controlCharacters = /[\x00-\x08\x0e-\x19\x1c-\x1f\x7f-\x9f]/g;

function looksLikeText(text: string): boolean {
  const sample = text.slice(0, sampleBytes);
  const controls = sample.match(controlCharacters)?.length ?? 0;
  return controls <= sample.length / 100;
}
