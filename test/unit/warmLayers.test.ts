import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { KeptAnswers } from '../../src/sandbox/environment/keptAnswers.js';
import { nearestFirst, WarmLayers } from '../../src/sandbox/environment/warmLayers.js';

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

async function layersWith(images: Set<string>) {
  const folder = await mkdtemp(join(tmpdir(), 'warm-layers-'));
  folders.push(folder);
  return { folder, layers: new WarmLayers(new KeptAnswers(folder), async (image) => images.has(image)) };
}

test('the nearest layer shares the most lines, the newest among equals; layers made on another are no base', () => {
  const layers = [
    { summary: 'fmt\ntesting', image: 'a', base: null },
    { summary: 'fmt\ngithub.com/mattn/go-sqlite3\ntesting', image: 'b', base: null },
    { summary: 'fmt\ngithub.com/mattn/go-sqlite3\nnet/http\ntesting', image: 'c', base: 'b' },
    { summary: 'os\ntesting', image: 'd', base: null },
    { summary: 'strings', image: 'e', base: null },
  ];
  const order = nearestFirst(layers, 'encoding/csv\nfmt\ngithub.com/mattn/go-sqlite3\ntesting');
  assert.deepEqual(
    order.map((layer) => layer.image),
    ['b', 'a', 'd'],
  );
  assert.deepEqual(nearestFirst(layers, 'unicode'), []);
});

test('a summary seen before is made on the base it was made on; a new one on the nearest layer that is still there', async () => {
  const images = new Set(['deps', 'warm-1', 'warm-2']);
  const { layers } = await layersWith(images);
  assert.deepEqual(await layers.baseFor('deps', 'go', 'fmt\ntesting'), { base: 'deps', known: false });
  await layers.made('deps', 'go', { summary: 'fmt\ntesting', image: 'warm-1', base: null });
  assert.deepEqual(await layers.baseFor('deps', 'go', 'fmt\ntesting'), { base: 'deps', known: true });
  // One import more: on the first layer.
  assert.deepEqual(await layers.baseFor('deps', 'go', 'encoding/csv\nfmt\ntesting'), { base: 'warm-1', known: false });
  await layers.made('deps', 'go', { summary: 'encoding/csv\nfmt\ntesting', image: 'warm-2', base: 'warm-1' });
  assert.deepEqual(await layers.baseFor('deps', 'go', 'encoding/csv\nfmt\ntesting'), { base: 'warm-1', known: true });
  // Another dependencies' image, another warm-up: records of their own.
  assert.deepEqual(await layers.baseFor('deps-2', 'go', 'fmt\ntesting'), { base: 'deps-2', known: false });
  assert.deepEqual(await layers.baseFor('deps', 'other', 'fmt\ntesting'), { base: 'deps', known: false });
  // The first layer removed: the second snapshot's layer is made again, on the dependencies' image.
  images.delete('warm-1');
  assert.deepEqual(await layers.baseFor('deps', 'go', 'encoding/csv\nfmt\ntesting'), { base: 'deps', known: false });
});

test('a record that is not what the builder wrote is no record', async () => {
  const { folder, layers } = await layersWith(new Set(['deps']));
  const { createHash } = await import('node:crypto');
  await writeFile(join(folder, createHash('sha256').update('go\ndeps').digest('hex')), '{"not": "a list"');
  assert.deepEqual(await layers.baseFor('deps', 'go', 'fmt'), { base: 'deps', known: false });
  await layers.made('deps', 'go', { summary: 'fmt', image: 'warm-1', base: null });
  assert.deepEqual(await layers.baseFor('deps', 'go', 'fmt'), { base: 'deps', known: true });
});
