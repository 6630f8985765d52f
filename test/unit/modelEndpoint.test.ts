import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDebugInput } from '../../src/agent/input.js';
import {
  defaultModelEndpoint,
  modelEndpointPattern,
  modelTaskQueueFor,
  waitingForModelWorker,
} from '../../src/agent/modelEndpoint.js';
import { modelEndpointId } from '../../src/model/endpoint.js';

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
