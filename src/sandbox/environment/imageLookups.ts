// What one preparation asks Docker of its images, asked once. Each level's image is the next
// level's base (a toolchain image under a repository's, the dependencies' under the project's), so
// a cached preparation asked about most images twice; these lookups are most of what it does. What
// they asked about is what a remembered preparation depends on (rememberedPreparations.ts).
import type Docker from 'dockerode';
import { imageName } from './imageEvents.js';

export type ImageInfo = Awaited<ReturnType<Docker.Image['inspect']>>;

export class ImageLookups {
  private readonly asked = new Map<string, Promise<ImageInfo | null>>();
  /** Every name asked about, found or not, and the ids found: what the preparation's answer depends on. */
  private readonly touched = new Set<string>();

  constructor(private readonly docker: Docker) {}

  /**
   * The image's inspection, or null when it is not there. A found image is not asked about again in
   * this preparation; a missing one is (a build, this one's or another's, may make it meanwhile).
   */
  inspect(name: string): Promise<ImageInfo | null> {
    const known = this.asked.get(name);
    if (known) return known;
    this.touched.add(imageName(name));
    const answer = this.docker
      .getImage(name)
      .inspect()
      .then((info) => {
        this.touched.add(info.Id);
        return info;
      })
      .catch(() => null);
    this.asked.set(name, answer);
    void answer.then((info) => {
      if (!info && this.asked.get(name) === answer) this.asked.delete(name);
    });
    return answer;
  }

  /** The names asked about and the ids found so far (as the engine's image events name them). */
  images(): string[] {
    return [...this.touched];
  }
}
