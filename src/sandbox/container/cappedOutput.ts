// Collects a command's output with bounded memory, however much it prints: the first half of
// the budget is kept as the head, the last half as a rolling tail, and the rest is counted.

export class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private totalBytes = 0;

  constructor(private readonly maxBytes: number) {}

  get total(): number {
    return this.totalBytes;
  }

  get dropped(): number {
    return this.totalBytes - this.headBytes - this.tailBytes;
  }

  write(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const headRoom = Math.ceil(this.maxBytes / 2) - this.headBytes;
    if (headRoom > 0) {
      const part = chunk.subarray(0, headRoom);
      this.head.push(part);
      this.headBytes += part.length;
      chunk = chunk.subarray(part.length);
      if (chunk.length === 0) return;
    }
    const tailLimit = Math.floor(this.maxBytes / 2);
    this.tail.push(chunk.length > tailLimit ? chunk.subarray(chunk.length - tailLimit) : chunk);
    this.tailBytes += Math.min(chunk.length, tailLimit);
    while (this.tailBytes > tailLimit && this.tail.length > 0) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - tailLimit;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    if (this.dropped === 0) return head + Buffer.concat(this.tail).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    return `${head}\n[... ${this.dropped} bytes of output dropped ...]\n${tail}`;
  }
}
