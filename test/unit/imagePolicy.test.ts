// Which images a repository file may name: ours and the environments built from them, plus what
// the user allowed in DURABLE_DEBUGGER_ALLOWED_IMAGES.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { ImagePolicy, parseAllowedImages } from '../../src/sandbox/environment/imagePolicy.js';

test('by default a repository file may name only the sandbox image and its Python variants, not another run’s environment image', () => {
  const policy = new ImagePolicy('durable-debugger-sandbox:1');
  assert.ok(policy.allows('durable-debugger-sandbox:1'));
  // Built by `setup --python 3.13`, and chosen by the environment step for a requires-python that excludes 3.11.
  assert.ok(policy.allows('durable-debugger-sandbox:1-python3.13'));
  for (const image of [
    'durable-debugger-sandbox:2',
    'durable-debugger-sandbox:2-python3.13',
    'python:3.12',
    'docker:dind',
    'postgres',
    'durable-debugger-envy:1',
    // Another repository's environment, which may hold that repository's code (COPY . /app).
    'durable-debugger-env:0123456789abcdef',
  ])
    assert.ok(!policy.allows(image), image);
  const refusal = policy.refusal('docker:dind', 'durable-debugger.json');
  assert.match(
    refusal ?? '',
    /^durable-debugger\.json names the image docker:dind, which repository files may not choose/,
  );
  assert.match(refusal ?? '', /DURABLE_DEBUGGER_ALLOWED_IMAGES/);
  assert.match(refusal ?? '', /run's input \(environment\.image\)/);
});

test('DURABLE_DEBUGGER_ALLOWED_IMAGES: an exact tag, a name for every tag, a prefix, Docker Hub spellings', () => {
  const allowed = parseAllowedImages('python:3.12-slim, node ghcr.io/acme/*');
  assert.deepEqual(allowed, ['python:3.12-slim', 'node', 'ghcr.io/acme/*']);
  const policy = new ImagePolicy('durable-debugger-sandbox:1', allowed);
  assert.ok(policy.allows('python:3.12-slim'));
  assert.ok(policy.allows('docker.io/library/python:3.12-slim'));
  assert.ok(!policy.allows('python:3.13'), 'an exact tag allows that tag only');
  assert.ok(policy.allows('node:20'));
  assert.ok(policy.allows('node'));
  assert.ok(!policy.allows('nodered/node-red'), 'a name is not a prefix');
  assert.ok(policy.allows('ghcr.io/acme/builder:7'));
  assert.ok(!policy.allows('ghcr.io/other/builder:7'));
  assert.equal(policy.refusal('node:22', 'durable-debugger.json'), null);
});

test('the worker reads DURABLE_DEBUGGER_ALLOWED_IMAGES', () => {
  assert.deepEqual(loadConfig({}).allowedImages, []);
  assert.deepEqual(loadConfig({ DURABLE_DEBUGGER_ALLOWED_IMAGES: 'python:3.12,node' }).allowedImages, [
    'python:3.12',
    'node',
  ]);
});
