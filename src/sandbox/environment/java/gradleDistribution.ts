// The Gradle distribution a Gradle build's wrapper names, found on the host: in this user's Gradle
// cache (GRADLE_USER_HOME or ~/.gradle: wrapper/dists/<name>/<hash>/gradle-<version>, where the
// wrapper unpacks it), else fetched from the wrapper's URL where that host can be reached (kept in
// the toolchain folder). services.gradle.org is no package registry: where it cannot be reached
// and the cache has no copy, the environment ends with an error that says so.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EnvironmentBuildError, packedToolsFolder, type GradleToolchain, type Toolchain } from '../planTypes.js';

const run = promisify(execFile);

export function isGradle(tool: Toolchain): tool is GradleToolchain {
  return typeof tool === 'object' && 'kind' in tool && tool.kind === 'gradle';
}
const fetchTimeoutMs = 20_000;

function cached(need: GradleToolchain, env: NodeJS.ProcessEnv): string | null {
  const home = env.GRADLE_USER_HOME ?? join(env.HOME ?? homedir(), '.gradle');
  const dists = join(home, 'wrapper', 'dists', need.name);
  let hashes: string[];
  try {
    hashes = readdirSync(dists);
  } catch {
    return null;
  }
  for (const hash of hashes) {
    const folder = join(dists, hash, `gradle-${need.version}`);
    // The wrapper writes <name>.zip.ok once the unpacked distribution is complete.
    if (existsSync(join(folder, 'bin', 'gradle')) && readdirSync(join(dists, hash)).some((f) => f.endsWith('.ok')))
      return folder;
  }
  return null;
}

export async function fetchGradleDistribution(
  need: GradleToolchain,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ name: string; bind: string; note: string }> {
  if (!need.name)
    throw new EnvironmentBuildError(
      'This is a Gradle build without the Gradle wrapper (gradle/wrapper/gradle-wrapper.properties names no distributionUrl): Gradle itself comes from services.gradle.org, which is not a package registry and which builds here cannot reach. Add the wrapper (gradle wrapper), run it once on this machine so that its distribution is in your Gradle cache (~/.gradle/wrapper/dists), or name an image with Gradle in durable-debugger.json ("image").',
    );
  const bind = (folder: string) => `${folder}:${packedToolsFolder}/gradle:ro`;
  const inCache = cached(need, env);
  if (inCache)
    return {
      name: need.name,
      bind: bind(inCache),
      note: `gradle ${need.version} (the wrapper's distribution, from this user's Gradle cache)`,
    };
  const kept = join(dir, need.name, `gradle-${need.version}`);
  if (existsSync(join(kept, 'bin', 'gradle')))
    return {
      name: need.name,
      bind: bind(kept),
      note: `gradle ${need.version} (the wrapper's distribution, fetched from ${need.url})`,
    };
  const host = (() => {
    try {
      return new URL(need.url).host;
    } catch {
      return need.url;
    }
  })();
  let archive: Buffer;
  try {
    const response = await fetch(need.url, { signal: AbortSignal.timeout(fetchTimeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    archive = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const cache = join(env.GRADLE_USER_HOME ?? '~/.gradle', 'wrapper', 'dists', need.name);
    throw new EnvironmentBuildError(
      `The Gradle wrapper's distribution ${need.name} (gradle/wrapper/gradle-wrapper.properties: ${need.url}) cannot be had here: ${host} is not a package registry and cannot be reached from this machine (${(error as Error).message}), and it is not in this user's Gradle cache (${cache}). Run ./gradlew once where ${host} is reachable so that the wrapper unpacks it into that cache, or name an image with Gradle ${need.version} in durable-debugger.json ("image").`,
    );
  }
  const folder = join(dir, need.name);
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'distribution.zip'), archive);
  await run('python3', ['-m', 'zipfile', '-e', join(folder, 'distribution.zip'), folder], { timeout: 120_000 });
  await run('chmod', ['-R', 'a+rX', folder]);
  await run('chmod', ['a+x', join(kept, 'bin', 'gradle')]);
  return {
    name: need.name,
    bind: bind(kept),
    note: `gradle ${need.version} (the wrapper's distribution, fetched from ${need.url})`,
  };
}
