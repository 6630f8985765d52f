import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDebugInput } from '../../src/agent/input.js';
import {
  defaultModelEndpoint,
  modelEndpointPattern,
  modelTaskQueueFor,
  modelWorkerWaitMs,
  waitingForModelWorker,
} from '../../src/agent/modelEndpoint.js';
import { modelEndpointId, platformEndpointId, secretIdentity } from '../../src/model/endpoint.js';

test('a model endpoint is named by base URL host and a fingerprint of base URL and key, never the key', () => {
  const key = 'sk-ant-api03-secret';
  const id = modelEndpointId({ apiKey: key, baseURL: undefined }) as string;
  assert.match(id, /^api\.anthropic\.com-[0-9a-f]{16}$/);
  assert.ok(!id.includes('secret'));
  assert.match(id, modelEndpointPattern);
  // The same settings give the same endpoint (a trailing slash is the same URL); other settings another.
  assert.equal(modelEndpointId({ apiKey: key, baseURL: 'https://api.anthropic.com/' }), id);
  assert.notEqual(modelEndpointId({ apiKey: `${key}x`, baseURL: undefined }), id);
  assert.notEqual(modelEndpointId({ apiKey: key, baseURL: 'http://127.0.0.1:4010' }), id);
  assert.match(
    modelEndpointId({ apiKey: key, baseURL: 'http://user:pass@127.0.0.1:4010/v1' }) as string,
    /^127\.0\.0\.1-4010-[0-9a-f]{16}$/,
  );
  // No key, no endpoint: such a worker answers no model calls.
  assert.equal(modelEndpointId({ apiKey: undefined, baseURL: 'http://127.0.0.1:4010' }), null);
});

test('a Bedrock or Vertex endpoint is named by provider and region, with a fingerprint of region, project, base URL and whose credentials', () => {
  const alice = {
    provider: 'bedrock' as const,
    region: 'us-east-1',
    baseURL: 'https://bedrock-runtime.us-east-1.amazonaws.com',
    identity: 'arn:aws:iam::111111111111:role/alice',
  };
  const id = platformEndpointId(alice);
  assert.match(id, /^bedrock\.us-east-1-[0-9a-f]{16}$/);
  assert.match(id, modelEndpointPattern);
  assert.ok(!id.includes('111111111111'), 'not even the account is shown');
  assert.equal(platformEndpointId({ ...alice, baseURL: `${alice.baseURL}/` }), id);
  assert.notEqual(platformEndpointId({ ...alice, identity: 'arn:aws:iam::222222222222:role/bob' }), id);
  assert.notEqual(platformEndpointId({ ...alice, region: 'eu-west-1' }), id);
  const vertex = {
    ...alice,
    provider: 'vertex' as const,
    region: 'global',
    identity: 'google:a@b.iam.gserviceaccount.com',
  };
  assert.notEqual(platformEndpointId({ ...vertex, project: 'one' }), platformEndpointId({ ...vertex, project: 'two' }));
  // A key used as an identity is hashed before it gets near an endpoint's name.
  const hashed = secretIdentity('bedrock-api-key', 'ABSKsecret-bedrock-key');
  assert.ok(!hashed.includes('secret-bedrock-key'));
  assert.notEqual(hashed, secretIdentity('bedrock-api-key', 'ABSKother-key'));
});

test('a run waiting for a Bedrock or Vertex worker is told to start one with that provider', () => {
  assert.match(
    waitingForModelWorker('bedrock.us-east-1-0123456789abcdef', 'q'),
    /durable-debugger worker --provider bedrock` with the AWS credentials and region/,
  );
  assert.match(waitingForModelWorker('vertex.global-0123456789abcdef', 'q'), /--provider vertex/);
});

test('runs that name no endpoint go to the default endpoint’s queue, and the wait says what to start', () => {
  assert.equal(modelTaskQueueFor('durable-debugger', undefined), `durable-debugger/model/${defaultModelEndpoint}`);
  assert.equal(modelTaskQueueFor('durable-debugger', 'scripted'), 'durable-debugger/model/scripted');
  assert.match(
    waitingForModelWorker(undefined, 'q'),
    /default model endpoint \(task queue q\/model\/default\): start `durable-debugger worker` with ANTHROPIC_API_KEY set, or `durable-debugger dev --scripted`/,
  );
  assert.match(waitingForModelWorker('scripted', 'q'), /the scripted model .*start `durable-debugger dev --scripted`$/);
});

test('the run input accepts an endpoint name and refuses anything else', () => {
  assert.equal(
    parseDebugInput({ repo: '/r', modelEndpoint: 'api.anthropic.com-0123456789abcdef' }).modelEndpoint,
    'api.anthropic.com-0123456789abcdef',
  );
  assert.throws(
    () => parseDebugInput({ repo: '/r', modelEndpoint: 'Bad Name/../x' }),
    /modelEndpoint: a model endpoint name/,
  );
});

test('waits for a model worker double from the first, up to the longest and never past the time budget', () => {
  const wait = { firstSeconds: 30, maxSeconds: 600 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 100].map((waits) => modelWorkerWaitMs(wait, waits) / 1000),
    [60, 120, 240, 480, 600, 600, 600],
  );
  assert.equal(modelWorkerWaitMs(wait, 3, 90_000), 90_000, 'the time budget ends the wait');
  assert.equal(modelWorkerWaitMs(wait, 3, -5), 1_000, 'at least a second');
  assert.equal(modelWorkerWaitMs({ firstSeconds: 30, maxSeconds: 10 }, 2), 30_000, 'never shorter than the first');
  // With the defaults, a day of waiting is about 150 waits (each about 5 history events), not 2,880.
  let waits = 0;
  for (let elapsed = 30_000; elapsed < 86_400_000; waits++) elapsed += modelWorkerWaitMs(wait, waits + 1);
  assert.ok(waits < 150, `${waits} waits in a day`);
  assert.equal(parseDebugInput({ repo: '/r' }).modelWorkerWait.firstSeconds, 30);
});
