// A container's stdout and stderr merged into one output a whole line at a time. Docker's frames
// cut each stream where the engine's reads did, so a line of one stream can arrive in pieces with
// the other stream's output between them (cargo's "Running" header, on stderr, inside a libtest
// line on stdout; an installer's warning inside our checks' mark): whatever reads the merged
// output line by line would miss that line. Each stream's unfinished line waits for its newline,
// for the end, or until it is long (a progress bar that never prints one).
import { Writable } from 'node:stream';

const newline = 0x0a;

export class LineMergedOutput {
  /** The sinks to hand to `demuxStream(stream, stdout, stderr)`. */
  readonly stdout: Writable;
  readonly stderr: Writable;
  private readonly streams: WholeLines[];

  constructor(emit: (chunk: Buffer) => void, maxPendingBytes = 64 * 1024) {
    this.streams = [new WholeLines(emit, maxPendingBytes), new WholeLines(emit, maxPendingBytes)];
    [this.stdout, this.stderr] = this.streams.map(
      (lines) =>
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.write(chunk);
            done();
          },
        }),
    ) as [Writable, Writable];
  }

  /** Writes each stream's unfinished line as it is, once the output has ended. */
  flush(): void {
    for (const lines of this.streams) lines.flush();
  }
}

class WholeLines {
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly emit: (chunk: Buffer) => void,
    private readonly maxPendingBytes: number,
  ) {}

  write(chunk: Buffer): void {
    const lastNewline = chunk.lastIndexOf(newline);
    if (lastNewline < 0) {
      this.pending = Buffer.concat([this.pending, chunk]);
      if (this.pending.length >= this.maxPendingBytes) this.flush();
      return;
    }
    this.emit(Buffer.concat([this.pending, chunk.subarray(0, lastNewline + 1)]));
    this.pending = Buffer.from(chunk.subarray(lastNewline + 1));
  }

  flush(): void {
    if (this.pending.length > 0) this.emit(this.pending);
    this.pending = Buffer.alloc(0);
  }
}
