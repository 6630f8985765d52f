// The model provider a worker calls, through Anthropic's own SDK client for it and the provider's
// standard credential chain: the Anthropic API (or a gateway through ANTHROPIC_BASE_URL), Amazon
// Bedrock (the AWS chain: environment, AWS_PROFILE, SSO, roles, instance metadata) or Google
// Vertex AI (Application Default Credentials). It also names the worker's model endpoint after
// whose credentials answer: an AWS principal, a Google account, a hash of a key, never a secret.
import { createHash } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { createCredentialChain, fromEnv, fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { loadSharedConfigFiles } from '@smithy/shared-ini-file-loader';
import { SignatureV4 } from '@smithy/signature-v4';
import { GoogleAuth } from 'google-auth-library';
import { createModelClient, type ModelClient } from './anthropic.js';
import { modelEndpointId, platformEndpointId, secretIdentity } from './endpoint.js';
import type { PricingPlace } from './pricing.js';
import { providerNames, type ModelProvider, type ModelSettings } from './providerSettings.js';

export interface ModelConnection {
  provider: ModelProvider;
  client: ModelClient;
  /** The endpoint this worker serves (src/agent/modelEndpoint.ts). */
  endpointId: string;
  place: PricingPlace;
  /** In words, for the worker's log: the provider, its region and project. */
  description: string;
}

/** The provider cannot be used as set up: the message says what to set or run. */
export class ProviderSetupError extends Error {}

const connections = new Map<string, Promise<ModelConnection | null>>();

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
      return connectBedrock(settings);
    case 'vertex':
      return connectVertex(settings);
  }
}

function connectAnthropic(settings: ModelSettings): ModelConnection | null {
  const endpointId = modelEndpointId(settings);
  if (!settings.apiKey || !endpointId) return null;
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

// ── Amazon Bedrock ─────────────────────────────────────────────────────────────────────────

async function connectBedrock(settings: ModelSettings): Promise<ModelConnection> {
  const { bedrock } = settings;
  const region = bedrock.region ?? (await profileRegion(bedrock.profile));
  if (!region) {
    throw new ProviderSetupError(
      `Amazon Bedrock needs a region: set AWS_REGION (e.g. us-east-1), or a region in the AWS profile ${bedrock.profile ?? 'default'}.`,
    );
  }
  const baseURL = bedrock.baseURL ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const common = { awsRegion: region, baseURL, maxRetries: 0, timeout: settings.timeoutMs };
  if (bedrock.bearerToken) {
    return bedrockConnection(
      new AnthropicBedrock({ ...common, apiKey: bedrock.bearerToken }),
      region,
      baseURL,
      secretIdentity('bedrock-api-key', bedrock.bearerToken),
    );
  }
  // One chain for the process, as the AWS CLI orders it (environment first), its credentials
  // kept until they near their expiry (the SDK would resolve them again for every request).
  const credentials = reuseUntilExpiry(createCredentialChain(fromEnv(), fromNodeProviderChain()));
  const principal = await awsPrincipal(credentials, region, bedrock.stsEndpoint);
  const client = new AnthropicBedrock({ ...common, apiKey: null, providerChainResolver: async () => credentials });
  return bedrockConnection(client, region, baseURL, principal);
}

function bedrockConnection(client: ModelClient, region: string, baseURL: string, identity: string): ModelConnection {
  return {
    provider: 'bedrock',
    client,
    endpointId: platformEndpointId({ provider: 'bedrock', region, baseURL, identity }),
    place: { provider: 'bedrock', region },
    description: `${providerNames.bedrock} (${region})`,
  };
}

async function profileRegion(profile: string | undefined): Promise<string | undefined> {
  const files = await loadSharedConfigFiles().catch(() => null);
  return files?.configFile?.[profile ?? 'default']?.region;
}

type AwsCredentialsProvider = ReturnType<typeof fromEnv>;
type AwsCredentials = Awaited<ReturnType<AwsCredentialsProvider>>;

function reuseUntilExpiry(provider: AwsCredentialsProvider): AwsCredentialsProvider {
  let current: Promise<AwsCredentials> | null = null;
  return async () => {
    current ??= provider();
    try {
      const credentials = await current;
      if (credentials.expiration && credentials.expiration.getTime() - Date.now() < 5 * 60_000) {
        current = provider();
        return await current;
      }
      return credentials;
    } catch (error) {
      current = null;
      throw error;
    }
  };
}

/**
 * Whose AWS credentials these are, from STS GetCallerIdentity: the user or role, which stays the
 * same when temporary credentials (SSO, an assumed role) are renewed. An assumed role's session
 * name is left out: the role is the identity.
 */
async function awsPrincipal(
  credentials: AwsCredentialsProvider,
  region: string,
  stsEndpoint: string | undefined,
): Promise<string> {
  let resolved: AwsCredentials;
  try {
    resolved = await credentials();
  } catch (error) {
    throw new ProviderSetupError(
      `No AWS credentials for Amazon Bedrock (${(error as Error).message}): set AWS_PROFILE (after \`aws sso login\` for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run on a host with an instance role.`,
    );
  }
  const url = new URL(stsEndpoint ?? `https://sts.${region}.amazonaws.com/`);
  const body = 'Action=GetCallerIdentity&Version=2011-06-15';
  const signer = new SignatureV4({ service: 'sts', region, credentials: resolved, sha256: Sha256 });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: {},
    headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  });
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: signed.headers, body, signal: AbortSignal.timeout(20_000) });
  } catch (error) {
    throw new ProviderSetupError(
      `Could not reach AWS STS at ${url.host} to learn whose AWS credentials these are (${(error as Error).message}).`,
    );
  }
  const text = await response.text();
  const arn = /<Arn>([^<]+)<\/Arn>/.exec(text)?.[1];
  if (!response.ok || !arn) {
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? text.slice(0, 200);
    throw new ProviderSetupError(
      `AWS refused these credentials (STS GetCallerIdentity answered ${response.status}: ${message}). Check AWS_PROFILE or the AWS keys.`,
    );
  }
  return arn.replace(/^arn:([^:]+):sts::(\d+):assumed-role\/([^/]+)\/.*$/, 'arn:$1:iam::$2:role/$3');
}

// ── Google Vertex AI ───────────────────────────────────────────────────────────────────────

async function connectVertex(settings: ModelSettings): Promise<ModelConnection> {
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
