// The scripted model: a local fake of the Anthropic Messages API playing the fixtures' scripts
// (fixtures/<name>/script.json) through the real SDK. Used by `demo` without a key and by
// `dev --scripted`; its workers serve the `scripted` endpoint, never a real one.
import type Anthropic from '@anthropic-ai/sdk';
import { createModelClient } from '../model/anthropic.js';
import { FakeAnthropicApi } from './fakeAnthropicApi.js';
import { loadFixtures, scriptsByName, type Fixture } from './fixtures.js';

export interface ScriptedModel {
  fake: FakeAnthropicApi;
  anthropic: Anthropic;
  fixtures: Fixture[];
  stop(): Promise<void>;
}

/** `latencyMs`: a pause before every reply, so that a run can be watched and steered. */
export async function startScriptedModel(options: { latencyMs?: number } = {}): Promise<ScriptedModel> {
  const fixtures = await loadFixtures();
  const fake = new FakeAnthropicApi({ scripts: scriptsByName(fixtures), latencyMs: options.latencyMs });
  await fake.start();
  return {
    fake,
    fixtures,
    anthropic: createModelClient({ apiKey: 'scripted-model', baseURL: fake.url, timeoutMs: 60_000 }),
    stop: () => fake.stop(),
  };
}
