// The name of a worker's model endpoint, derived from its settings. The key never leaves this
// function: only a truncated SHA-256 of base URL and key names the endpoint (and its task queue).
import { createHash } from 'node:crypto';

export const anthropicDefaultBaseURL = 'https://api.anthropic.com';

export function modelEndpointId(settings: { apiKey: string | undefined; baseURL: string | undefined }): string | null {
  if (!settings.apiKey) return null;
  const baseURL = (settings.baseURL ?? anthropicDefaultBaseURL).replace(/\/+$/, '');
  const host = new URL(baseURL).host.toLowerCase().replace(/[^a-z0-9.]+/g, '-');
  const fingerprint = createHash('sha256').update(`${baseURL}\n${settings.apiKey}`).digest('hex').slice(0, 16);
  return `${host}-${fingerprint}`.replace(/^[^a-z0-9]+/, '');
}
