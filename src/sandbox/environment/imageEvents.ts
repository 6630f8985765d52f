// Docker's image events, watched while a worker runs: an image tagged, untagged, removed, imported,
// loaded or pulled. Each event is numbered and the latest are kept by the names and the id it
// touches, so that what a worker learnt about some images can be checked against what happened to
// them since. A lost watch (the engine restarted) counts as an event that touches every image.
import type { IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type Docker from 'dockerode';

/** What an event touches that matches every image. */
export const everyImage = '*';

export interface ImageHistory {
  /** The number of the latest event; null while the engine is not watched. */
  current(): number | null;
  /** What each event after `number` touched (names and ids); null when that is no longer known. */
  since(number: number): string[][] | null;
}

/** How many events are kept: a preparation is checked against those that came while it ran, and since. */
const keptEvents = 512;
/** How long Docker may take to answer a watch, and how long a worker then goes without one before asking again. */
const watchTimeoutMs = 2_000;
const retryMs = 60_000;

export class ImageEvents implements ImageHistory {
  private count = 0;
  private readonly recent: Array<{ number: number; touched: string[] }> = [];
  private stream: IncomingMessage | null = null;
  private opening: Promise<void> | null = null;
  /** Moved by close(): a watch opening meanwhile is dropped (a later preparation opens another). */
  private closings = 0;
  /** After a watch that could not be opened, when to try again. */
  private retryAfter = 0;

  constructor(private readonly docker: Docker) {}

  current(): number | null {
    return this.stream ? this.count : null;
  }

  since(number: number): string[][] | null {
    if (number > this.count) return null;
    const first = this.recent[0];
    if (number < this.count && (!first || first.number > number + 1)) return null;
    return this.recent.filter((event) => event.number > number).map((event) => event.touched);
  }

  /** The number of the latest event once the engine is watched (the first call opens the watch); null when it cannot be. */
  async watched(): Promise<number | null> {
    if (!this.stream) await (this.opening ??= this.open().finally(() => (this.opening = null)));
    return this.current();
  }

  /** Stops watching (a worker that stops); a later call of watched() watches again. */
  close(): void {
    this.closings++;
    this.lose(this.stream);
  }

  private async open(): Promise<void> {
    if (Date.now() < this.retryAfter) return;
    const closings = this.closings;
    // Docker subscribes the watcher before it answers: no event after this resolves is missed.
    const asked = this.docker.getEvents({ filters: { type: ['image'] } }).then(
      (stream) => stream as IncomingMessage,
      () => null,
    );
    // An engine behind a proxy that holds the answer back: preparations go on without the watch.
    const stream = await Promise.race([asked, delay(watchTimeoutMs, null, { ref: false })]);
    if (!stream) {
      void asked.then((late) => late?.destroy());
      this.retryAfter = Date.now() + retryMs;
      return;
    }
    if (this.closings !== closings) return void stream.destroy();
    // A worker (or a test) that is done must not be kept alive by its watch.
    stream.socket?.unref();
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.record(touchedBy(line));
    });
    for (const end of ['end', 'error', 'close']) stream.on(end, () => this.lose(stream));
    this.stream = stream;
  }

  private record(touched: string[]): void {
    this.recent.push({ number: ++this.count, touched });
    if (this.recent.length > keptEvents) this.recent.shift();
  }

  private lose(stream: IncomingMessage | null): void {
    if (!stream || this.stream !== stream) return;
    this.stream = null;
    this.record([everyImage]);
    stream.destroy();
  }
}

/**
 * The image names and id an event line touches; every image when it names none. A tag event touches
 * only the name it gives (an image's new name changes nothing of it, a name moved to another image
 * does); the others (untag, delete, import, load, pull) the image too.
 */
function touchedBy(line: string): string[] {
  try {
    const event = JSON.parse(line) as {
      Action?: string;
      id?: string;
      Actor?: { ID?: string; Attributes?: { name?: string } };
    };
    const name = event.Actor?.Attributes?.name;
    const touched = (event.Action === 'tag' ? [name] : [event.Actor?.ID, event.id, name])
      .filter((each): each is string => !!each)
      .map(imageName);
    return touched.length ? touched : [everyImage];
  } catch {
    return [everyImage];
  }
}

/** A name as the engine's events spell it: `python:3.12` for `docker.io/library/python:3.12`, `:latest` when no tag. */
export function imageName(name: string): string {
  if (name.startsWith('sha256:')) return name;
  const short = name.replace(/^docker\.io\/(library\/)?/, '');
  const last = short.slice(short.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? short : `${short}:latest`;
}
