// `setup`'s output: one line per step (and one before a long one), and the error a step ends with.

export class SetupError extends Error {
  constructor(
    readonly step: string,
    readonly problem: string,
    /** What to run or do about it. */
    readonly fix: string,
  ) {
    super(`${step}: ${problem}. ${fix}`);
  }
}

export interface Progress {
  /** A long step begins (an install, a build). */
  start(step: string, what: string): void;
  /** A step's outcome. */
  done(step: string, outcome: string): void;
}

export function progressLines(write: (line: string) => void): Progress {
  return {
    start: (step, what) => write(`setup: ${step}: ${what} …`),
    done: (step, outcome) => write(`setup: ${step}: ${outcome}`),
  };
}
