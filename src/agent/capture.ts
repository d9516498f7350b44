// Captured output with a byte cap. The head and the tail are kept because the agent's result is its
// last line: 10 MB of logs must not push it out.

/** The default cap per stream: 1 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

/** The last non-empty line of captured text, and whether the cap cut its beginning off. */
export interface LastLine {
  line: string;
  cut: boolean;
}

/** Collects a stream's bytes up to `maxBytes`, keeping the first and the last half. */
export class OutputCapture {
  private readonly headCap: number;
  /** How many bytes of the tail are kept. */
  readonly tailCap: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte seen, kept or not. */
  totalBytes = 0;

  constructor(readonly maxBytes: number = DEFAULT_MAX_OUTPUT_BYTES) {
    if (!Number.isInteger(maxBytes) || maxBytes < 2)
      throw new Error(`maxOutputBytes must be an integer >= 2, got ${maxBytes}`);
    this.headCap = Math.floor(maxBytes / 2);
    this.tailCap = maxBytes - this.headCap;
  }

  /** Adds a chunk. */
  push(chunk: Buffer | string): void {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.totalBytes += buf.length;
    if (this.headBytes < this.headCap) {
      const take = Math.min(buf.length, this.headCap - this.headBytes);
      this.head.push(buf.subarray(0, take));
      this.headBytes += take;
      buf = buf.subarray(take);
    }
    if (buf.length === 0) return;
    this.tail.push(buf);
    this.tailBytes += buf.length;
    // Drop whole chunks that lie before the last tailCap + 1 bytes (one more, to see where a line began).
    while (this.tail.length > 1 && this.tailBytes - this.tail[0].length > this.tailCap) {
      this.tailBytes -= this.tail[0].length;
      this.tail.shift();
    }
  }

  /** Whether bytes were dropped. */
  get truncated(): boolean {
    return this.totalBytes > this.maxBytes;
  }

  private tailBuffer(bytes: number): Buffer {
    const all = Buffer.concat(this.tail);
    return all.length > bytes ? all.subarray(all.length - bytes) : all;
  }

  /** The kept text; when truncated, a marker line says how many bytes were left out. */
  text(): string {
    if (!this.truncated) return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
    const omitted = this.totalBytes - this.maxBytes;
    const head = Buffer.concat(this.head).toString('utf8');
    return `${head}\n[... ${omitted} bytes omitted ...]\n${this.tailBuffer(this.tailCap).toString('utf8')}`;
  }

  /** The last non-empty line, or null when there is none. */
  lastLine(): LastLine | null {
    // Truncated: the byte before the kept tail tells whether its first line is whole.
    const kept = this.truncated
      ? this.tailBuffer(this.tailCap + 1)
      : Buffer.concat([...this.head, ...this.tail]);
    const lines = kept.toString('utf8').split(/\r?\n/);
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i].trim() === '') continue;
      return { line: lines[i].trim(), cut: this.truncated && i === 0 };
    }
    return null;
  }
}
