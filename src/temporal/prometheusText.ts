// Prometheus' text exposition format (what worker hosts and the Temporal server serve on
// /metrics), read into samples. A line that is not a sample is skipped, not an error: the page
// may come from anywhere (a worker's identity names it), and a garbled line must not hide the rest.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*$/;
const labelPair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y;

/** The samples of a metrics page, in order; comments (# HELP, # TYPE) and malformed lines are left out. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = sampleLine.exec(line.trimEnd());
    if (!match) continue;
    const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
    const labels = labelText === undefined ? {} : parseLabels(labelText);
    const value = parseValue(valueText);
    if (labels && value !== null) samples.push({ name, labels, value });
  }
  return samples;
}

function parseLabels(text: string): Record<string, string> | null {
  const labels: Record<string, string> = {};
  labelPair.lastIndex = 0;
  while (labelPair.lastIndex < text.length) {
    const start = labelPair.lastIndex;
    const match = labelPair.exec(text);
    if (!match) return text.slice(start).trim() === '' ? labels : null;
    labels[match[1] as string] = unescape(match[2] as string);
    if (match[3] === '') break;
  }
  return labels;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, character: string) => (character === 'n' ? '\n' : character));
}

function parseValue(text: string): number | null {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  return text !== '' && !Number.isNaN(value) ? value : null;
}

/** The sum of a metric's samples whose labels include `match` (all of them without). */
export function sumOf(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const sample of samples)
    if (sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value))
      if (Number.isFinite(sample.value)) sum += sample.value;
  return sum;
}

/** A metric's samples summed by the value of one label (samples without it are left out). */
export function sumBy(samples: Sample[], name: string, label: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const sample of samples) {
    const key = sample.labels[label];
    if (sample.name !== name || key === undefined || !Number.isFinite(sample.value)) continue;
    sums.set(key, (sums.get(key) ?? 0) + sample.value);
  }
  return sums;
}

/** A scrape may take this long, answer included: an endpoint that hangs is reported, not waited for. */
export const scrapeTimeoutMs = 3_000;
/** More than any real metrics page (a worker's is tens of kB, the Temporal server's under 2 MB). */
const maxPageBytes = 16 * 1024 * 1024;

/** Reads an endpoint's samples; throws a one-line reason when it does not answer, or not with a metrics page. */
export async function scrapeMetrics(url: string, timeoutMs = scrapeTimeoutMs): Promise<Sample[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { signal, redirect: 'error' });
  } catch (error) {
    throw new Error(signal.aborted ? `no answer within ${timeoutMs / 1000} s` : reasonOf(error), { cause: error });
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`answered HTTP ${response.status}`);
  }
  const text = await readLimited(response, maxPageBytes).catch((error: unknown) => {
    throw new Error(signal.aborted ? `no whole answer within ${timeoutMs / 1000} s` : reasonOf(error), {
      cause: error,
    });
  });
  const samples = parsePrometheusText(text);
  if (samples.length === 0) throw new Error('answered with no Prometheus samples');
  return samples;
}

async function readLimited(response: Response, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > limit) throw new Error(`answered more than ${limit / 1024 / 1024} MiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
