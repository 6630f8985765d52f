// What a worker's cached preparations returned, so that the next run on the same snapshot neither
// plans again nor asks Docker about each image of its chain (about 10 ms, 45 for a committed yarn
// release). A preparation depends on the snapshot (its id names its content), the request, the images
// it asked about (Docker's image events tell when one was removed, retagged or made), and what
// `conditions` sums up: the day (Node's LTS), the host's package settings, the toolchain folders.
// Only a preparation that built nothing is kept: what it returned is what the same request returns
// while none of these moved.
import type { PreparedEnvironment } from '../../agent/environment.js';
import { everyImage, type ImageHistory } from './imageEvents.js';

/** What a request asks, as far as its preparation reads it. */
export interface PreparationRequest {
  snapshotId: string;
  choice: unknown;
  projectVersion?: string;
  repository?: string;
  owner: { scope: string };
}

/** A preparation as it ended: what it returned, under which conditions, and the images it asked about. */
export interface EndedPreparation {
  environment: PreparedEnvironment | null;
  conditions: string;
  /** The image names asked about and the ids found (imageLookups.ts). */
  images: string[];
  /** The number of the latest image event when it started; null when the engine was not watched. */
  startedAt: number | null;
}

interface Kept {
  environment: PreparedEnvironment | null;
  conditions: string;
  images: Set<string>;
  /** The number of the latest image event it was checked against. */
  checkedAt: number;
}

export class RememberedPreparations {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly events: ImageHistory,
    private readonly limit = 1_000,
  ) {}

  /** What the same request returned under the same conditions, none of its images touched since; undefined when not known. */
  find(request: PreparationRequest, conditions: string): PreparedEnvironment | null | undefined {
    const key = identity(request);
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    this.kept.delete(key);
    const now = this.events.current();
    if (now === null || kept.conditions !== conditions || this.touchedSince(kept.checkedAt, kept.images))
      return undefined;
    // Used again: the last to go.
    this.kept.set(key, { ...kept, checkedAt: now });
    return structuredClone(kept.environment);
  }

  /** Keeps what a preparation returned when it built nothing and none of its images was touched while it ran. */
  keep(request: PreparationRequest, ended: EndedPreparation): void {
    const { environment, conditions, startedAt } = ended;
    const now = this.events.current();
    if (startedAt === null || now === null || (environment && !environment.reused)) return;
    const images = new Set(ended.images);
    if (this.touchedSince(startedAt, images)) return;
    const key = identity(request);
    this.kept.delete(key);
    this.kept.set(key, { environment: structuredClone(environment), conditions, images, checkedAt: now });
    // The least recently used go first: a worker serves a few repositories at a time.
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= this.limit) break;
      this.kept.delete(oldest);
    }
  }

  private touchedSince(number: number, images: Set<string>): boolean {
    const events = this.events.since(number);
    return events === null || events.some((touched) => touched.some((name) => name === everyImage || images.has(name)));
  }
}

function identity(request: PreparationRequest): string {
  const { snapshotId, choice, projectVersion, repository, owner } = request;
  return JSON.stringify([snapshotId, choice, projectVersion ?? null, repository ?? null, owner.scope]);
}
