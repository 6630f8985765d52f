// The model provider a worker calls, through Anthropic's own SDK client for it and the provider's
// standard credential chain: the Anthropic API (or a gateway through ANTHROPIC_BASE_URL), Amazon
// Bedrock (bedrockProvider.ts) or Google Vertex AI (vertexProvider.ts), each loaded only when it
// is the one asked for. It also names the worker's model endpoint after whose credentials answer:
// an AWS principal, a Google account, a hash of a key, never a secret.
import { createHash } from 'node:crypto';
import { modelEndpointId } from './endpoint.js';
import type { ModelConnection } from './modelConnection.js';
import { providerNames, type ModelSettings } from './providerSettings.js';

const connections = new Map<string, Promise<ModelConnection | null>>();

/**
 * The endpoint `settings` name, for a command that starts runs and calls no model itself: for the
 * Anthropic API it is computed (no SDK is loaded); Bedrock and Vertex ask whose credentials these are.
 */
export async function modelEndpointOf(settings: ModelSettings): Promise<string | null> {
  if (settings.provider === 'anthropic') return modelEndpointId(settings);
  return (await connectModelProvider(settings))?.endpointId ?? null;
}

/**
 * The client and endpoint of `settings`, made once per process (a `run` command's session and
 * worker share it); null for the Anthropic API without a key (the worker then answers no model
 * calls, as before providers).
 */
export function connectModelProvider(settings: ModelSettings): Promise<ModelConnection | null> {
  const key = createHash('sha256').update(JSON.stringify(settings)).digest('hex');
  let connection = connections.get(key);
  if (!connection) {
    connection = connect(settings);
    connections.set(key, connection);
    connection.catch(() => connections.delete(key));
  }
  return connection;
}

async function connect(settings: ModelSettings): Promise<ModelConnection | null> {
  switch (settings.provider) {
    case 'anthropic':
      return connectAnthropic(settings);
    case 'bedrock':
      return (await import('./bedrockProvider.js')).connectBedrock(settings);
    case 'vertex':
      return (await import('./vertexProvider.js')).connectVertex(settings);
  }
}

async function connectAnthropic(settings: ModelSettings): Promise<ModelConnection | null> {
  const endpointId = modelEndpointId(settings);
  if (!settings.apiKey || !endpointId) return null;
  const { createModelClient } = await import('./anthropic.js');
  return {
    provider: 'anthropic',
    client: createModelClient({ apiKey: settings.apiKey, baseURL: settings.baseURL, timeoutMs: settings.timeoutMs }),
    endpointId,
    place: { provider: 'anthropic' },
    description: settings.baseURL
      ? `the Anthropic API through ${new URL(settings.baseURL).host}`
      : providerNames.anthropic,
  };
}
