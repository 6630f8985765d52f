// Which Go release a build fetches: the release the module names, or the newest patch release of its
// go directive's line, read once per host from the first module proxy's list of golang.org/toolchain
// versions (host curl, no go needed) and kept as a one-line record in the toolchain folder. The
// record is bound read-only into the toolchain image's build, which fetches that release with Go's
// own client (goToolchain.ts); the release's name goes into the image key and the report's note.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compareGoVersions, isGoVersion } from './goModule.js';
import { goProxyUrls, readHostGoSettings } from './goSettings.js';
import { EnvironmentBuildError, packedToolsFolder, type GoToolchain } from '../planTypes.js';

const run = promisify(execFile);

/** Where the toolchain image's build reads the release to fetch ("1.22.12"). */
export const goReleaseMount = `${packedToolsFolder}/go-release`;

/** The platform of the release: the Docker engine runs this host's architecture. */
export function goPlatform(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch;
  return `linux-${arch}`;
}

/** The module Go's own toolchain switch fetches for a release: golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64. */
export function goToolchainModule(version: string): string {
  return `golang.org/toolchain@v0.0.1-go${version}.${goPlatform()}`;
}

export interface GoRelease {
  /** For the image key: "go1.22.12.linux-amd64". */
  name: string;
  bind: string;
  /** "go 1.22.12 (go.mod's go directive 1.22: the newest 1.22 release)". */
  note: string;
}

export async function resolveGoRelease(need: GoToolchain, dir: string): Promise<GoRelease> {
  const record = join(dir, `go-${need.version}-${goPlatform()}-version`);
  let version = (await readFile(record, 'utf8').catch(() => '')).trim();
  if (!isGoVersion(version)) {
    version = /^\d+\.\d+$/.test(need.version) ? await newestPatchRelease(need.version) : need.version;
    if (!isGoVersion(version))
      throw new EnvironmentBuildError(`"${version}" is no Go release: check go.mod's go line.`);
    // Written whole or not at all: a build binds this file.
    const scratch = `${record}.${randomBytes(4).toString('hex')}`;
    await writeFile(scratch, `${version}\n`);
    await rename(scratch, record);
  }
  return {
    name: `go${version}.${goPlatform()}`,
    bind: `${record}:${goReleaseMount}:ro`,
    note: `go ${version} (${need.reason})`,
  };
}

/** The newest release of a Go line ("1.22" → "1.22.12") among the toolchain modules of the first proxy. */
async function newestPatchRelease(line: string): Promise<string> {
  const settings = await readHostGoSettings(process.env);
  const proxy = goProxyUrls(settings.GOPROXY)[0];
  if (!proxy)
    throw new EnvironmentBuildError(
      `The Go toolchain ${line} comes from a Go module proxy, and this machine's GOPROXY (${settings.GOPROXY ?? 'unset'}) names none.`,
    );
  let listing: string;
  try {
    ({ stdout: listing } = await run(
      'curl',
      ['-fsSL', '--max-time', '60', `${proxy.replace(/\/+$/, '')}/golang.org/toolchain/@v/list`],
      { maxBuffer: 4 * 1024 * 1024 },
    ));
  } catch (error) {
    throw new EnvironmentBuildError(
      `Could not list the Go releases on ${proxy} (${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}). Check the network and GOPROXY.`,
    );
  }
  const suffix = `.${goPlatform()}`;
  const releases = listing
    .split('\n')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('v0.0.1-go') && entry.endsWith(suffix))
    .map((entry) => entry.slice('v0.0.1-go'.length, -suffix.length))
    .filter((version) => version === line || version.startsWith(`${line}.`))
    .filter((version) => /^\d+\.\d+\.\d+$/.test(version))
    .sort(compareGoVersions);
  const newest = releases.at(-1);
  if (!newest)
    throw new EnvironmentBuildError(
      `${proxy} has no Go ${line} release for ${goPlatform()}: check the go directive and the toolchain line of go.mod.`,
    );
  return newest;
}
