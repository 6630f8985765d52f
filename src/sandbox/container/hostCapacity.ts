// What one worker host holds at once: sandboxes (a run's container and workspace, from its claim
// to its destroy) and environment builds. The worker takes a sandbox claim only while it has
// room (src/worker.ts hands out the claim queue's task slots through `reserveClaim`), so a full
// host leaves the next run in the queue for another host; builds wait here for a build slot.
// Knows nothing of Temporal.
import { availableParallelism, totalmem } from 'node:os';
import { sandboxLimitsSchema } from '../../agent/input.js';

export interface HostCapacityLimits {
  /** Sandboxes held at once (claimed and not yet destroyed). */
  sandboxes: number;
  /** Environment builds (dependency installs) running at once. */
  environmentBuilds: number;
}

/** A run's default sandbox memory cap: a host never promises more than its memory in such caps. */
const sandboxMemoryMb = sandboxLimitsSchema.parse({}).memoryMb;

/**
 * Defaults from the machine: a sandbox is idle while its run waits for the model (seconds per
 * call), so a core serves about four runs; memory caps them at three quarters of the machine's
 * memory in default-sized sandboxes. A build is a busy install: one per two cores.
 */
export function defaultHostCapacity(
  machine: { cores: number; memoryBytes: number } = { cores: availableParallelism(), memoryBytes: totalmem() },
): HostCapacityLimits {
  const byCores = machine.cores * 4;
  const byMemory = Math.floor((machine.memoryBytes * 0.75) / (sandboxMemoryMb * 1024 * 1024));
  return {
    sandboxes: Math.max(1, Math.min(byCores, byMemory)),
    environmentBuilds: Math.max(1, Math.floor(machine.cores / 2)),
  };
}

export interface HeldSandbox {
  sandboxId: string;
  workflowId: string;
  since: number;
}

/** A first-come, first-served counting semaphore whose waiters can give up (an abort). */
class Slots {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: () => number) {}

  get inUse(): number {
    return this.used;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  tryTake(extra = 0): boolean {
    if (this.used + extra >= this.limit()) return false;
    this.used += 1;
    return true;
  }

  take(signal?: AbortSignal, extra: () => number = () => 0): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiters.length === 0 && this.tryTake(extra())) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        if (!this.tryTake(extra())) return false;
        signal?.removeEventListener('abort', onAbort);
        resolve();
        return true;
      };
      const entry = () => void wake();
      const onAbort = () => {
        const index = this.waiters.indexOf(entry);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(entry);
      this.wakeWaiters(extra);
    });
  }

  give(extra: () => number = () => 0): void {
    this.used = Math.max(0, this.used - 1);
    this.wakeWaiters(extra);
  }

  /** Wakes waiters in order while there is room. */
  wakeWaiters(extra: () => number = () => 0): void {
    while (this.waiters.length > 0 && this.used + extra() < this.limit()) {
      const next = this.waiters.shift() as () => void;
      next();
    }
  }
}

export class HostCapacity {
  private readonly held = new Map<string, HeldSandbox>();
  /** Claim slots: a permit lets the worker poll for one claim, and counts as a sandbox until released. */
  private readonly claims: Slots;
  private readonly builds: Slots;

  constructor(readonly limits: HostCapacityLimits) {
    this.claims = new Slots(() => limits.sandboxes);
    this.builds = new Slots(() => limits.environmentBuilds);
  }

  /** Sandboxes held now. */
  get sandboxes(): number {
    return this.held.size;
  }

  /** Whether one more claim fits: held sandboxes plus claims being polled for or taken. */
  get full(): boolean {
    return this.held.size + this.claims.inUse >= this.limits.sandboxes;
  }

  get environmentBuilds(): { running: number; waiting: number } {
    return { running: this.builds.inUse, waiting: this.builds.waiting };
  }

  heldSandboxes(): HeldSandbox[] {
    return [...this.held.values()];
  }

  /** Resolves when there is room for one more sandbox; the permit is given back with `releaseClaim`. */
  reserveClaim(signal?: AbortSignal): Promise<void> {
    return this.claims.take(signal, () => this.held.size);
  }

  /** A permit now if there is room, without waiting. */
  tryReserveClaim(): boolean {
    return this.claims.tryTake(this.held.size);
  }

  releaseClaim(): void {
    this.claims.give(() => this.held.size);
  }

  /** The host holds this sandbox from its claim until `release` (the same sandbox twice is one). */
  hold(sandboxId: string, workflowId: string, now = Date.now()): void {
    if (!this.held.has(sandboxId)) this.held.set(sandboxId, { sandboxId, workflowId, since: now });
  }

  release(sandboxId: string): void {
    if (this.held.delete(sandboxId)) this.claims.wakeWaiters(() => this.held.size);
  }

  /** Waits for an environment build slot (in order of asking); call the returned function when the build ends. */
  async environmentBuildSlot(signal?: AbortSignal): Promise<() => void> {
    await this.builds.take(signal);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.builds.give();
    };
  }
}
