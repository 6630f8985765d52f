// Google Vertex AI, through Anthropic's Vertex client and Application Default Credentials; its
// endpoint is named after the Google account that answers. Loaded only when Vertex is the provider.
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleAuth } from 'google-auth-library';
import { platformEndpointId, secretIdentity } from './endpoint.js';
import { ProviderSetupError, type ModelConnection } from './modelConnection.js';
import { providerNames, type ModelSettings } from './providerSettings.js';

export async function connectVertex(settings: ModelSettings): Promise<ModelConnection> {
  const { vertex } = settings;
  if (!vertex.region) {
    throw new ProviderSetupError(
      'Google Vertex AI needs a region: set CLOUD_ML_REGION (global, or a region such as us-east5).',
    );
  }
  const auth = new GoogleAuth({ scopes: 'https://www.googleapis.com/auth/cloud-platform' });
  let identity: string;
  try {
    await auth.getAccessToken();
    identity = await googleIdentity(auth);
  } catch (error) {
    throw new ProviderSetupError(
      `No Google credentials for Vertex AI (${(error as Error).message}): run \`gcloud auth application-default login\`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account's key file.`,
    );
  }
  const projectId = vertex.projectId ?? (await auth.getProjectId().catch(() => null));
  if (!projectId) {
    throw new ProviderSetupError(
      'Google Vertex AI needs a project: set ANTHROPIC_VERTEX_PROJECT_ID (the credentials name none).',
    );
  }
  const baseURL =
    vertex.baseURL ??
    (vertex.region === 'global'
      ? 'https://aiplatform.googleapis.com/v1'
      : `https://${vertex.region}-aiplatform.googleapis.com/v1`);
  const client = new AnthropicVertex({
    region: vertex.region,
    projectId,
    baseURL,
    googleAuth: auth,
    maxRetries: 0,
    timeout: settings.timeoutMs,
  });
  return {
    provider: 'vertex',
    client,
    endpointId: platformEndpointId({
      provider: 'vertex',
      region: vertex.region,
      project: projectId,
      baseURL,
      identity,
    }),
    place: { provider: 'vertex', region: vertex.region },
    description: `${providerNames.vertex} (project ${projectId}, ${vertex.region})`,
  };
}

/** The service account's email; for a person's own login (gcloud), a hash of its refresh token. */
async function googleIdentity(auth: GoogleAuth): Promise<string> {
  const credentials = await auth.getCredentials();
  if (credentials.client_email) return `google:${credentials.client_email}`;
  const client = (await auth.getClient()) as { credentials?: { refresh_token?: string | null } };
  const refreshToken = client.credentials?.refresh_token;
  if (refreshToken) return secretIdentity('google-user', refreshToken);
  throw new Error('the credentials name no account');
}
