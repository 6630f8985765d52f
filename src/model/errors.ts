// Every failure of a model call is classified: retryable ones (rate limits, overload, server
// errors, lost connections) are retried by Temporal, after the server's retry-after when it
// gives one; the others end the run with a message that says what to do.
import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';

export interface ModelFailure {
  retryable: boolean;
  /** A stable name, used as the Temporal failure type. */
  type: string;
  message: string;
  retryAfterMs?: number;
  status?: number;
  requestId?: string;
}

/** An error event in the middle of a streamed reply has no HTTP status: the status its type stands for. */
const streamErrorStatus: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  api_error: 500,
};

export function classifyModelError(error: unknown): ModelFailure | null {
  if (error instanceof APIUserAbortError) return null; // our own cancellation: not a model failure
  if (error instanceof APIConnectionError) {
    const timeout = error.constructor.name === 'APIConnectionTimeoutError';
    return {
      retryable: true,
      type: timeout ? 'ModelTimeout' : 'ModelConnectionError',
      message: timeout ? 'The model request timed out.' : `Could not reach the model API: ${error.message}`,
    };
  }
  if (!(error instanceof APIError)) return null;
  const status = error.status ?? (error.type ? streamErrorStatus[error.type] : undefined);
  if (status === undefined) return null;
  const apiMessage = error.apiMessage ?? error.message;
  const base = { status, requestId: error.requestID ?? undefined };
  const retryAfterMs = parseRetryAfter(error.headers);
  if (status === 429) {
    if (/spend limit|credit balance|billing|quota/i.test(apiMessage)) {
      return {
        ...base,
        retryable: false,
        type: 'ModelSpendLimit',
        message: `The API account has reached a spend limit (429): ${apiMessage}. Raise the limit or add credits, then resume the run.`,
      };
    }
    return {
      ...base,
      retryable: true,
      type: 'ModelRateLimited',
      message: `Rate limited (429): ${apiMessage}`,
      retryAfterMs,
    };
  }
  if (status === 529) {
    return {
      ...base,
      retryable: true,
      type: 'ModelOverloaded',
      message: `The API is overloaded (529): ${apiMessage}`,
      retryAfterMs,
    };
  }
  if (status >= 500 || status === 408 || status === 409) {
    return {
      ...base,
      retryable: true,
      type: 'ModelServerError',
      message: `The API failed (${status}): ${apiMessage}`,
      retryAfterMs,
    };
  }
  const advice: Record<number, [string, string]> = {
    400: ['ModelBadRequest', 'The request was rejected as invalid (400)'],
    401: [
      'ModelAuthentication',
      'ANTHROPIC_API_KEY rejected (401): check the key, or unset it to use scripted responses',
    ],
    403: [
      'ModelPermission',
      'The credentials may not use this model or feature (403): on Bedrock, request access to the model in the Bedrock console; on Vertex, enable it in the Model Garden',
    ],
    404: [
      'ModelNotFound',
      'The model or endpoint was not found (404): check --model / ANTHROPIC_MODEL (as the provider names it: global.anthropic.claude-sonnet-4-6 on Bedrock) and the base URL',
    ],
    413: ['ModelRequestTooLarge', 'The request was too large for the API (413)'],
  };
  const [type, text] = advice[status] ?? ['ModelRequestRejected', `The API rejected the request (${status})`];
  return { ...base, retryable: false, type, message: `${text}: ${apiMessage}` };
}

/** retry-after-ms (milliseconds) wins over retry-after (seconds or an HTTP date). */
export function parseRetryAfter(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const milliseconds = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
