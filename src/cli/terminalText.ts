// Text from the repository under debug (test output, file names, patches) and from the model is
// untrusted: printed as is, its control characters could drive the terminal (move the cursor over
// earlier lines, set the window title, write the clipboard with OSC 52) and its bidirectional
// overrides could make a patch read otherwise than it applies. Everything the CLI prints of it
// goes through here first; our own colours are added after. JSON output needs none of this: it
// escapes control characters itself.

/** Control characters (but newline, tab and a CR that ends a line), DEL, C1 controls, and bidirectional embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const hidden = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

/** The text with every character that could drive the terminal or reorder what it shows made visible. */
export function printable(text: string): string {
  return text.replace(hidden, (char) => {
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␛, ␍, ␇ …: Unicode's control pictures
    if (code === 0x7f) return '␡';
    return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
  });
}

/** A copy of a value (a report, a status, a transcript) with every string in it made printable. */
export function printableAll<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map((each) => printableAll(each) as unknown) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, printableAll(each)])) as T;
  return value;
}
