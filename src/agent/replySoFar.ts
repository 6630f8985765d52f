// What a model call has written of its reply so far, as its activity heartbeats it while the reply
// streams in (activities/model.ts) and as `watch` shows it (src/cli/follow.ts). Heartbeat details
// reach the server every couple of seconds, so this is a glimpse of the reply being written, not
// the reply: the reply itself enters the conversation once, whole, when the call ends.

/** The heartbeat details of a model call. */
export interface ModelCallHeartbeat {
  waitingForModel: true;
  /** The end of what has been written so far, once the model has begun writing. */
  writing?: WritingSoFar;
}

export interface WritingSoFar {
  /** The last `writingTailChars` characters of the block being written. */
  tail: string;
  /** Thinking (extended thinking), not the reply's text. */
  thinking: boolean;
  /** How long the block is so far. */
  chars: number;
}

/** What a heartbeat carries of the reply: enough to follow it on a screen, small enough to send often. */
export const writingTailChars = 400;

export function writingSoFar(text: string, thinking: boolean): WritingSoFar {
  return { tail: text.slice(-writingTailChars), thinking, chars: text.length };
}

/** The writing in a model call's heartbeat details, if they carry any (details come from the server: untrusted shape). */
export function writingIn(details: unknown): WritingSoFar | null {
  const writing = (details as Partial<ModelCallHeartbeat> | null)?.writing;
  if (!writing || typeof writing.tail !== 'string' || typeof writing.chars !== 'number') return null;
  return { tail: writing.tail.slice(-writingTailChars), thinking: writing.thinking === true, chars: writing.chars };
}
