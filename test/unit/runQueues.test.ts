// Where a run's activities go: the private queue of the CLI that started it, else the workflow's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDebugInput } from '../../src/agent/input.js';
import {
  activityQueueOf,
  modelQueueOf,
  privateQueueName,
  privateQueuePattern,
  waitingForModelWorkerOf,
} from '../../src/agent/runQueues.js';

const privateQueue = privateQueueName('Alice-Laptop.local', 'alice smith', '0123abcd');

test('a private queue names its machine and user, and is a valid input field', () => {
  assert.equal(privateQueue, 'durable-debugger-cli-alice-laptop.local-alice-smith-0123abcd');
  assert.match(privateQueue, privateQueuePattern);
  assert.equal(parseDebugInput({ repo: '/r', privateQueue }).privateQueue, privateQueue);
  assert.throws(
    () => parseDebugInput({ repo: '/r', privateQueue: 'durable-debugger' }),
    /privateQueue: a private task queue/,
  );
});

test('a run with a private queue sends every activity there, and its model calls when it names an endpoint', () => {
  const shared = 'durable-debugger';
  assert.equal(activityQueueOf({}, shared), shared);
  assert.equal(activityQueueOf({ privateQueue }, shared), privateQueue);
  assert.equal(
    modelQueueOf({ modelEndpoint: 'api.anthropic.com-1234' }, shared),
    `${shared}/model/api.anthropic.com-1234`,
  );
  assert.equal(
    modelQueueOf({ privateQueue, modelEndpoint: 'api.anthropic.com-1234' }, shared),
    `${privateQueue}/model/api.anthropic.com-1234`,
  );
  // Its starter had no key: the deployment's workers of the default endpoint answer.
  assert.equal(modelQueueOf({ privateQueue }, shared), `${shared}/model/default`);
  assert.match(
    waitingForModelWorkerOf({ privateQueue, modelEndpoint: 'api.anthropic.com-1234' }, shared),
    /the durable-debugger command that started this run .*resume/,
  );
});
