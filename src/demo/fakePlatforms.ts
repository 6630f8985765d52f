// The fake Messages API as Amazon Bedrock or Google Vertex AI serve it, for offline tests of the
// providers through their own SDK clients: Bedrock's paths, body and SigV4-signed requests (the
// signature is checked as AWS does, with the secret key only this fake and the client know), and
// the STS GetCallerIdentity the product asks who the credentials are; Vertex's paths, body and
// OAuth bearer token, and the GCE metadata server that Google's credential chain gets it from.
// What passes is handed on to the Anthropic API's rules and scripts (fakeAnthropicApi.ts).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface FakeBedrock {
  kind: 'bedrock';
  region: string;
  /** The AWS credentials the fake accepts, and the principal STS names for them. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string; arn: string };
}

export interface FakeVertex {
  kind: 'vertex';
  project: string;
  region: string;
  /** The access token the metadata server hands out and the endpoint accepts. */
  token: string;
  serviceAccountEmail: string;
}

export type FakePlatform = FakeBedrock | FakeVertex;

/** A Messages API call as the platform received it: the Anthropic-shaped body, and who sent it. */
export interface PlatformCall {
  body: Record<string, unknown>;
  stream: boolean;
  credential: string;
}

export interface PlatformAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The call inside a platform request, or the platform's own answer (an error, STS, the metadata server). */
export function platformCall(
  platform: FakePlatform,
  request: IncomingMessage,
  raw: string,
): { call: PlatformCall } | { answer: PlatformAnswer } {
  return platform.kind === 'bedrock' ? bedrockCall(platform, request, raw) : vertexCall(platform, request, raw);
}

/** An error as the platform words it. */
export function platformError(platform: FakePlatform, status: number, type: string, message: string): PlatformAnswer {
  if (platform.kind === 'bedrock') {
    const awsType = bedrockErrorTypes[status] ?? 'ValidationException';
    return json(
      status,
      { message },
      { 'x-amzn-errortype': `${awsType}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    );
  }
  // Vertex passes the model's own errors through, and words its gateway's (auth, paths) Google's way.
  if (status === 401 || status === 403 || (status === 404 && type === 'not_found_error'))
    return json(status, { error: { code: status, message, status: googleStatus[status] ?? 'NOT_FOUND' } });
  return json(status, { type: 'error', error: { type, message } });
}

const bedrockErrorTypes: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
  529: 'ServiceUnavailableException',
};
const googleStatus: Record<number, string> = { 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED' };

function json(status: number, body: unknown, headers: Record<string, string> = {}): PlatformAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

// ── Amazon Bedrock ─────────────────────────────────────────────────────────────────────────

function bedrockCall(
  platform: FakeBedrock,
  request: IncomingMessage,
  raw: string,
): { call: PlatformCall } | { answer: PlatformAnswer } {
  const url = new URL(request.url ?? '/', 'http://fake');
  const isSts = request.method === 'POST' && url.pathname === '/' && /Action=GetCallerIdentity/.test(raw);
  const problem = sigV4Problem(platform, request, raw, isSts ? 'sts' : 'bedrock');
  if (isSts) {
    if (problem) return { answer: stsError(problem) };
    const { arn } = platform.credentials;
    const account = arn.split(':')[4] ?? '';
    return {
      answer: {
        status: 200,
        headers: { 'content-type': 'text/xml' },
        body: `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${arn}</Arn><UserId>AIDAFAKE</UserId><Account>${account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      },
    };
  }
  const match = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(url.pathname);
  if (request.method !== 'POST' || !match) {
    return {
      answer: platformError(platform, 404, 'not_found_error', `Unknown operation: ${request.method} ${url.pathname}`),
    };
  }
  if (problem) return { answer: platformError(platform, 403, 'permission_error', problem) };
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return {
      answer: platformError(
        platform,
        400,
        'invalid_request_error',
        'Malformed input request, please reformat your input and try again.',
      ),
    };
  }
  if (!isApiVersion(body.anthropic_version, 'bedrock-2023-05-31')) {
    return {
      answer: platformError(
        platform,
        400,
        'invalid_request_error',
        'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.',
      ),
    };
  }
  for (const key of ['model', 'stream']) {
    if (key in body)
      return {
        answer: platformError(
          platform,
          400,
          'invalid_request_error',
          `Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`,
        ),
      };
  }
  const { anthropic_version: _version, ...rest } = body;
  return {
    call: {
      body: { ...rest, model: decodeURIComponent(match[1] as string) },
      stream: match[2] === 'invoke-with-response-stream',
      credential: platform.credentials.accessKeyId,
    },
  };
}

/**
 * The platforms take the API version in the body: their own first version, or a Messages API
 * version (what Anthropic's SDK clients send since API version 2026-10-21).
 */
function isApiVersion(value: unknown, platformVersion: string): boolean {
  return value === platformVersion || (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value));
}

function stsError(message: string): PlatformAnswer {
  return {
    status: 403,
    headers: { 'content-type': 'text/xml' },
    body: `<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code><Message>${message}</Message></Error></ErrorResponse>`,
  };
}

/**
 * Checks an AWS Signature Version 4 as AWS does: the credential scope (key, date, region,
 * service), the time, the session token, the body's hash, and the signature over the canonical
 * request of the headers the client signed. A problem in AWS's words, or null.
 */
