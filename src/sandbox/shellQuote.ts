// One word for sh, whatever it holds (repository file names, test ids and settings may hold any
// character): single quotes, with each ' written as '\''.
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The word as it is when sh reads it as one plain word (a path of letters, digits and ./@:+-), else quoted. */
export function shellWord(word: string): string {
  return /^[\w./@:+-]+$/.test(word) ? word : shellQuote(word);
}
