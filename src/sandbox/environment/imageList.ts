// The environment images on this Docker engine: listed, and removed when no container uses them.
import type Docker from 'dockerode';
import { environmentLabels, environmentRepository } from './imageBuilder.js';

export interface EnvironmentImageInfo {
  image: string;
  id: string;
  kind: string | null;
  description: string | null;
  packages: number | null;
  sizeBytes: number;
  createdAt: Date;
  /** Containers (of any state) that run the image: such an image is never removed. */
  usedBy: number;
}

export async function listEnvironmentImages(docker: Docker): Promise<EnvironmentImageInfo[]> {
  const images = await docker.listImages({ filters: { reference: [`${environmentRepository}:*`] } });
  const containers = await docker.listContainers({ all: true });
  return images
    .flatMap((image) =>
      (image.RepoTags ?? [])
        .filter((tag) => tag.startsWith(`${environmentRepository}:`))
        .map((tag) => ({ image, tag })),
    )
    .map(({ image, tag }) => {
      const labels = image.Labels ?? {};
      return {
        image: tag,
        id: image.Id,
        kind: labels[environmentLabels.kind] ?? null,
        description: labels[environmentLabels.description] ?? null,
        packages: labels[environmentLabels.packages] ? Number(labels[environmentLabels.packages]) : null,
        sizeBytes: image.Size,
        createdAt: new Date(image.Created * 1000),
        usedBy: containers.filter((container) => container.ImageID === image.Id || container.Image === tag).length,
      };
    })
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

/** Removes environment images older than `olderThanMs` (of `only`, when given) that no container uses; returns what was removed. */
export async function pruneEnvironmentImages(
  docker: Docker,
  options: { olderThanMs?: number; only?: string[] } = {},
): Promise<EnvironmentImageInfo[]> {
  const removed: EnvironmentImageInfo[] = [];
  for (const info of await listEnvironmentImages(docker)) {
    if (options.only && !options.only.includes(info.image)) continue;
    if (info.usedBy > 0 || Date.now() - info.createdAt.getTime() < (options.olderThanMs ?? 0)) continue;
    try {
      await docker.getImage(info.image).remove();
      removed.push(info);
    } catch (error) {
      // A container started on it meanwhile (409), or it is gone already (404): keep going.
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== 404 && status !== 409) throw error;
    }
  }
  return removed;
}
