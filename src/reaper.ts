// Removes what runs leave behind when they cannot clean up after themselves (a terminated
// workflow, a worker killed for good): containers whose workflow is closed or unknown,
// containers stuck in "created", workspace folders nobody owns any more, and places in the
// sandbox queue held by runs that ended (so the queue, and its gauges, count live runs only).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { Client } from '@temporalio/client';
import { labels, listProjectContainers, removeContainer } from './sandbox/container/container.js';
import type { HostCapacity } from './sandbox/container/hostCapacity.js';
import { removeFolder } from './sandbox/workspace/ownerAccess.js';
import { closedReason, releaseQueuePlace } from './temporal/closedRuns.js';
import { sandboxAdmissionIdFor, sandboxQueueQuery } from './temporal/definitions.js';

export interface ReapedItem {
  kind: 'container' | 'workspace' | 'queue place';
  id: string;
  workflowId: string | null;
  reason: string;
}

export interface ReaperOptions {
  docker: Docker;
  client: Client;
  scope: string;
  workspaceRoot?: string;
  /** A container younger than this is never judged stuck in "created". */
  createdGraceMs?: number;
  /** This host's capacity: sandboxes held for closed runs are given back. */
  capacity?: HostCapacity;
  /** The task queue whose sandbox queue gives back the places of closed runs. */
  taskQueue?: string;
}

export async function reapOrphans(options: ReaperOptions): Promise<ReapedItem[]> {
  const reaped: ReapedItem[] = [];
  const verdicts = new Map<string, string | null>();
  const verdictFor = async (workflowId: string): Promise<string | null> => {
    if (!verdicts.has(workflowId)) verdicts.set(workflowId, await closedReason(options.client, workflowId));
    return verdicts.get(workflowId) ?? null;
  };

  for (const container of await listProjectContainers(options.docker)) {
    const workflowId = container.Labels[labels.workflowId] ?? null;
    const ageMs = Date.now() - container.Created * 1000;
    // Only this server's sandboxes are judged: another server's runs are its own reaper's.
    if (container.Labels[labels.scope] !== options.scope) continue;
    let reason: string | null = null;
    if (container.State === 'created' && ageMs > (options.createdGraceMs ?? 60_000)) {
      reason = 'stuck in created';
    } else if (workflowId) {
      reason = await verdictFor(workflowId);
    }
    if (reason) {
      await removeContainer(options.docker, container.Id);
      reaped.push({
        kind: 'container',
        id: container.Names[0]?.replace(/^\//, '') ?? container.Id,
        workflowId,
        reason,
      });
    }
  }

  if (options.workspaceRoot) {
    const folders = await readdir(options.workspaceRoot).catch(() => [] as string[]);
    for (const sandboxId of folders) {
      const owner = await readFile(join(options.workspaceRoot, sandboxId, 'owner.json'), 'utf8')
        .then((text) => JSON.parse(text) as { workflowId: string; scope: string })
        .catch(() => null);
      if (!owner || owner.scope !== options.scope) continue;
      const reason = await verdictFor(owner.workflowId);
      if (reason) {
        await removeFolder(join(options.workspaceRoot, sandboxId));
        reaped.push({ kind: 'workspace', id: sandboxId, workflowId: owner.workflowId, reason });
      }
    }
  }
  // A run that ended without destroying its sandbox (terminated) no longer holds a place here.
  const closedHere = reaped.flatMap((item) => (item.workflowId ? [item.workflowId] : []));
  for (const held of options.capacity?.heldSandboxes() ?? []) {
    if (!(await verdictFor(held.workflowId))) continue;
    options.capacity?.release(held.sandboxId);
    closedHere.push(held.workflowId);
  }
  // Nor in the sandbox queue. A worker's sweep gives back the places of the closed runs it held
  // (a sandbox, a container, a workspace), so the fleet asks about each run once, not once per
  // host; `reap` (no capacity) checks every place.
  if (options.taskQueue && (!options.capacity || closedHere.length > 0))
    reaped.push(
      ...(await releaseQueuePlaces(
        options.client,
        options.taskQueue,
        verdictFor,
        options.capacity ? closedHere : null,
      )),
    );
  return reaped;
}

/**
 * Runs that ended without telling the sandbox queue (terminated) leave it: their place, held or
 * waited for, is given back; of `only` the runs, when given, else of every run the queue knows.
 */
async function releaseQueuePlaces(
  client: Client,
  taskQueue: string,
  verdictFor: (workflowId: string) => Promise<string | null>,
  only: string[] | null,
): Promise<ReapedItem[]> {
  const state = await client.workflow
    .getHandle(sandboxAdmissionIdFor(taskQueue))
    .query(sandboxQueueQuery)
    .catch(() => null);
  if (!state) return [];
  const known = [...Object.keys(state.holding), ...state.waiting.map((each) => each.workflowId)];
  const reaped: ReapedItem[] = [];
  for (const workflowId of only ? known.filter((each) => only.includes(each)) : known) {
    const reason = await verdictFor(workflowId);
    if (!reason) continue;
    await releaseQueuePlace(client, taskQueue, workflowId);
    reaped.push({ kind: 'queue place', id: workflowId, workflowId, reason });
  }
  return reaped;
}

export interface PeriodicSweep {
  /** Stops sweeping; resolves once a sweep under way is over (it uses the worker's connections). */
  stop(): Promise<void>;
}

/**
 * Sweeps now and then every `everyMs`, so the sandboxes of runs that could not clean up after
 * themselves (a terminated workflow) go away without a restart or `reap`. Sweeps never overlap.
 */
export function sweepPeriodically(
  options: ReaperOptions & { everyMs: number; log: (line: string) => void },
): PeriodicSweep {
  let sweeping: Promise<void> | null = null;
  const sweep = () => {
    sweeping ??= reapOrphans(options)
      .then((reaped) => reaped.forEach((item) => options.log(`reaped ${item.kind} ${item.id} (${item.reason})`)))
      .catch((error: unknown) => options.log(`sandbox sweep failed: ${String(error)}`))
      .finally(() => {
        sweeping = null;
      });
  };
  sweep();
  const timer = setInterval(sweep, options.everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await sweeping;
    },
  };
}
