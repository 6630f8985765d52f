// Figures measured several times: their samples and min/median/max, and how they are printed.

export interface Figure {
  min: number;
  median: number;
  max: number;
  samples: number[];
}

export function figure(samples: number[]): Figure {
  if (samples.length === 0) throw new Error('a figure needs at least one sample');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number, samples };
}

/** Repeats a measurement `times` times, one after the other. */
export async function repeat<T>(times: number, measure: (repetition: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let repetition = 0; repetition < times; repetition++) results.push(await measure(repetition));
  return results;
}

/**
 * Measures each variant once to warm it up, then `times` rounds of every variant in turn, so that
 * a slow moment of the machine lands on all alike. Returns each variant's samples, in its order.
 */
export async function alternately<V, T>(
  times: number,
  variants: V[],
  measure: (variant: V) => Promise<T>,
): Promise<T[][]> {
  for (const variant of variants) await measure(variant);
  const samples: T[][] = variants.map(() => []);
  for (let round = 0; round < times; round++)
    for (const [index, variant] of variants.entries()) samples[index]?.push(await measure(variant));
  return samples;
}

export function number(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A difference, with its sign: +4.2 or −3.1. */
export function signed(value: number, digits = 1): string {
  return `${value < 0 ? '−' : '+'}${number(Math.abs(value), digits)}`;
}

export function percent(share: number, digits = 1): string {
  return `${number(share * 100, digits)}%`;
}

/** One table row per figure: label, then min, median and max in the figure's unit. */
export function figureTable(
  rows: Array<{ label: string; figure: Figure; format: (value: number) => string }>,
): string[] {
  const cells = rows.map((row) => [
    row.label,
    row.format(row.figure.min),
    row.format(row.figure.median),
    row.format(row.figure.max),
  ]);
  return table(['', 'min', 'median', 'max'], cells);
}

/** A plain text table: the first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return all.map(line).map((text) => `  ${text}`);
}
