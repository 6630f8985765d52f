// The cluster's binaries, built once from their Go modules and cached per version under the
// tools folder: the Temporal server and its schema tool (go.temporal.io/server), and the Web UI
// server (github.com/temporalio/ui-server/v2). Go itself comes from the machine when it is new
// enough to fetch toolchains (1.21+), else from the Go module proxy (the toolchain module that
// `GOTOOLCHAIN` would fetch), kept under the tools folder too.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { arch as machineArch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { clusterVersions, type ClusterPaths } from './clusterSettings.js';

export class ClusterSetupError extends Error {}

type Log = (line: string) => void;

/** A `go` that can fetch the pinned toolchain: the machine's (1.21+) or one we fetched. */
export async function ensureGo(paths: ClusterPaths, log: Log): Promise<string> {
  for (const candidate of [process.env.GO, '/usr/local/go/bin/go', onPath('go')]) {
    if (candidate && existsSync(candidate) && goMinor(candidate) >= 21) return candidate;
  }
  return fetchGoToolchain(paths, log);
}

/** The toolchain module that GOTOOLCHAIN would fetch, from the Go module proxy, unpacked under the tools folder. */
export async function fetchGoToolchain(paths: ClusterPaths, log: Log): Promise<string> {
  const goArch = { x64: 'amd64', arm64: 'arm64' }[machineArch() as string];
  if (platform() !== 'linux' || !goArch)
    throw new ClusterSetupError(`No Go 1.21+ found; install Go from https://go.dev/dl/ and set GO to its go binary.`);
  const version = `v0.0.1-${clusterVersions.goToolchain}.linux-${goArch}`;
  const folder = join(paths.tools.root, `go-${clusterVersions.goToolchain}`);
  const go = join(folder, 'bin', 'go');
  if (existsSync(go)) return go;
  const proxy =
    (process.env.GOPROXY ?? 'https://proxy.golang.org').split(/[,|]/).find((entry) => entry.startsWith('http')) ??
    'https://proxy.golang.org';
  const url = `${proxy.replace(/\/$/, '')}/golang.org/toolchain/@v/${version}.zip`;
  log(
    `No Go 1.21+ on this machine: fetching the Go toolchain ${clusterVersions.goToolchain} from the Go module proxy (${url})`,
  );
  const response = await fetch(url);
  if (!response.ok)
    throw new ClusterSetupError(
      `Could not fetch ${url} (HTTP ${response.status}). Install Go 1.21+ (https://go.dev/dl/) and set GO to its go binary.`,
    );
  const zip = join(paths.tools.root, `${version}.zip`);
  mkdirSync(paths.tools.root, { recursive: true });
  writeFileSync(zip, Buffer.from(await response.arrayBuffer()));
  const unpacked = join(paths.tools.root, `go-unpack-${process.pid}`);
  const unzip = spawnSync('python3', ['-m', 'zipfile', '-e', zip, unpacked], { encoding: 'utf8' });
  if (unzip.status !== 0) throw new ClusterSetupError(`Could not unpack ${zip}: ${unzip.stderr}`);
  // The module zip holds the toolchain under golang.org/toolchain@<version>/ and keeps no file modes.
  const root = join(unpacked, `golang.org`, `toolchain@${version}`);
  for (const executables of [
    join(root, 'bin'),
    ...readdirSync(join(root, 'pkg', 'tool')).map((entry) => join(root, 'pkg', 'tool', entry)),
  ]) {
    for (const file of readdirSync(executables)) chmodSync(join(executables, file), 0o755);
  }
  rmSync(folder, { recursive: true, force: true });
  cpSync(root, folder, { recursive: true });
  rmSync(unpacked, { recursive: true, force: true });
  rmSync(zip, { force: true });
  return go;
}

function onPath(command: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  return found || undefined;
}

function goMinor(go: string): number {
  // GOTOOLCHAIN=local: the version of this binary, not of a toolchain it would switch to.
  const output =
    spawnSync(go, ['env', 'GOVERSION'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } }).stdout ??
    '';
  const match = /go1\.(\d+)/.exec(output);
  return match ? Number(match[1]) : 0;
}

