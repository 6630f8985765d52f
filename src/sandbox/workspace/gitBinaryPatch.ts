// Git's binary patch format (`git diff --binary`): the whole new content, deflated and written in
// git's base85, with the blob ids git apply checks the file against. git apply gives back exactly
// these bytes, whatever they are: images, databases, and text in an encoding other than UTF-8.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

const base85Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';

/** A deleted or new file's side of the `index` line. */
export const noBlob = '0'.repeat(40);

/** The id git gives `content` as a blob (SHA-1 of "blob <size>\0" and the bytes). */
export function gitBlobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/**
 * The body after a file's `index` line: "GIT binary patch", then the hunk that makes `after`
 * and the one that makes `before` back (so that `git apply -R` works too). Null is no file.
 */
export function gitBinaryPatch(before: Buffer | null, after: Buffer | null): string {
  return `GIT binary patch\n${literal(after ?? Buffer.alloc(0))}${literal(before ?? Buffer.alloc(0))}`;
}

function literal(content: Buffer): string {
  const deflated = deflateSync(content);
  const lines = [`literal ${content.length}`];
  for (let offset = 0; offset < deflated.length; offset += 52) {
    const chunk = deflated.subarray(offset, offset + 52);
    // The line's length: A–Z for 1–26 bytes, a–z for 27–52.
    const length = chunk.length <= 26 ? 64 + chunk.length : 96 + chunk.length - 26;
    lines.push(String.fromCharCode(length) + base85(chunk));
  }
  return `${lines.join('\n')}\n\n`;
}

/** Git's base85: each 4 bytes (big-endian, the last group padded with zeros) as 5 characters. */
function base85(bytes: Buffer): string {
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += 4) {
    let value = 0;
    for (let index = 0; index < 4; index++) value = value * 256 + (bytes[offset + index] ?? 0);
    const group: string[] = [];
    for (let index = 0; index < 5; index++) {
      group.unshift(base85Alphabet[value % 85] as string);
      value = Math.floor(value / 85);
    }
    text += group.join('');
  }
  return text;
}
