// Observations are truncated once, when they are recorded, so earlier messages never change
// (rewriting them would break prompt caching). Head and tail are kept: a test failure's
// cause is usually near the top, its summary at the bottom.

export interface ObservationLimits {
  maxBytes: number;
  maxLines: number;
}

export const defaultObservationLimits: ObservationLimits = { maxBytes: 16_000, maxLines: 400 };

export function truncateObservation(text: string, limits: ObservationLimits): string {
  const lines = text.split('\n');
  if (text.length <= limits.maxBytes && lines.length <= limits.maxLines) return text;

  const headLines = Math.ceil(limits.maxLines / 2);
  const tailLines = Math.floor(limits.maxLines / 2);
  const headBudget = Math.ceil(limits.maxBytes / 2);
  const tailBudget = Math.floor(limits.maxBytes / 2);

  const head = takeWithin(lines.slice(0, headLines), headBudget, 'head');
  const tail = takeWithin(lines.slice(Math.max(headLines, lines.length - tailLines)), tailBudget, 'tail');
  const keptBytes = head.join('\n').length + tail.join('\n').length;
  const cutLines = Math.max(0, lines.length - head.length - tail.length);
  const cutBytes = Math.max(0, text.length - keptBytes);
  const marker = `[... ${cutLines} lines (${cutBytes} characters) cut from the middle of this output ...]`;
  return [...head, marker, ...tail].join('\n');
}

function takeWithin(lines: string[], budget: number, end: 'head' | 'tail'): string[] {
  const ordered = end === 'head' ? lines : [...lines].reverse();
  const kept: string[] = [];
  let used = 0;
  for (const line of ordered) {
    const room = budget - used;
    if (room <= 0) break;
    const piece = line.length + 1 <= room ? line : end === 'head' ? line.slice(0, room) : line.slice(-room);
    kept.push(piece);
    used += piece.length + 1;
  }
  return end === 'head' ? kept : kept.reverse();
}
