import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type Docker from 'dockerode';
import type { PreparedEnvironment } from '../../src/agent/environment.js';
import { ImageEvents, imageName } from '../../src/sandbox/environment/imageEvents.js';
import {
  RememberedPreparations,
  type PreparationRequest,
} from '../../src/sandbox/environment/rememberedPreparations.js';

/** ImageEvents over a stream the test writes Docker's event lines into. */
async function watchedEvents() {
  let stream = new PassThrough();
  const events = new ImageEvents({
    getEvents: async () => {
      if (stream.destroyed) stream = new PassThrough();
      return stream;
    },
  } as unknown as Docker);
  const startedAt = await events.watched();
  assert.equal(startedAt, 0);
  const tell = async (action: string, id: string, name = id) => {
    stream.write(`${JSON.stringify({ Type: 'image', Action: action, Actor: { ID: id, Attributes: { name } } })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { events, stream: () => stream, tell };
}

const request = (snapshotId: string, scope = 'alice'): PreparationRequest => ({
  snapshotId,
  choice: {},
  owner: { scope },
});

const found = (image: string): PreparedEnvironment => ({
  image,
  containerEnv: ['PATH=/workspace/.venv/bin:/usr/bin'],
  kind: 'python',
  description: 'python · pip install -r requirements.txt',
  reused: true,
  buildMs: 0,
  packages: 3,
  toolchain: ['python 3.11'],
});

/** A preparation that asked about the sandbox image and its own, both found. */
const chain = ['durable-debugger-sandbox:1', 'sha256:base', 'durable-debugger-env:a', 'sha256:envA'];

test('a preparation found again is returned for the same request under the same conditions', async () => {
  const { events } = await watchedEvents();
  const remembered = new RememberedPreparations(events);
  assert.equal(remembered.find(request('s1'), 'day-1'), undefined);
  remembered.keep(request('s1'), { environment: found('env:a'), conditions: 'day-1', images: chain, startedAt: 0 });
  const again = remembered.find(request('s1'), 'day-1');
  assert.deepEqual(again, found('env:a'));
  // A copy: what a caller does with it does not change what is remembered.
  again?.toolchain?.push('changed');
  assert.deepEqual(remembered.find(request('s1'), 'day-1'), found('env:a'));
  // Another snapshot, another user's scope: not the same request.
  assert.equal(remembered.find(request('s2'), 'day-1'), undefined);
  assert.equal(remembered.find(request('s1', 'bob'), 'day-1'), undefined);
  // A preparation that found nothing to install is remembered too.
  remembered.keep(request('s3'), { environment: null, conditions: 'day-1', images: [], startedAt: 0 });
  assert.equal(remembered.find(request('s3'), 'day-1'), null);
  // Other conditions (the day, the host's settings) forget it.
  assert.equal(remembered.find(request('s1'), 'day-2'), undefined);
  assert.equal(remembered.find(request('s1'), 'day-1'), undefined, 'forgotten, not only missed');
});

test('an event touching one of its images forgets it; events about other images do not', async () => {
  const { events, tell } = await watchedEvents();
  const remembered = new RememberedPreparations(events);
  const keep = () =>
    remembered.keep(request('s1'), {
      environment: found('durable-debugger-env:a'),
      conditions: 'c',
      images: chain,
      startedAt: events.current(),
    });
  keep();
  await tell('tag', 'sha256:other', 'durable-debugger-env:b'); // another repository's build
  await tell('delete', 'sha256:old');
  await tell('tag', 'sha256:base', 'my-sandbox:copy'); // a new name for one of its images changes nothing of it
  assert.ok(remembered.find(request('s1'), 'c'));

  await tell('untag', 'sha256:envA'); // docker rmi durable-debugger-env:a
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'its own image removed');

  keep();
  await tell('tag', 'sha256:rebuilt', 'durable-debugger-sandbox:1'); // the sandbox image rebuilt: its name moved
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'a name it asked about moved');

  keep();
  await tell('prune', '');
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'an event that names nothing touches every image');
});

test('a preparation during which one of its images was touched, or the engine not watched, is not kept; nor a build', async () => {
  const { events, stream, tell } = await watchedEvents();
  const remembered = new RememberedPreparations(events);
  const startedAt = events.current();
  await tell('delete', 'sha256:base');
  remembered.keep(request('s1'), { environment: found('env:a'), conditions: 'c', images: chain, startedAt });
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'touched while it ran');

  remembered.keep(request('s1'), {
    environment: { ...found('env:a'), reused: false, buildMs: 30_000 },
    conditions: 'c',
    images: chain,
    startedAt: events.current(),
  });
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'a build');

  remembered.keep(request('s1'), { environment: found('env:a'), conditions: 'c', images: chain, startedAt: null });
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'not watched when it started');

  remembered.keep(request('s1'), {
    environment: found('env:a'),
    conditions: 'c',
    images: chain,
    startedAt: events.current(),
  });
  stream().destroy(); // the engine restarted
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(events.current(), null);
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'the watch lost');

  // Watched again (a worker's builder is closed and used again): what was kept before is not trusted.
  assert.notEqual(await events.watched(), null);
  remembered.keep(request('s1'), {
    environment: found('env:a'),
    conditions: 'c',
    images: chain,
    startedAt: events.current(),
  });
  assert.ok(remembered.find(request('s1'), 'c'), 'kept while watched');
  events.close();
  const again = await events.watched();
  assert.notEqual(again, null);
  assert.equal(remembered.find(request('s1'), 'c'), undefined, 'kept before the watch was closed');
  remembered.keep(request('s1'), { environment: found('env:a'), conditions: 'c', images: chain, startedAt: again });
  assert.ok(remembered.find(request('s1'), 'c'), 'kept once watched again');
});

test('the least recently used go first beyond the limit', async () => {
  const { events } = await watchedEvents();
  const remembered = new RememberedPreparations(events, 2);
  const keep = (snapshot: string) =>
    remembered.keep(request(snapshot), { environment: found(snapshot), conditions: 'c', images: [], startedAt: 0 });
  keep('s1');
  keep('s2');
  assert.ok(remembered.find(request('s1'), 'c'));
  keep('s3');
  assert.ok(remembered.find(request('s1'), 'c'));
  assert.equal(remembered.find(request('s2'), 'c'), undefined);
  assert.ok(remembered.find(request('s3'), 'c'));
});

test('image names as the engine spells them in its events', () => {
  assert.equal(imageName('python:3.12'), 'python:3.12');
  assert.equal(imageName('docker.io/library/python:3.12'), 'python:3.12');
  assert.equal(imageName('python'), 'python:latest');
  assert.equal(imageName('registry.example.com:5000/team/tools'), 'registry.example.com:5000/team/tools:latest');
  assert.equal(imageName('ghcr.io/a/b@sha256:0f'), 'ghcr.io/a/b@sha256:0f');
  assert.equal(imageName('sha256:0f'), 'sha256:0f');
});

test('an engine that does not answer the watch: preparations go on unwatched, and it is not asked again at once', async (t) => {
  let asked = 0;
  const events = new ImageEvents({
    getEvents: () => {
      asked++;
      return new Promise(() => undefined);
    },
  } as unknown as Docker);
  // The watch's timer does not keep a process alive: a worker's own handles do, here this one.
  const alive = setInterval(() => undefined, 1_000);
  t.after(() => clearInterval(alive));
  const started = performance.now();
  assert.equal(await events.watched(), null);
  assert.ok(performance.now() - started < 5_000);
  assert.equal(await events.watched(), null);
  assert.equal(asked, 1);
});
