// What a worker calls the model through: the provider's client, and the endpoint it serves.
import type { ModelClient } from './anthropic.js';
import type { PricingPlace } from './pricing.js';
import type { ModelProvider } from './providerSettings.js';

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
