// The environment images on this Docker engine: listed, and removed when no container uses them.
import type Docker from 'dockerode';
import { environmentLabels, environmentRepository } from './imageBuilder.js';

/**
 * Variables that carry the host's package settings (registries, their credentials, CAs, proxies).
 * Builds get their settings as files, removed before the commit; versions before that put them in
 * the image's Config.Env, where `docker inspect` shows them. Such images are never reused (their
 * key holds the settings' digest) but stay on the engine until removed: `env prune --stale`.
 */
export const hostSettingVariable =
  /^(PIP_\w+|NPM_CONFIG_\w+|npm_config_\w+|YARN_\w+|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy)=/;

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
  /** The host settings its Config.Env keeps (variable names only): an image built by an earlier version. */
  hostSettings: string[];
}

export async function listEnvironmentImages(docker: Docker): Promise<EnvironmentImageInfo[]> {
  const images = await docker.listImages({ filters: { reference: [`${environmentRepository}:*`] } });
  const containers = await docker.listContainers({ all: true });
  const tagged = images.flatMap((image) =>
    (image.RepoTags ?? []).filter((tag) => tag.startsWith(`${environmentRepository}:`)).map((tag) => ({ image, tag })),
  );
  const infos = await Promise.all(
    tagged.map(async ({ image, tag }) => {
      const labels = image.Labels ?? {};
      const env = await docker
        .getImage(image.Id)
        .inspect()
        .then((inspected) => inspected.Config.Env ?? [])
        .catch(() => [] as string[]);
      return {
        image: tag,
        id: image.Id,
        kind: labels[environmentLabels.kind] ?? null,
        description: labels[environmentLabels.description] ?? null,
        packages: labels[environmentLabels.packages] ? Number(labels[environmentLabels.packages]) : null,
        sizeBytes: image.Size,
        createdAt: new Date(image.Created * 1000),
        usedBy: containers.filter((container) => container.ImageID === image.Id || container.Image === tag).length,
        hostSettings: env
          .filter((variable) => hostSettingVariable.test(variable))
          .map((variable) => variable.split('=')[0] as string),
      };
    }),
  );
  return infos.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

/**
 * Removes environment images older than `olderThanMs` (of `only`, when given; only those keeping
 * host settings with `stale`) that no container uses; returns what was removed.
 */
export async function pruneEnvironmentImages(
  docker: Docker,
  options: { olderThanMs?: number; only?: string[]; stale?: boolean } = {},
): Promise<EnvironmentImageInfo[]> {
  const removed: EnvironmentImageInfo[] = [];
  for (const info of await listEnvironmentImages(docker)) {
    if (options.only && !options.only.includes(info.image)) continue;
    if (options.stale && info.hostSettings.length === 0) continue;
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
