import assert from 'node:assert/strict';
import { test } from 'node:test';
import type Docker from 'dockerode';
import { ImageLookups } from '../../src/sandbox/environment/imageLookups.js';

/** A Docker client that knows `present` images and counts what it is asked. */
function dockerKnowing(present: Set<string>) {
  const asked: string[] = [];
  const docker = {
    getImage: (name: string) => ({
      inspect: async () => {
        asked.push(name);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (!present.has(name)) throw new Error(`no such image: ${name}`);
        return { Id: `sha256:${name}` };
      },
    }),
  } as unknown as Docker;
  return { docker, asked };
}

test('a found image is asked about once, also by lookups made at the same time', async () => {
  const { docker, asked } = dockerKnowing(new Set(['toolchain']));
  const lookups = new ImageLookups(docker);
  const [first, second] = await Promise.all([lookups.inspect('toolchain'), lookups.inspect('toolchain')]);
  assert.equal(first?.Id, 'sha256:toolchain');
  assert.equal(second, first);
  assert.equal((await lookups.inspect('toolchain'))?.Id, 'sha256:toolchain');
  assert.deepEqual(asked, ['toolchain']);
});

test('a missing image is asked about again: a build may have made it meanwhile', async () => {
  const present = new Set<string>();
  const { docker, asked } = dockerKnowing(present);
  const lookups = new ImageLookups(docker);
  assert.equal(await lookups.inspect('env:abc'), null);
  present.add('env:abc');
  assert.equal((await lookups.inspect('env:abc'))?.Id, 'sha256:env:abc');
  assert.deepEqual(asked, ['env:abc', 'env:abc']);
});

test('the names asked about, found or not, and the ids found are what the preparation depends on', async () => {
  const { docker } = dockerKnowing(new Set(['durable-debugger-sandbox:1']));
  const lookups = new ImageLookups(docker);
  await lookups.inspect('durable-debugger-sandbox:1');
  await lookups.inspect('python');
  assert.deepEqual(lookups.images().sort(), [
    'durable-debugger-sandbox:1',
    'python:latest',
    'sha256:durable-debugger-sandbox:1',
  ]);
});
