// Graded episodes stream to episodes.jsonl as they finish, so every verdict can be traced to the
// calls and rows behind it, and nothing is lost when a run is interrupted.
import { createWriteStream, type WriteStream } from 'node:fs';
import type { GradedEpisode } from '../record.js';

export class EpisodeLog {
  private readonly stream: WriteStream;
  private closed = false;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'w' });
  }

  /** Appends one graded episode as a JSON line; waits when the stream asks for it. */
  async write(graded: GradedEpisode): Promise<void> {
    if (this.closed) return;
    const ok = this.stream.write(`${JSON.stringify(graded)}\n`);
    if (!ok) await new Promise<void>((r) => this.stream.once('drain', () => r()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((r) => this.stream.end(() => r()));
  }
}
