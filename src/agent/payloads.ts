// Temporal refuses any single payload over 2 MB: an activity's input or result, a query's answer,
// the continue-as-new input, the workflow's result. A run that grows one of them past that limit
// fails in ways a person cannot repair (a model call retried until it gives up, a run that never
// reports). These are the bounds the workflow keeps every payload under, and how it measures them.

/** Temporal's default limit on one payload. */
export const temporalPayloadLimitBytes = 2 * 1024 * 1024;

/**
 * The conversation's share of a payload. The transcript query carries the conversation alone;
 * the savedState query and the continue-as-new input carry it beside the rest of the run's state
 * (tool-call records, the mutation log, test summaries), which needs the remaining room.
 */
export const conversationByteBudget = 1_000_000;

/** A patch up to this size is kept whole in the report; a larger one is kept in the content store. */
export const reportPatchBytes = 256 * 1024;

/** How much of a patch kept in the content store the report shows. */
export const patchPreviewBytes = 64 * 1024;

/**
 * History size at which a run continues as new even when the server has not suggested it
 * (the server's suggestion depends on its configuration; its hard limit is 50 MB).
 */
export const continueAsNewHistoryBytes = 16 * 1024 * 1024;

/** Tool-call records a run keeps (the newest); a record is about 130 bytes. */
export const maxToolCallRecords = 2_000;

/** Drops the oldest records beyond `max`; returns how many were dropped. */
export function dropOldestRecords<T>(records: T[], max = maxToolCallRecords): number {
  return records.length > max ? records.splice(0, records.length - max).length : 0;
}

/** The largest context window of any Claude model: a larger setting would never compact in time. */
export const maxContextWindowTokens = 1_000_000;

/** Characters beyond ASCII: the only ones that take more than one byte in UTF-8. */
// eslint-disable-next-line no-control-regex -- the range starts at NUL on purpose
const nonAscii = /[^\x00-\x7f]/g;

/**
 * Bytes of a string once encoded as UTF-8 (what Temporal's JSON payloads carry). Runs of ASCII
 * (nearly all of a conversation) are skipped by one native regular-expression scan each instead
 * of a JavaScript step per character: the workflow measures its whole conversation every
 * iteration. Lone surrogates count 3 bytes, as the replacement character they become.
 */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    nonAscii.lastIndex = index;
    const next = nonAscii.exec(text)?.index ?? text.length;
    bytes += next - index;
    index = next;
    if (index >= text.length) break;
    const code = text.charCodeAt(index);
    if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const following = text.charCodeAt(index + 1);
      if (following >= 0xdc00 && following <= 0xdfff) {
        bytes += 4;
        index++;
      } else bytes += 3;
    } else bytes += 3;
    index++;
  }
  return bytes;
}

/** Bytes of a value as a JSON payload. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}

/**
 * Whether a text takes more than `maxBytes` in UTF-8. A UTF-16 unit takes 1 to 3 bytes, so the
 * bytes are counted only when the length alone cannot tell (counting is a loop over every character).
 */
export function exceedsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8Bytes(text) > maxBytes;
}

/**
 * The beginning of a patch too large for the report: whole lines up to `maxBytes`, and a last
 * line saying how much is left out and where the whole patch is.
 */
export function patchPreview(patch: string, maxBytes: number, whereTheWholePatchIs: string): string {
  let end = 0;
  let bytes = 0;
  while (end < patch.length) {
    const newline = patch.indexOf('\n', end);
    const lineEnd = newline === -1 ? patch.length : newline + 1;
    const lineBytes = utf8Bytes(patch.slice(end, lineEnd));
    if (bytes + lineBytes > maxBytes) break;
    bytes += lineBytes;
    end = lineEnd;
  }
  const left = utf8Bytes(patch) - bytes;
  return `${patch.slice(0, end)}[... ${left} more bytes of this patch are not shown: it is too large for the report; ${whereTheWholePatchIs}]\n`;
}
