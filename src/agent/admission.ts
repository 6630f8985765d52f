// The rules of the sandbox queue (workflows/sandboxAdmission.ts keeps one per task queue): runs
// wait in start order within a priority (1 first, 5 last), a user or the whole queue may be held
// to a number of sandboxes at once, and the first run that no limit holds back goes next, so a
// user at their limit never blocks another user's runs behind theirs. Pure: no I/O.

export interface SandboxRequest {
  workflowId: string;
  /** Who started the run (the run input's `user`). */
  user: string;
  /** Temporal's priority key: 1 goes first, 5 last. */
  priority: number;
  /** When the run started (ms since epoch): the order within a priority. */
  startedAt: number;
}

/** Sandboxes held at once by one user's runs, and by all runs of the task queue; null: no limit. */
export interface AdmissionLimits {
  perUser: number | null;
  perQueue: number | null;
}

export interface AdmissionState {
  waiting: SandboxRequest[];
  /** The runs that hold a sandbox, by workflow id. */
  holding: Record<string, { user: string; since: number }>;
  limits: AdmissionLimits;
  /** Runs placed by this queue since it began (across continue-as-new). */
  placed: number;
  /** The run whose host is being claimed now (the claim waits while no host has room). */
  placing: string | null;
}

export const noLimits: AdmissionLimits = { perUser: null, perQueue: null };
export const defaultPriority = 3;

export function emptyAdmission(): AdmissionState {
  return { waiting: [], holding: {}, limits: { ...noLimits }, placed: 0, placing: null };
}

function inOrder(a: SandboxRequest, b: SandboxRequest): number {
  return a.priority - b.priority || a.startedAt - b.startedAt || (a.workflowId < b.workflowId ? -1 : 1);
}

/** A run asks for a sandbox (asking twice is once); the limits it carries are the workers' latest. */
export function enqueue(state: AdmissionState, request: SandboxRequest, limits: AdmissionLimits): void {
  state.limits = limits;
  if (state.holding[request.workflowId] || state.waiting.some((each) => each.workflowId === request.workflowId)) return;
  state.waiting.push(request);
  state.waiting.sort(inOrder);
}

/** A run gave its sandbox back, or stopped waiting for one. */
export function release(state: AdmissionState, workflowId: string): void {
  delete state.holding[workflowId];
  state.waiting = state.waiting.filter((each) => each.workflowId !== workflowId);
}

function heldBy(state: AdmissionState, user: string): number {
  return Object.values(state.holding).filter((each) => each.user === user).length;
}

/** The run that goes next: the first in order that no limit holds back; null when none may go. */
export function nextRequest(state: AdmissionState): SandboxRequest | null {
  const { perUser, perQueue } = state.limits;
  if (perQueue !== null && Object.keys(state.holding).length >= perQueue) return null;
  return state.waiting.find((each) => perUser === null || heldBy(state, each.user) < perUser) ?? null;
}

/** Takes the next run off the queue: it holds a sandbox from now on. */
export function admit(state: AdmissionState, request: SandboxRequest, now: number): void {
  state.waiting = state.waiting.filter((each) => each.workflowId !== request.workflowId);
  state.holding[request.workflowId] = { user: request.user, since: now };
  state.placed += 1;
  state.placing = request.workflowId;
}

/** The run's host is claimed (or its claim failed): nobody is being placed. */
export function placingDone(state: AdmissionState): void {
  state.placing = null;
}

/** A run whose claim failed goes back to its place. */
export function requeue(state: AdmissionState, request: SandboxRequest): void {
  delete state.holding[request.workflowId];
  state.placed -= 1;
  state.waiting.push(request);
  state.waiting.sort(inOrder);
}

/**
 * Where a run is: `position` in the queue (1: next; 0: first, its host being claimed, which waits
 * while no host has room), how many wait in all, and the limit that holds it back, if one does;
 * `placed` once it has a host, `unknown` when the queue does not know it.
 */
export type QueuePlace = { position: number; queued: number; heldBack: string | null } | 'placed' | 'unknown';

export function placeOf(state: AdmissionState, workflowId: string): QueuePlace {
  const placing = state.placing;
  const queued = state.waiting.length + (placing ? 1 : 0);
  if (placing === workflowId) return { position: 0, queued, heldBack: null };
  if (state.holding[workflowId]) return 'placed';
  const index = state.waiting.findIndex((each) => each.workflowId === workflowId);
  if (index < 0) return 'unknown';
  const request = state.waiting[index] as SandboxRequest;
  const { perUser, perQueue } = state.limits;
  const heldBack =
    perUser !== null && heldBy(state, request.user) >= perUser
      ? `${request.user} holds ${perUser} sandbox${perUser === 1 ? '' : 'es'}, the most a user may`
      : perQueue !== null && Object.keys(state.holding).length >= perQueue
        ? `the queue holds ${perQueue} sandbox${perQueue === 1 ? '' : 'es'}, the most it may`
        : null;
  return { position: index + 1, queued, heldBack };
}

/** The line a waiting run shows (status, Web UI). */
export function describeWait(place: QueuePlace): string {
  if (typeof place === 'string') return 'waiting for a sandbox host';
  const where =
    place.position === 0
      ? 'this run first, for a host with room'
      : place.position === 1
        ? 'this run next'
        : `${place.position - 1} ahead`;
  return (
    `waiting for a sandbox host: ${place.queued} queued, ${where}` + (place.heldBack ? ` (${place.heldBack})` : '')
  );
}

/** Runs holding a sandbox and runs waiting (a run whose host is being claimed still waits): the gauges and `hosts` count these. */
export function admissionCounts(state: AdmissionState): { holdingSandbox: number; waiting: number } {
  return { holdingSandbox: Object.keys(state.holding).length, waiting: state.waiting.length + (state.placing ? 1 : 0) };
}

/** The queue's own line in the Web UI. */
export function describeQueue(state: AdmissionState): string {
  const limits = [
    state.limits.perUser === null ? null : `${state.limits.perUser} per user`,
    state.limits.perQueue === null ? null : `${state.limits.perQueue} in all`,
  ].filter(Boolean);
  const counts = admissionCounts(state);
  return (
    `${counts.waiting} waiting · ${counts.holdingSandbox} holding a sandbox · ${state.placed} placed` +
    (limits.length ? ` · limits: ${limits.join(', ')}` : '')
  );
}
