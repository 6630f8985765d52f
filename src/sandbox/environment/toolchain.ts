// The toolchain an environment build needs beyond the sandbox image: pip's wheel and packed npm
// tools (node, npm, pnpm, yarn), fetched once per host from the registries with the host's settings
// and kept in the toolchain folder; a build binds them read-only. For Go, only the record of which
// release to fetch (its toolchain image's build fetches it).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { npmForNode } from './node/nodeVersion.js';
import { fetchGradleDistribution, isGradle } from './java/gradleDistribution.js';
import { resolveGoRelease } from './go/goRelease.js';
import { EnvironmentBuildError, packedToolsFolder, type PackedTool, type Toolchain } from './planTypes.js';

const run = promisify(execFile);

/** Where the toolchain is kept when the worker's config names no folder. */
export function defaultToolchainDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'durable-debugger', 'toolchain');
}

/**
 * The toolchain files the build needs, fetched once on this host from the registries (with the host's
 * settings): pip's wheel in the shared folder, and each packed tool bound at /env-toolchain/<as>.
 * `names` (the fetched files' own names, so their versions) go into the image key; `notes` into the report.
 */
export async function fetchToolchain(
  needs: Toolchain[],
  dir: string,
): Promise<{ dir: string; names: string[]; binds: string[]; notes: string[] }> {
  await mkdir(dir, { recursive: true });
  const names: string[] = [];
  const binds: string[] = [];
  const notes: string[] = [];
  let nodeVersion: string | undefined;
  for (const need of needs) {
    if (need === 'pip') {
      names.push(
        await fetchOnce(dir, 'pip.whl', 'pip-version', async (scratch) => {
          await run('python3', ['-m', 'pip', 'download', 'pip', '--no-deps', '--only-binary', ':all:', '-d', scratch], {
            timeout: 300_000,
          });
          return (await readdir(scratch)).find((name) => name.endsWith('.whl'));
        }),
      );
      continue;
    }
    if ('kind' in need && need.kind === 'host-folder') {
      // A toolchain of the host's (a rustup toolchain): read-only, named by its version in the image key.
      names.push(need.label);
      binds.push(`${need.hostFolder}:${packedToolsFolder}/${need.as}:ro`);
      continue;
    }
    if (isGradle(need)) {
      const gradle = await fetchGradleDistribution(need, dir);
      names.push(gradle.name);
      binds.push(gradle.bind);
      notes.push(gradle.note);
      continue;
    }
    if ('kind' in need && need.kind === 'go') {
      // Which release only: the toolchain image's build fetches it (go/goToolchain.ts).
      const go = await resolveGoRelease(need, dir);
      names.push(go.name);
      binds.push(go.bind);
      notes.push(go.note);
      continue;
    }
    const spec = need.matchingNode ? npmForNode(nodeVersion ?? '20.0.0') : need.spec;
    const file = packedFileName(spec);
    const what = `${spec}${need.reason ? ` (${need.label}, ${need.reason})` : ''}`;
    const name = await fetchOnce(
      dir,
      file,
      `${file}-version`,
      async (scratch) => {
        await run('npm', ['pack', spec, '--pack-destination', scratch], { timeout: 600_000 });
        return (await readdir(scratch)).find((each) => each.endsWith('.tgz'));
      },
      what,
    );
    if (need.hash) await verifyPackedHash(join(dir, file), need, spec);
    const version = name.match(/-(\d+\.\d+\.\d+(?:-[\w.]+)?)\.tgz$/)?.[1] ?? spec;
    if (need.label === 'node') nodeVersion = version;
    names.push(name);
    binds.push(`${join(dir, file)}:${packedToolsFolder}/${need.as}:ro`);
    notes.push(`${need.label} ${version}${need.reason ? ` (${need.reason})` : ''}`);
  }
  return { dir, names, binds, notes };
}

/** The file a packed tool is kept as in the toolchain folder: one per spec (`pnpm@9` → pnpm-9.tgz), whatever version it fetched. */
export function packedFileName(spec: string): string {
  const plain = spec.replace(/^@/, '').replace(/[/@]/g, '-');
  if (/^[\w.-]+$/.test(plain)) return `${plain}.tgz`;
  // A range (">=20.5.0 <21"): its characters are no file name's; a hash keeps different ranges apart.
  const hash = createHash('sha256').update(spec).digest('hex').slice(0, 10);
  return `${plain.replace(/[^\w.-]+/g, '_')}-${hash}.tgz`;
}

/**
 * The hash package.json packageManager pins (corepack: `yarn@4.4.1+sha512.<hex>`): corepack hashes what it
 * downloads, the package's tarball, or for yarn 2+ its single yarn.js (packed here as bin/yarn.js).
 */
export async function verifyPackedHash(path: string, tool: PackedTool, spec: string): Promise<void> {
  const { algorithm, hex } = tool.hash as NonNullable<PackedTool['hash']>;
  const digest = (data: Buffer) => createHash(algorithm).update(data).digest('hex');
  if (digest(await readFile(path)) === hex) return;
  const yarnJs = await run('tar', ['xzf', path, '-O', 'package/bin/yarn.js'], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    (result) => result.stdout as Buffer,
    () => null,
  );
  if (yarnJs && digest(yarnJs) === hex) return;
  throw new EnvironmentBuildError(
    `package.json packageManager pins ${spec} with ${algorithm} ${hex.slice(0, 16)}…, and the registry's ${spec} has another hash: the pin or the registry is wrong. Fix the pin (corepack use ${spec.replace(/^@yarnpkg\/cli-dist/, 'yarn')}) or remove its +${algorithm} part.`,
  );
}

/** Fetches a toolchain file into `dir/target` unless it is there; returns the fetched file's original name (its version). */
async function fetchOnce(
  dir: string,
  target: string,
  versionFile: string,
  fetch: (scratch: string) => Promise<string | undefined>,
  what = target.split('.')[0],
): Promise<string> {
  const recorded = await readFile(join(dir, versionFile), 'utf8').catch(() => null);
  if (recorded && existsSync(join(dir, target))) return recorded.trim();
  const scratch = await mkdtemp(join(dir, 'fetch-'));
  try {
    let name: string | undefined;
    try {
      name = await fetch(scratch);
    } catch (error) {
      const failure = error as { stderr?: string; message: string };
      const output = (failure.stderr || failure.message).trim().split('\n').slice(-5).join(' ');
      if (/ETARGET|No matching version/.test(output))
        throw new EnvironmentBuildError(
          `The package registry has no release of ${what}: check the version the repository names (${output}).`,
        );
      throw new EnvironmentBuildError(
        `Could not fetch ${what} for the environment from the package registry (${output}). Check the network and the registry settings (pip config, .npmrc, HTTPS_PROXY).`,
      );
    }
    if (!name) throw new EnvironmentBuildError(`Fetching ${target} for the environment produced no file`);
    await rename(join(scratch, name), join(dir, target));
    await writeFile(join(dir, versionFile), name);
    return name;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
