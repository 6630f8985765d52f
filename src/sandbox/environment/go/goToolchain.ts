// A Go release for the environment, fetched once per host the way Go's own toolchain switch
// (GOTOOLCHAIN) fetches it: the module golang.org/toolchain@v0.0.1-go<version>.<os>-<arch> from the
// module proxy the host's settings name, downloaded by the host's `go mod download`, which checks it
// against the checksum database as for any module. It is kept in the toolchain folder's own module
// cache and bound read-only into the build, which copies it into the image.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compareGoVersions } from './goModule.js';
import { goProxyUrls, readHostGoSettings } from './goSettings.js';
import { EnvironmentBuildError, packedToolsFolder, type GoToolchain } from '../planTypes.js';

const run = promisify(execFile);

/** Where the build container finds the Go release (GOROOT's content, read-only). */
export const goToolchainMount = `${packedToolsFolder}/go`;

/** The platform of the release: the Docker engine runs this host's architecture. */
function platform(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch;
  return `linux-${arch}`;
}

export interface FetchedGo {
  /** For the image key: "go1.22.12.linux-amd64". */
  name: string;
  bind: string;
  /** "go 1.22.12 (go.mod's go directive 1.22)". */
  note: string;
}

export async function fetchGoToolchain(need: GoToolchain, dir: string): Promise<FetchedGo> {
  const env = { ...process.env, GOTOOLCHAIN: 'local' };
  const versionFile = join(dir, `go-${need.version}-${platform()}-version`);
  const cache = join(dir, 'go-toolchains');
  let version = (await readFile(versionFile, 'utf8').catch(() => '')).trim();
  let folder = version && moduleFolder(cache, version);
  if (!folder || !existsSync(join(folder, 'bin', 'go'))) {
    version = /^\d+\.\d+$/.test(need.version) ? await newestPatchRelease(need.version, env) : need.version;
    const settings = await readHostGoSettings(env);
    try {
      const { stdout } = await run(
        'go',
        ['mod', 'download', '-json', `golang.org/toolchain@${moduleVersion(version)}`],
        {
          cwd: dir,
          timeout: 900_000,
          maxBuffer: 4 * 1024 * 1024,
          // The host's settings (GOPROXY, GOSUMDB, …), with a module cache of the toolchain folder's own.
          env: {
            ...env,
            GOMODCACHE: cache,
            GOFLAGS: `${settings.GOFLAGS ?? ''} -modcacherw`.trim(),
            GO111MODULE: 'on',
          },
        },
      );
      folder = (JSON.parse(stdout) as { Dir?: string }).Dir ?? moduleFolder(cache, version);
    } catch (error) {
      throw goFetchError(error, version);
    }
    await writeFile(versionFile, version);
  }
  return {
    name: `go${version}.${platform()}`,
    bind: `${folder}:${goToolchainMount}:ro`,
    note: `go ${version} (${need.reason})`,
  };
}

function moduleVersion(version: string): string {
  return `v0.0.1-go${version}.${platform()}`;
}

function moduleFolder(cache: string, version: string): string {
  return join(cache, 'golang.org', `toolchain@${moduleVersion(version)}`);
}

/** The newest release of a Go line ("1.22" → "1.22.12") among the toolchain modules of the first proxy. */
async function newestPatchRelease(line: string, env: NodeJS.ProcessEnv): Promise<string> {
  const settings = await readHostGoSettings(env);
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
      { env, maxBuffer: 4 * 1024 * 1024 },
    ));
  } catch (error) {
    throw new EnvironmentBuildError(
      `Could not list the Go releases on ${proxy} (${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}). Check the network and GOPROXY.`,
    );
  }
  const suffix = `.${platform()}`;
  const releases = listing
    .split('\n')
    .map((line) => line.trim())
    .filter((entry) => entry.startsWith('v0.0.1-go') && entry.endsWith(suffix))
    .map((entry) => entry.slice('v0.0.1-go'.length, -suffix.length))
    .filter((version) => version === line || version.startsWith(`${line}.`))
    .filter((version) => /^\d+\.\d+\.\d+$/.test(version))
    .sort(compareGoVersions);
  const newest = releases.at(-1);
  if (!newest)
    throw new EnvironmentBuildError(
      `${proxy} has no Go ${line} release for ${platform()}: check the go directive and the toolchain line of go.mod.`,
    );
  return newest;
}

function goFetchError(error: unknown, version: string): EnvironmentBuildError {
  const failure = error as { code?: string; stderr?: string; stdout?: string; message: string };
  if (failure.code === 'ENOENT')
    return new EnvironmentBuildError(
      `Go ${version} is fetched with this machine's go command (go mod download of golang.org/toolchain, checked against the checksum database), and this machine has no go on its PATH: install Go 1.21 or newer (https://go.dev/dl).`,
    );
  const output = (failure.stderr || failure.stdout || failure.message).trim().split('\n').slice(-5).join(' ');
  return new EnvironmentBuildError(
    `Could not fetch Go ${version} (golang.org/toolchain@${moduleVersion(version)}) from the Go module proxy: ${output}. Check the network and this machine's GOPROXY and GOSUMDB.`,
  );
}
