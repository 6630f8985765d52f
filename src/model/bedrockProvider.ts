// Amazon Bedrock, through Anthropic's Bedrock client and the AWS credential chain (environment,
// AWS_PROFILE, SSO, roles, instance metadata); its endpoint is named after the AWS principal
// whose credentials answer. Loaded only when Bedrock is the provider (the AWS SDK takes a while).
import { Sha256 } from '@aws-crypto/sha256-js';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { createCredentialChain, fromEnv, fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { loadSharedConfigFiles } from '@smithy/shared-ini-file-loader';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ModelClient } from './anthropic.js';
import { platformEndpointId, secretIdentity } from './endpoint.js';
import { ProviderSetupError, type ModelConnection } from './modelConnection.js';
import { providerNames, type ModelSettings } from './providerSettings.js';

export async function connectBedrock(settings: ModelSettings): Promise<ModelConnection> {
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
