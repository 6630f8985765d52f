// Which warm layers (planTypes' SourcesWarmup) were made on a dependencies' image, and for what, kept
// per host: a snapshot whose sources name something no layer was made for builds its own on the
// layer made for the most of the same names, so one new import compiles that package and not every
// other again (Go: SQLite's C, a minute, for go-sqlite3). Only layers made on the dependencies'
// image itself are bases, so an image has two warm layers at most. Nothing of a repository is in a
// warm layer, so one repository's may serve another's. A record lost to a race or to a removed
// image costs a build, never a wrong image: a layer's key is still its plan and its base's id.
import { createHash } from 'node:crypto';
import type { KeptAnswers } from './keptAnswers.js';

/** A layer made for `summary` on `base` (null: the dependencies' image), as image `image`. */
export interface WarmLayer {
  summary: string;
  image: string;
  base: string | null;
}

/** The records kept per dependencies' image and warm-up: the newest last, the oldest dropped past this. */
const keptLayers = 64;

export class WarmLayers {
  constructor(
    private readonly kept: KeptAnswers,
    private readonly exists: (image: string) => Promise<boolean>,
  ) {}

  /** The image `summary`'s layer is made on: the one it was made on before, else the nearest layer, else the dependencies'. */
  async baseFor(dependencies: string, warmup: string, summary: string): Promise<{ base: string; known: boolean }> {
    const layers = await this.layersOn(dependencies, warmup);
    const own = layers.find((layer) => layer.summary === summary);
    if (own && (own.base === null || (await this.exists(own.base))))
      return { base: own.base ?? dependencies, known: true };
    for (const layer of nearestFirst(layers, summary))
      if (await this.exists(layer.image)) return { base: layer.image, known: false };
    return { base: dependencies, known: false };
  }

  /** Keeps that `summary`'s layer is `image`, made on `base`. */
  async made(dependencies: string, warmup: string, layer: WarmLayer): Promise<void> {
    const layers = (await this.layersOn(dependencies, warmup)).filter((kept) => kept.summary !== layer.summary);
    await this.kept.keep(recordKey(dependencies, warmup), JSON.stringify([...layers, layer].slice(-keptLayers)));
  }

  private async layersOn(dependencies: string, warmup: string): Promise<WarmLayer[]> {
    const kept = await this.kept.get(recordKey(dependencies, warmup));
    try {
      const parsed: unknown = JSON.parse(kept ?? '[]');
      return Array.isArray(parsed) ? parsed.filter(isWarmLayer) : [];
    } catch {
      return [];
    }
  }
}

/**
 * The layers made on the dependencies' image that share a line with `summary`, the most shared
 * first (the newest among equals): what is compiled in them is not compiled again.
 */
export function nearestFirst(layers: readonly WarmLayer[], summary: string): WarmLayer[] {
  const wanted = new Set(summary.split('\n').filter(Boolean));
  return layers
    .filter((layer) => layer.base === null)
    .map((layer, order) => ({
      layer,
      order,
      shared: layer.summary.split('\n').filter((line) => wanted.has(line)).length,
    }))
    .filter((candidate) => candidate.shared > 0)
    .sort((a, b) => b.shared - a.shared || b.order - a.order)
    .map((candidate) => candidate.layer);
}

function recordKey(dependencies: string, warmup: string): string {
  return createHash('sha256').update(`${warmup}\n${dependencies}`).digest('hex');
}

function isWarmLayer(value: unknown): value is WarmLayer {
  const layer = value as WarmLayer;
  return (
    typeof layer?.summary === 'string' &&
    typeof layer.image === 'string' &&
    (layer.base === null || typeof layer.base === 'string')
  );
}
