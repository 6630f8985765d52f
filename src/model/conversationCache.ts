// The conversations of recent model calls, per workflow run, kept in this worker process so that a
// model call whose input carries only what changed (src/agent/conversationDelta.ts) can rebuild the
// whole conversation without asking the workflow. A call that lands on another worker, after a
// restart, or whose basis was dropped gets null: the activity then reads the transcript query.
import type { ConversationDelta } from '../agent/conversationDelta.js';
import type { Message } from '../agent/conversation.js';

/** Calls kept per run: the last two, so that a retry of the latest call still finds its basis. */
const callsPerRun = 2;

export class ConversationCache {
  /** Run id → call sequence → conversation; a Map keeps insertion order, the oldest run first. */
  private readonly runs = new Map<string, Map<number, Message[]>>();

  constructor(private readonly maxRuns = 32) {}

  /** The whole conversation of `delta`'s call, or null when this process does not hold its basis. */
  rebuild(runId: string, delta: ConversationDelta): Message[] | null {
    if (delta.from === 0) return delta.messages;
    const basis = this.runs.get(runId)?.get(delta.basedOn);
    if (!basis || basis.length < delta.from) return null;
    return [...basis.slice(0, delta.from), ...delta.messages];
  }

  remember(runId: string, sequence: number, messages: Message[]): void {
    const calls = this.runs.get(runId) ?? new Map<number, Message[]>();
    this.runs.delete(runId);
    this.runs.set(runId, calls);
    calls.delete(sequence);
    calls.set(sequence, messages);
    for (const oldest of calls.keys()) {
      if (calls.size <= callsPerRun) break;
      calls.delete(oldest);
    }
    for (const oldestRun of this.runs.keys()) {
      if (this.runs.size <= this.maxRuns) break;
      this.runs.delete(oldestRun);
    }
  }

  /** How many runs are kept (for tests). */
  get size(): number {
    return this.runs.size;
  }
}
