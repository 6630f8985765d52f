// The same repository's last project image, kept per host, for a project install that builds in a
// folder of its own (planTypes' projectInstall.previousBuild): a new snapshot's install starts from
// that image's copy of the folder and compiles what changed, not the whole tree again (CMake:
// GoogleTest and every object, per commit). Found by the user's scope, the repository's path and the
// dependencies' image, never by content: a build runs the repository's code and may write anything in
// its folder, so another repository's could hand this one objects made from other sources.
import { createHash } from 'node:crypto';
import type { KeptAnswers } from './keptAnswers.js';

export interface RepositoryBuild {
  /** The user's scope (the worker's: one user's builds never seed another's). */
  scope: string;
  /** The repository's path, as the run's input names it. */
  repository: string;
  /** The image the project install is made on. */
  dependencies: string;
  /** The folder the install builds in. */
  folder: string;
}

/** The same repository's last project image, and the folder of it a project install starts from. */
export interface PreviousBuild {
  image: string;
  folder: string;
}

export class PreviousBuilds {
  constructor(
    private readonly kept: KeptAnswers,
    private readonly exists: (image: string) => Promise<boolean>,
  ) {}

  /** The repository's last project image made on the same image, if it is still there. */
  async of(build: RepositoryBuild): Promise<string | null> {
    const image = await this.kept.get(keyOf(build));
    return image && (await this.exists(image)) ? image : null;
  }

  async made(build: RepositoryBuild, image: string): Promise<void> {
    await this.kept.keep(keyOf(build), image);
  }
}

function keyOf(build: RepositoryBuild): string {
  return createHash('sha256')
    .update(JSON.stringify([build.scope, build.repository, build.dependencies, build.folder]))
    .digest('hex');
}
