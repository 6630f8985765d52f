// The sandbox queue's rules (src/agent/admission.ts): start order within a priority, limits per user
// and per queue that hold back only the runs they name, and what a waiting run is told.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  admit,
  describeWait,
  emptyAdmission,
  enqueue,
  nextRequest,
  placeOf,
  placingDone,
  release,
  requeue,
  type AdmissionLimits,
  type SandboxRequest,
} from '../../src/agent/admission.js';

const none: AdmissionLimits = { perUser: null, perQueue: null };
const request = (workflowId: string, startedAt: number, extra: Partial<SandboxRequest> = {}): SandboxRequest => ({
  workflowId,
  user: 'ann',
  priority: 3,
  startedAt,
  ...extra,
});

/** Places every run the limits allow, in the order the queue picks them. */
function drain(state: ReturnType<typeof emptyAdmission>): string[] {
  const placed: string[] = [];
  for (let next = nextRequest(state); next; next = nextRequest(state)) {
    admit(state, next, 0);
    placingDone(state);
    placed.push(next.workflowId);
  }
  return placed;
}

test('50 runs asked for out of order are placed in start order within a priority, all of them', () => {
  const state = emptyAdmission();
  const ids = Array.from({ length: 50 }, (_, index) => `run-${index}`);
  for (const index of [...ids.keys()].reverse()) enqueue(state, request(ids[index] as string, 1_000 + index), none);
  enqueue(state, request('urgent', 5_000, { priority: 1 }), none);
  enqueue(state, request('run-3', 1_003), none); // asked twice: once
  assert.deepEqual(drain(state), ['urgent', ...ids]);
});

test('a user at their limit waits, without holding back the runs of others behind theirs', () => {
  const state = emptyAdmission();
  const limits = { perUser: 2, perQueue: null };
  for (const [index, id] of ['ann-1', 'ann-2', 'ann-3', 'bob-1'].entries())
    enqueue(state, request(id, index, { user: id.split('-')[0] as string }), limits);
  assert.deepEqual(drain(state), ['ann-1', 'ann-2', 'bob-1']);
  const place = placeOf(state, 'ann-3');
  assert.deepEqual(place, { position: 1, queued: 1, heldBack: 'ann holds 2 sandboxes, the most a user may' });
  assert.equal(
    describeWait(place),
    'waiting for a sandbox host: 1 queued, this run next (ann holds 2 sandboxes, the most a user may)',
  );
  release(state, 'ann-1');
  assert.deepEqual(drain(state), ['ann-3']);
});

test('a queue limit holds every run back until a sandbox is given back; a failed claim keeps its place', () => {
  const state = emptyAdmission();
  const limits = { perUser: null, perQueue: 1 };
  for (const [index, id] of ['a', 'b', 'c'].entries()) enqueue(state, request(id, index), limits);
  assert.deepEqual(drain(state), ['a']);
  assert.equal(
    describeWait(placeOf(state, 'c')),
    'waiting for a sandbox host: 2 queued, 1 ahead (the queue holds 1 sandbox, the most it may)',
  );
  release(state, 'a');
  const b = nextRequest(state) as SandboxRequest;
  admit(state, b, 0);
  assert.deepEqual(placeOf(state, 'b'), { position: 0, queued: 2, heldBack: null });
  requeue(state, b);
  placingDone(state);
  assert.equal(nextRequest(state)?.workflowId, 'b');
  assert.equal(placeOf(state, 'gone'), 'unknown');
});
