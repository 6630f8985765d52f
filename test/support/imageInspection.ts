// What an environment image keeps of the host: its Config.Env, and every file its own layers
// (those above its base image) hold. Used to prove that no host setting is baked into an image.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { hostSettingVariable as settingVariable } from '../../src/sandbox/environment/imageList.js';

const run = promisify(execFile);

/** Paths of settings files: the build's settings folder, and the files installers read their settings from. */
const settingPath =
  /(^|\/)(run\/durable-debugger-settings\/.|\.npmrc$|\.yarnrc(\.yml)?$|pip\.conf$|pip\.ini$|\.netrc$|.*-ca\.pem$|etc\/ssl\/certs\/ca-certificates\.crt$)/;

/**
 * The problems found in `image`: a variable of the host's settings in Config.Env, a settings file
 * in one of its layers, or a layer file that holds one of the `markers` (canary secrets, lines of
 * the settings). Layers shared with `baseImage` are not the environment's and are skipped.
 */
export async function hostSettingsInImage(
  docker: Docker,
  image: string,
  baseImage: string,
  markers: string[],
): Promise<string[]> {
  const problems: string[] = [];
  const info = await docker.getImage(image).inspect();
  for (const variable of info.Config.Env ?? []) {
    if (settingVariable.test(variable)) problems.push(`${image}: Config.Env has ${variable}`);
    for (const marker of markers) if (variable.includes(marker)) problems.push(`${image}: Config.Env holds ${marker}`);
  }
  const baseLayers = new Set((await docker.getImage(baseImage).inspect()).RootFS.Layers ?? []);
  const ownLayers = (info.RootFS.Layers ?? [])
    .map((diffId, index) => ({ diffId, index }))
    .filter(({ diffId }) => !baseLayers.has(diffId));
  const scratch = await mkdtemp(join(tmpdir(), 'image-inspection-'));
  try {
    const archive = join(scratch, 'image.tar');
    await run('docker', ['save', '-o', archive, image], { maxBuffer: 1 << 20 });
    await run('tar', ['-xf', archive, '-C', scratch, 'manifest.json']);
    const manifest = JSON.parse(await readFile(join(scratch, 'manifest.json'), 'utf8')) as Array<{ Layers: string[] }>;
    const layerFiles = manifest[0]?.Layers ?? [];
    for (const { index } of ownLayers) {
      const layer = layerFiles[index] as string;
      await run('tar', ['-xf', archive, '-C', scratch, layer]);
      const { stdout } = await run('tar', ['-tf', join(scratch, layer)], { maxBuffer: 256 << 20 });
      for (const path of stdout.split('\n').filter(Boolean))
        if (settingPath.test(path.replace(/^\.\//, ''))) problems.push(`${image}: a layer holds ${path}`);
      const contents = join(scratch, `layer-${index}`);
      await run('mkdir', ['-p', contents]);
      await run('tar', ['-xf', join(scratch, layer), '-C', contents, '--no-same-owner', '--no-same-permissions']);
      for (const file of await filesUnder(contents)) {
        const text = await readFile(file).catch(() => Buffer.alloc(0));
        for (const marker of markers)
          if (text.includes(marker)) problems.push(`${image}: ${file.slice(contents.length)} holds ${marker}`);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return problems;
}

async function filesUnder(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else if (entry.isFile() && (await lstat(path)).size < 50 * 1024 * 1024) found.push(path);
  }
  return found;
}
