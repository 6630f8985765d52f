// The name of a worker's model endpoint, derived from its settings. Secrets never leave these
// functions: only a truncated SHA-256 of what identifies the endpoint names it (and its task queue).
import { createHash } from 'node:crypto';

export const anthropicDefaultBaseURL = 'https://api.anthropic.com';

/** The Anthropic API or a gateway: the base URL's host and a fingerprint of base URL and key. */
export function modelEndpointId(settings: { apiKey: string | undefined; baseURL: string | undefined }): string | null {
  if (!settings.apiKey) return null;
  const baseURL = (settings.baseURL ?? anthropicDefaultBaseURL).replace(/\/+$/, '');
  const host = new URL(baseURL).host.toLowerCase().replace(/[^a-z0-9.]+/g, '-');
  const fingerprint = createHash('sha256').update(`${baseURL}\n${settings.apiKey}`).digest('hex').slice(0, 16);
  return `${host}-${fingerprint}`.replace(/^[^a-z0-9]+/, '');
}

/**
 * Bedrock or Vertex: the provider and region, and a fingerprint of provider, region, project,
 * base URL and whose credentials answer (an AWS principal, a Google account, or a hash of a key:
 * `identity` is never a secret in clear).
 */
export function platformEndpointId(place: {
  provider: 'bedrock' | 'vertex';
  region: string;
  project?: string;
  baseURL: string;
  identity: string;
}): string {
  const baseURL = place.baseURL.replace(/\/+$/, '');
  const fingerprint = createHash('sha256')
    .update([place.provider, place.region, place.project ?? '', baseURL, place.identity].join('\n'))
    .digest('hex')
    .slice(0, 16);
  const region = place.region.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return `${place.provider}.${region}-${fingerprint}`.slice(0, 100);
}

/** A secret as an identity: a short hash, enough to tell keys apart, useless to use one. */
export function secretIdentity(kind: string, secret: string): string {
  return `${kind}:${createHash('sha256').update(secret).digest('hex').slice(0, 32)}`;
}
