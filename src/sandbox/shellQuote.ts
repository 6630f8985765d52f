// One word for sh, whatever it holds (repository file names, test ids and settings may hold any
// character): single quotes, with each ' written as '\''.
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
