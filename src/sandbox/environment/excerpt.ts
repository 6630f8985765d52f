// Repository files are untrusted: an error that names a bad value of one (a version in .nvmrc, a
// packageManager field, a parser's complaint that quotes its input) shows only a short excerpt, with
// every control or bidirectional character escaped, so a report, Temporal's history or a terminal
// never carries more of a file than it takes to find the mistake.

/** How much of a value an error shows. */
export const excerptLength = 60;

/** C0 and C1 controls, DEL, line and paragraph separators, bidirectional embeddings, overrides, isolates and marks. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const unprintable = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/** `text` cut to `length` characters (an ellipsis says it was cut), with what is not printable escaped as \uXXXX. */
export function excerpt(text: string, length = excerptLength): string {
  const characters = [...text];
  const cut = characters.length > length ? `${characters.slice(0, length).join('')}…` : text;
  return cut.replace(unprintable, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The excerpt in double quotes, as errors quote a value. */
export function quoted(text: string, length = excerptLength): string {
  return `"${excerpt(text, length)}"`;
}
