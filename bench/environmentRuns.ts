// What the per-language environment rows of the bench share (6a–6d): the cold preparation of a
// repository's environment followed by its cached reuse, and running a host command.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PreparedEnvironment } from '../src/agent/environment.js';
import type { SandboxHost } from '../src/sandbox/sandboxHost.js';
import { repeat } from './stats.js';

/** What a bench preparation of the snapshot asks, as a run of this host would (on the repository at `repository`). */
export function benchRequest(host: SandboxHost, snapshotId: string, label: string, repository?: string) {
  return {
    snapshotId,
    choice: {},
    repository,
    owner: {
      workflowId: `bench-${label}`,
      runId: 'bench',
      host: host.options.hostId,
      scope: `bench-${label}/${process.pid}`,
    },
  };
}

/** Prepares the snapshot's environment cold (it must build), then `repetitions` times again (it must be reused). */
export async function preparedColdThenCached(
  host: SandboxHost,
  snapshotId: string,
  label: string,
  repetitions: number,
  repository?: string,
): Promise<{ cold: PreparedEnvironment; coldMs: number; cached: number[] }> {
  const request = benchRequest(host, snapshotId, label, repository);
  const started = performance.now();
  const cold = await host.environments.prepare(request);
  const coldMs = performance.now() - started;
  if (!cold || cold.reused)
    throw new Error(`${label}: the cold build was ${cold ? 'found in the cache' : 'not needed'}`);
  const cached = await repeat(repetitions, async () => {
    const at = performance.now();
    const again = await host.environments.prepare(request);
    if (!again?.reused) throw new Error(`${label}: the second preparation built again`);
    return performance.now() - at;
  });
  return { cold, coldMs, cached };
}

/**
 * The preparation of `repo` after `change` rewrote its file `source`, as a run on that path would
 * ask it: what a run on the next commit waits for. Its project image must be built.
 */
export async function preparedAfterChange(
  host: SandboxHost,
  repo: string,
  label: string,
  source: string,
  change: (text: string) => string,
): Promise<number> {
  const path = join(repo, source);
  const before = await readFile(path, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${label}: ${source} was not changed`);
  await writeFile(path, after);
  const snapshot = await host.snapshotRepository(repo, undefined);
  const started = performance.now();
  const prepared = await host.environments.prepare(benchRequest(host, snapshot.snapshotId, label, repo));
  if (!prepared || prepared.reused) throw new Error(`${label}: the next snapshot's project image was not built`);
  return performance.now() - started;
}

/** Runs a host command to its end; its standard output, or an error with the end of its standard error. */
export function runToEnd(
  command: string,
  args: string[],
  cwd = tmpdir(),
  env: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      command,
      args,
      { cwd, env: { ...process.env, ...env }, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${command} ${args.join(' ')} failed: ${`${stdout}${stderr}`.slice(-2000)}`))
          : resolve(stdout),
    ),
  );
}
