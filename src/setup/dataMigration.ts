// Before following the XDG base directories, the checkout's commands kept everything in the
// checkout's own `.durable-debugger`. Setup moves it once: the runs (server database, content
// store, patches, workspaces) into the data home and the tools into the cache, so a user of the
// checkout keeps finding their runs. Only what the product writes there moves: the checkout's
// own tooling keeps its folders (the cluster's data, the test lanes' Docker engines, durations).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config.js';
import { checkoutDataHome } from '../locations.js';
import { quote, type CheckResult } from './parts.js';
import { SetupError, type Progress } from './setupProgress.js';

const run = promisify(execFile);
const step = 'data home';
/** What the product writes in a data home (src/temporal/embeddedServer.ts, the store, workspaces, environment builds, patches, logs). */
const productData =
  /^(temporal\.(db|db-wal|db-shm|log|pid)|store|runs|workspaces|environment-builds|env-builds|dockerd\.log|debootstrap\.log)$/;

/** The entries of the checkout's old data home still to move (none when it is the data home itself). */
export function checkoutDataToMove(config: Config, from = checkoutDataHome): string[] {
  if (config.home === from || !existsSync(join(from, 'temporal.db'))) return [];
  return readdirSync(from).filter((entry) => productData.test(entry));
}

export function checkDataHome(config: Config, from = checkoutDataHome): CheckResult {
  const left = checkoutDataToMove(config, from);
  if (left.length > 0)
    return {
      name: step,
      status: 'warn',
      detail: `${config.home}; the runs of the checkout's earlier commands are still in ${from}`,
      fix: 'durable-debugger setup (it moves them)',
    };
  return { name: step, status: 'ok', detail: config.home };
}

export async function migrateCheckoutData(config: Config, progress: Progress, from = checkoutDataHome): Promise<void> {
  const entries = checkoutDataToMove(config, from);
  if (entries.length > 0) {
    const server = runningServerOf(from);
    if (server !== null) {
      throw new SetupError(
        step,
        `the runs in ${from} are to move to ${config.home}, but the Temporal dev server (pid ${server}) still runs on them`,
        `Stop the durable-debugger commands that use it and the server (kill ${server}), then run setup again.`,
      );
    }
    if (existsSync(join(config.home, 'temporal.db'))) {
      return progress.done(
        step,
        `${config.home} has runs of its own; the checkout's earlier runs stay in ${from} (see them with DURABLE_DEBUGGER_HOME=${quote(from)})`,
      );
    }
    progress.start(step, `moving the checkout's earlier runs from ${from} to ${config.home}`);
    await mkdir(config.home, { recursive: true });
    for (const entry of entries) await move(join(from, entry), join(config.home, entry));
  }
  const oldTools = join(from, 'tools');
  if (config.home !== from && existsSync(oldTools) && !existsSync(config.toolsRoot)) {
    await move(oldTools, config.toolsRoot);
    progress.done('tools', `moved from ${oldTools} to ${config.toolsRoot}`);
  }
  progress.done(step, config.home);
}

/** A rename, or across file systems a copy that keeps modes and times, then the removal. */
async function move(from: string, to: string): Promise<void> {
  if (existsSync(to)) return;
  await mkdir(join(to, '..'), { recursive: true });
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await run('cp', ['-a', from, to]);
    await rm(from, { recursive: true, force: true });
  }
}

/** The pid of a live Temporal dev server started on that home's database, else null. */
function runningServerOf(home: string): number | null {
  try {
    const pid = Number(readFileSync(join(home, 'temporal.pid'), 'utf8').trim());
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return commandLine.includes(join(home, 'temporal.db')) ? pid : null;
  } catch {
    return null;
  }
}
