// Which images a repository file may build on. The run's input is the user's own choice and may
// name any image on the engine; a repository's `durable-debugger.json` (`image`) or the FROM of
// its `durable-debugger.Dockerfile` is untrusted, and may name only images the user allowed:
// DURABLE_DEBUGGER_ALLOWED_IMAGES, plus ours (the sandbox image, its other-Python variants built by
// `setup --python`). Not the environment images (durable-debugger-env:*): one may hold another
// repository's code (a setup's or Dockerfile's COPY of it); the environment step builds on this
// plan's own ones itself, without asking the policy.
import { pythonVariantImage } from './python/pythonVersions.js';

export class ImagePolicy {
  /**
   * `allowed`: entries of DURABLE_DEBUGGER_ALLOWED_IMAGES: `name:tag` exactly, `name` for any tag
   * of it, `prefix*` for every name that starts so, `*` for any image.
   */
  constructor(
    readonly sandboxImage: string,
    readonly allowed: readonly string[] = [],
  ) {}

  /** The entries that apply, for messages: ours first. */
  get entries(): string[] {
    return [this.sandboxImage, pythonVariantImage(this.sandboxImage, '*'), ...this.allowed];
  }

  allows(image: string): boolean {
    const wanted = normalize(image);
    return this.entries.some((entry) => {
      const pattern = normalize(entry);
      if (pattern.endsWith('*')) return wanted.startsWith(pattern.slice(0, -1));
      if (hasTag(pattern)) return wanted === pattern;
      return wanted === pattern || wanted.startsWith(`${pattern}:`) || wanted.startsWith(`${pattern}@`);
    });
  }

  /** Null when a repository file may name `image`, else the message that says what to do. */
  refusal(image: string, where: string): string | null {
    if (this.allows(image)) return null;
    return `${where} names the image ${image}, which repository files may not choose on this machine (allowed: ${this.entries.join(', ')}). A repository's files run as untrusted code: if you trust this image, add it to DURABLE_DEBUGGER_ALLOWED_IMAGES (comma-separated) for the worker, or choose it yourself in the run's input (environment.image).`;
  }
}

/** DURABLE_DEBUGGER_ALLOWED_IMAGES: image names separated by commas or spaces. */
export function parseAllowedImages(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean);
}

/** `python:3.12` and `docker.io/library/python:3.12` are one image. */
function normalize(image: string): string {
  return image
    .trim()
    .toLowerCase()
    .replace(/^(docker\.io|index\.docker\.io|registry-1\.docker\.io)\//, '')
    .replace(/^library\//, '');
}

function hasTag(image: string): boolean {
  return image.includes('@') || /:[^/]+$/.test(image);
}
