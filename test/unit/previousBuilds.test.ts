import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { KeptAnswers } from '../../src/sandbox/environment/keptAnswers.js';
import { PreviousBuilds } from '../../src/sandbox/environment/previousBuilds.js';

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

test("a repository's previous build is found by its user, path, dependencies' image and folder, and only while its image is there", async () => {
  const folder = await mkdtemp(join(tmpdir(), 'previous-builds-'));
  folders.push(folder);
  const images = new Set(['project-1']);
  const builds = new PreviousBuilds(new KeptAnswers(folder), async (image) => images.has(image));
  const build = { scope: 'alice', repository: '/home/alice/semver', dependencies: 'deps', folder: '/opt/build' };
  assert.equal(await builds.of(build), null);
  await builds.made(build, 'project-1');
  assert.equal(await builds.of(build), 'project-1');
  for (const other of [
    { ...build, scope: 'bob' },
    { ...build, repository: '/home/alice/semver-fork' },
    { ...build, dependencies: 'deps-2' },
    { ...build, folder: '/opt/other' },
  ])
    assert.equal(await builds.of(other), null, JSON.stringify(other));
  images.delete('project-1');
  assert.equal(await builds.of(build), null);
});
