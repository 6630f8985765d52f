// Which service answers the model calls, and the settings each one needs: the Anthropic API (or an
// Anthropic-compatible gateway through ANTHROPIC_BASE_URL), Amazon Bedrock, or Google Vertex AI.
// Plain data (config.ts reads it); connecting is src/model/providers.ts.

export const modelProviders = ['anthropic', 'bedrock', 'vertex'] as const;
export type ModelProvider = (typeof modelProviders)[number];

export interface ModelSettings {
  provider: ModelProvider;
  /** The Anthropic API's key and base URL (a gateway's), for the `anthropic` provider. */
  apiKey: string | undefined;
  baseURL: string | undefined;
  /** The model runs use unless they name one, as the provider names it. */
  model: string;
  timeoutMs: number;
  bedrock: {
    /** AWS_REGION (or AWS_DEFAULT_REGION); else the region of the AWS profile. */
    region?: string;
    profile?: string;
    /** A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) instead of AWS credentials. */
    bearerToken?: string;
    /** Where AWS STS answers (AWS_ENDPOINT_URL_STS), to learn whose credentials these are. */
    stsEndpoint?: string;
    baseURL?: string;
  };
  vertex: { region?: string; projectId?: string; baseURL?: string };
}

/** Claude Sonnet 4.6 as each provider names it (Bedrock: its global cross-region profile). */
export const defaultModels: Record<ModelProvider, string> = {
  anthropic: 'claude-sonnet-4-6',
  bedrock: 'global.anthropic.claude-sonnet-4-6',
  vertex: 'claude-sonnet-4-6',
};

export const providerNames: Record<ModelProvider, string> = {
  anthropic: 'the Anthropic API',
  bedrock: 'Amazon Bedrock',
  vertex: 'Google Vertex AI',
};