/** `go` at low priority, with progress every 30 s; its output goes to `logFile`. */
async function goBuild(
  go: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> },
  logFile: string,
  what: string,
  log: Log,
): Promise<void> {
  mkdirSync(dirname(logFile), { recursive: true });
  const output = openSync(logFile, 'w');
  const started = Date.now();
  log(`Building ${what} (once; it takes minutes, far more on a busy machine). Log: ${logFile}`);
  const child = spawn('nice', ['-n', '19', go, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: { ...process.env, GOTOOLCHAIN: clusterVersions.goToolchain, ...options.env },
    stdio: ['ignore', output, output],
  });
  const progress = setInterval(
    () => log(`  … still building ${what} (${Math.round((Date.now() - started) / 1000)} s)`),
    30_000,
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(progress);
  if (code !== 0) throw new ClusterSetupError(`Building ${what} failed (exit code ${code}); see ${logFile}`);
  log(`Built ${what} in ${Math.round((Date.now() - started) / 1000)} s`);
}

function goModuleDir(go: string, module: string): string {
  const result = spawnSync(go, ['mod', 'download', '-json', module], {
    encoding: 'utf8',
    cwd: tmpdir(),
    env: { ...process.env, GOTOOLCHAIN: clusterVersions.goToolchain },
  });
  const dir = /"Dir":\s*"([^"]+)"/.exec(result.stdout ?? '')?.[1];
  if (result.status !== 0 || !dir)
    throw new ClusterSetupError(`go mod download ${module} failed: ${result.stderr || result.stdout}`);
  return dir;
}

/**
 * The UI server is built in a module of ours that requires it, so that two of its dependencies can
 * be raised by a patch version: the Go module proxy refuses the exact versions its go.mod names
 * (their .zip answers 403 "This module version is not available"), while it serves these.
 */
export const uiServerDependencyOverrides: Record<string, string> = {
  'github.com/labstack/echo/v4': 'v4.16.4',
  'go.temporal.io/api': 'v1.64.1',
};

/** Builds what is missing; a second call returns at once. */
export async function ensureClusterTools(paths: ClusterPaths, log: Log): Promise<void> {
  const { tools } = paths;
  const missing = [tools.temporalServer, tools.schemaTool, join(tools.schemas, 'v12'), tools.uiServer].some(
    (file) => !existsSync(file),
  );
  if (!missing) return;
  const go = await ensureGo(paths, log);
  if (!existsSync(tools.temporalServer) || !existsSync(tools.schemaTool)) {
    const version = clusterVersions.temporalServer;
    await goBuild(
      go,
      ['install', `go.temporal.io/server/cmd/server@v${version}`, `go.temporal.io/server/cmd/tools/sql@v${version}`],
      { env: { GOBIN: dirname(tools.temporalServer) } },
      join(tools.buildLogs, `temporal-server-${version}.log`),
      `the Temporal server ${version} and its schema tool`,
      log,
    );
  }
  if (!existsSync(join(tools.schemas, 'v12'))) {
    // The schema tool reads versioned schema folders: copy them out of the module cache, which may be cleaned.
    const moduleDir = goModuleDir(go, `go.temporal.io/server@v${clusterVersions.temporalServer}`);
    mkdirSync(tools.schemas, { recursive: true });
    cpSync(join(moduleDir, 'schema', 'postgresql', 'v12'), join(tools.schemas, 'v12'), { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', tools.schemas]);
  }
  if (!existsSync(tools.uiServer)) {
    const version = clusterVersions.uiServer;
    const buildModule = join(dirname(tools.uiServer), 'build');
    mkdirSync(buildModule, { recursive: true });
    writeFileSync(
      join(buildModule, 'go.mod'),
      [
        'module durable-debugger.local/ui-server-build',
        '',
        'go 1.26.10',
        '',
        'require (',
        `\tgithub.com/temporalio/ui-server/v2 v${version}`,
        ...Object.entries(uiServerDependencyOverrides).map(([module, override]) => `\t${module} ${override}`),
        ')',
        '',
      ].join('\n'),
    );
    await goBuild(
      go,
      ['build', '-o', tools.uiServer, 'github.com/temporalio/ui-server/v2/cmd/server'],
      { cwd: buildModule, env: { GOFLAGS: '-mod=mod' } },
      join(tools.buildLogs, `temporal-ui-server-${version}.log`),
      `the Temporal Web UI server ${version}`,
      log,
    );
  }
}
