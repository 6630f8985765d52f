// Claude on Amazon Bedrock and Google Vertex AI, offline: the real CLI runs a fixture to `fixed`
// through Anthropic's own Bedrock and Vertex SDK clients and the providers' standard credential
// chains (an AWS profile from the shared config files; Google's metadata server), against the
// fake API speaking as each platform (src/demo/fakePlatforms.ts): SigV4-checked requests on
// Bedrock, a stub OAuth token on Vertex.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import type { DebugReport } from '../../src/agent/report.js';
import { apiTools } from '../../src/agent/tools.js';
import { requestModelTurn } from '../../src/model/anthropic.js';
import { FakeAnthropicApi } from '../../src/demo/fakeAnthropicApi.js';
import type { FakeBedrock, FakeVertex } from '../../src/demo/fakePlatforms.js';
import { loadFixture, scriptsByName } from '../../src/demo/fixtures.js';
import { startTestServer, type TestServer } from '../../harness/devStack.js';
import { killCliProcesses, runCli } from '../support/cli.js';

let server: TestServer;
let folder: string;
const fakes: FakeAnthropicApi[] = [];

before(async () => {
  server = await startTestServer();
  folder = await mkdtemp(join(tmpdir(), 'dd-providers-'));
});
after(async () => {
  killCliProcesses();
  for (const fake of fakes) await fake.stop();
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

async function fakePlatform(platform: FakeBedrock | FakeVertex): Promise<FakeAnthropicApi> {
  const fake = new FakeAnthropicApi({ scripts: scriptsByName([await loadFixture('01_off_by_one')]), platform });
  await fake.start();
  fakes.push(fake);
  return fake;
}

/** None of the settings of other providers or of the machine's own credentials reach the CLI. */
const clean = {
  ANTHROPIC_API_KEY: '',
  ANTHROPIC_BASE_URL: '',
  ANTHROPIC_MODEL: '',
  AWS_ACCESS_KEY_ID: '',
  AWS_SECRET_ACCESS_KEY: '',
  AWS_SESSION_TOKEN: '',
  AWS_REGION: '',
  AWS_DEFAULT_REGION: '',
  AWS_BEARER_TOKEN_BEDROCK: '',
  GOOGLE_APPLICATION_CREDENTIALS: '',
  GOOGLE_CLOUD_PROJECT: '',
  GCLOUD_PROJECT: '',
};

function reportOf(output: string): DebugReport {
  const line = output.split('\n').find((candidate) => candidate.startsWith('{"type":"report"'));
  assert.ok(line, `no report in:\n${output}`);
  return (JSON.parse(line) as { report: DebugReport }).report;
}

test('--provider bedrock: a fixture runs to fixed through the Bedrock SDK, signed with the credentials of an AWS profile', async () => {
  const credentials = {
    accessKeyId: 'AKIAFAKEBEDROCK00001',
    secretAccessKey: 'fake-secret-for-sigv4-checks',
    arn: 'arn:aws:sts::123456789012:assumed-role/debugger/alice-session',
  };
  const fake = await fakePlatform({ kind: 'bedrock', region: 'eu-west-3', credentials });
  // The standard AWS chain: a named profile in the shared files, its region in the config file.
  const configFile = join(folder, 'aws-config');
  const credentialsFile = join(folder, 'aws-credentials');
  await writeFile(configFile, '[profile debugging]\nregion = eu-west-3\n');
  const writeCredentials = (secret: string) =>
    writeFile(
      credentialsFile,
      `[debugging]\naws_access_key_id = ${credentials.accessKeyId}\naws_secret_access_key = ${secret}\n`,
    );
  const env = {
    ...clean,
    AWS_PROFILE: 'debugging',
    AWS_CONFIG_FILE: configFile,
    AWS_SHARED_CREDENTIALS_FILE: credentialsFile,
    AWS_ENDPOINT_URL_STS: fake.url,
    ANTHROPIC_BEDROCK_BASE_URL: fake.url,
  };

  // A wrong secret signs wrongly: the fake refuses the signature, and the CLI says what to check.
  await writeCredentials('not-the-secret');
  const refused = await runCli(server, ['run', 'fixtures/01_off_by_one', '--provider', 'bedrock'], env);
  assert.equal(refused.code, 2, refused.output);
  assert.match(refused.output, /AWS refused these credentials .*signature we calculated does not match/);

  await writeCredentials(credentials.secretAccessKey);
  const result = await runCli(server, ['run', 'fixtures/01_off_by_one', '--provider', 'bedrock', '--json'], env);
  assert.equal(result.code, 0, result.output);
  const report = reportOf(result.stdout);
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.equal(report.model, 'global.anthropic.claude-sonnet-4-6', "Bedrock's name of the default model");
  assert.match(report.answeredBy ?? '', /on Amazon Bedrock/);
  // Global endpoint: Anthropic's price, so the cost is known.
  assert.ok(report.costUsd !== null && report.costUsd > 0);

  const calls = fake.requests.filter((request) => request.status === 200);
  assert.ok(calls.length >= 3, 'the model was called through the fake Bedrock');
  assert.ok(calls.every((call) => call.body.model === 'global.anthropic.claude-sonnet-4-6'));
  assert.ok(calls.every((call) => call.apiKey === credentials.accessKeyId));
  assert.deepEqual(fake.rejected, [], 'no request broke the API’s rules');
  // Prompt caching goes through Bedrock too: later requests read the earlier ones' prefix.
  assert.ok(calls.some((call) => (call.usage?.cache_read_input_tokens ?? 0) > 0));
  assert.ok(!result.output.includes(credentials.secretAccessKey), 'the secret is never printed');
});

test('--provider vertex: a fixture runs to fixed through the Vertex SDK, with the token of Google’s metadata server', async () => {
  const vertex: FakeVertex = {
    kind: 'vertex',
    project: 'debugging-project',
    region: 'us-east5',
    token: 'ya29.stub-token-from-the-fake-metadata-server',
    serviceAccountEmail: 'debugger@debugging-project.iam.gserviceaccount.com',
  };
  const fake = await fakePlatform(vertex);
  const result = await runCli(
    server,
    ['run', 'fixtures/01_off_by_one', '--provider', 'vertex', '--model', 'claude-sonnet-4-5@20250929', '--json'],
    {
      ...clean,
      // Application Default Credentials: no key file, so the chain asks the metadata server (this fake).
      GCE_METADATA_HOST: new URL(fake.url).host,
      CLOUD_ML_REGION: vertex.region,
      ANTHROPIC_VERTEX_PROJECT_ID: '',
      ANTHROPIC_VERTEX_BASE_URL: `${fake.url}/v1`,
    },
  );
  assert.equal(result.code, 0, result.output);
  const report = reportOf(result.stdout);
  assert.equal(report.status, 'fixed', report.stopDetail);
  assert.match(report.answeredBy ?? '', /on Google Vertex AI/);
  const calls = fake.requests.filter((request) => request.status === 200);
  assert.ok(calls.length >= 3);
  assert.ok(calls.every((call) => call.apiKey === vertex.token));
  assert.ok(calls.every((call) => call.body.model === 'claude-sonnet-4-5@20250929'));
  assert.deepEqual(fake.rejected, []);
  // A regional endpoint: 10% above the global price (claude-sonnet-4-5: $3 / $15 per million tokens).
  const tokens = report.tokens;
  const globalPrice =
    (tokens.inputTokens * 3 +
      tokens.outputTokens * 15 +
      tokens.cacheWriteTokens * 3.75 +
      tokens.cacheReadTokens * 0.3) /
    1e6;
  assert.ok(Math.abs((report.costUsd ?? 0) - globalPrice * 1.1) < 1e-9, `${report.costUsd} vs ${globalPrice * 1.1}`);
});

test('a large output budget streams from Bedrock: AWS event-stream framing, decoded by the SDK into the same reply', async () => {
  const credentials = {
    accessKeyId: 'AKIAFAKESTREAM000001',
    secretAccessKey: 'stream-secret',
    arn: 'arn:aws:iam::1:user/s',
  };
  const fake = await fakePlatform({ kind: 'bedrock', region: 'us-east-1', credentials });
  const client = new AnthropicBedrock({
    awsRegion: 'us-east-1',
    baseURL: fake.url,
    awsAccessKey: credentials.accessKeyId,
    awsSecretKey: credentials.secretAccessKey,
    apiKey: null,
    maxRetries: 0,
  });
  const reply = await requestModelTurn(
    client,
    {
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      maxOutputTokens: 32_000,
      system: 'You fix bugs.',
      tools: apiTools({ allowCommands: false }),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Repository: 01_off_by_one\nFix it.' }] }],
    },
    { place: { provider: 'bedrock', region: 'us-east-1' } },
  );
  const [request] = fake.requests;
  assert.equal(request?.status, 200, request?.error ?? '');
  assert.equal(request?.stream, true, 'the answer was streamed');
  assert.equal(
    request?.body.model,
    'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    'the model id, with its colon, from the signed path',
  );
  assert.equal(reply.stopReason, 'tool_use');
  assert.ok(reply.content.some((block) => block.type === 'tool_use'));
  assert.equal(reply.usage.outputTokens, request?.usage?.output_tokens);
  assert.match(reply.answeredBy, /on Amazon Bedrock/);
  // A geographic profile is a regional endpoint: 10% above the global price.
  const cost =
    (reply.usage.inputTokens * 3 + reply.usage.outputTokens * 15 + reply.usage.cacheWriteTokens * 3.75) / 1e6;
  assert.ok(Math.abs((reply.costUsd ?? 0) - cost * 1.1) < 1e-9);
});