function sigV4Problem(platform: FakeBedrock, request: IncomingMessage, raw: string, service: string): string | null {
  const authorization = request.headers.authorization ?? '';
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!parsed) return 'Missing Authentication Token';
  const [, keyId, date, region, signedService, signedHeaderList, signature] = parsed as unknown as string[];
  const { credentials } = platform;
  if (keyId !== credentials.accessKeyId) return 'The security token included in the request is invalid.';
  if (region !== platform.region) return `Credential should be scoped to a valid region, not '${region}'.`;
  if (signedService !== service) return `Credential should be scoped to correct service: '${service}'.`;
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date as string))
    return 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.';
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!Number.isFinite(signedAt) || Math.abs(Date.now() - signedAt) > 5 * 60_000) return 'Signature expired.';
  if (credentials.sessionToken && request.headers['x-amz-security-token'] !== credentials.sessionToken)
    return 'The security token included in the request is invalid.';
  const signedHeaders = (signedHeaderList as string).split(';');
  if (!signedHeaders.includes('host')) return "'Host' must be a signed header.";
  const payloadHash = sha256(raw);
  const claimedHash = request.headers['x-amz-content-sha256'];
  if (claimedHash !== undefined && claimedHash !== payloadHash)
    return 'The provided x-amz-content-sha256 header does not match what was computed.';
  const url = new URL(request.url ?? '/', 'http://fake');
  const canonicalRequest = [
    request.method,
    url.pathname
      .split('/')
      .map((segment) => escapeUri(segment))
      .join('/'),
    [...url.searchParams.entries()]
      .map(([key, value]) => `${escapeUri(key)}=${escapeUri(value)}`)
      .sort()
      .join('&'),
    ...signedHeaders.map((name) => `${name}:${headerValue(request, name)}`),
    '',
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date as string);
  for (const part of [region as string, service, 'aws4_request']) key = hmac(key, part);
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(signature as string, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.';
  return null;
}

function headerValue(request: IncomingMessage, name: string): string {
  const value = request.headers[name];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');
}

function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

// ── Google Vertex AI ───────────────────────────────────────────────────────────────────────

function vertexCall(
  platform: FakeVertex,
  request: IncomingMessage,
  raw: string,
): { call: PlatformCall } | { answer: PlatformAnswer } {
  const url = new URL(request.url ?? '/', 'http://fake');
  if (url.pathname === '/' || url.pathname.startsWith('/computeMetadata/'))
    return { answer: metadata(platform, request, url) };
  const match =
    /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/.exec(
      url.pathname,
    );
  if (request.method !== 'POST' || !match)
    return {
      answer: platformError(
        platform,
        404,
        'not_found_error',
        `The requested URL ${url.pathname} was not found on this server.`,
      ),
    };
  if (request.headers.authorization !== `Bearer ${platform.token}`) {
    return {
      answer: platformError(
        platform,
        401,
        'authentication_error',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      ),
    };
  }
  const [, project, region, model, method] = match as unknown as string[];
  if (project !== platform.project || region !== platform.region) {
    return {
      answer: platformError(
        platform,
        403,
        'permission_error',
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/${region}/publishers/anthropic/models/${model}' (or it may not exist).`,
      ),
    };
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { answer: platformError(platform, 400, 'invalid_request_error', 'Invalid JSON payload received.') };
  }
  if (!isApiVersion(body.anthropic_version, 'vertex-2023-10-16'))
    return {
      answer: platformError(platform, 400, 'invalid_request_error', 'anthropic_version: Field required'),
    };
  if ('model' in body)
    return { answer: platformError(platform, 400, 'invalid_request_error', 'model: Extra inputs are not permitted') };
  const { anthropic_version: _version, stream, ...rest } = body;
  return {
    call: {
      body: { ...rest, model: decodeURIComponent(model as string), ...(stream === true ? { stream: true } : {}) },
      stream: method === 'streamRawPredict',
      credential: platform.token,
    },
  };
}

/** The GCE metadata server, as far as Google's credential chain asks it (GCE_METADATA_HOST points here). */
function metadata(platform: FakeVertex, request: IncomingMessage, url: URL): PlatformAnswer {
  const headers = { 'metadata-flavor': 'Google' };
  if (request.headers['metadata-flavor'] !== 'Google')
    return { status: 403, headers, body: 'Missing Metadata-Flavor:Google header.' };
  const text = (body: string): PlatformAnswer => ({
    status: 200,
    headers: { ...headers, 'content-type': 'text/plain' },
    body,
  });
  switch (url.pathname.replace(/\/+$/, '')) {
    case '':
    case '/computeMetadata/v1/instance':
      return text('');
    case '/computeMetadata/v1/project/project-id':
      return text(platform.project);
    case '/computeMetadata/v1/instance/service-accounts/default/email':
      return text(platform.serviceAccountEmail);
    case '/computeMetadata/v1/instance/service-accounts/default/token':
      return {
        ...json(200, { access_token: platform.token, expires_in: 3599, token_type: 'Bearer' }),
        headers: { ...headers, 'content-type': 'application/json' },
      };
    default:
      return { status: 404, headers, body: 'Not Found' };
  }
}

// ── Streaming ──────────────────────────────────────────────────────────────────────────────

/** Bedrock streams the Messages API's events in AWS's binary event-stream framing, each a `chunk`. */
/** The headers of Bedrock's streamed answer (`invoke-with-response-stream`). */
export function bedrockStreamHeaders(requestId: string): Record<string, string> {
  return { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId };
}

/** One Messages API event as a frame of Bedrock's event stream (the event's JSON, base64, in a chunk). */
export function bedrockEventFrame(event: unknown): Buffer {
  const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
  return eventStreamMessage(
    { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
    payload,
  );
}

function eventStreamMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name);
      const valueBytes = Buffer.from(value);
      const head = Buffer.alloc(1 + nameBytes.length + 3);
      head.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(head, 1);
      head.writeUInt8(7, 1 + nameBytes.length); // a string value
      head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      return Buffer.concat([head, valueBytes]);
    }),
  );
  const total = 12 + headerBytes.length + payload.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, headerBytes, payload, Buffer.alloc(4)]);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (crcTable[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
