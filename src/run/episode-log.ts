// Graded episodes stream to episodes.jsonl as they finish, so every verdict can be traced to the
// calls and rows behind it, and nothing is lost when a run is interrupted. Each one also goes to a
// per-case spool, so the report is built one case at a time and memory does not grow with the run.
import { createWriteStream, mkdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GradedEpisode, Side } from '../model/episode.js';

/** One graded episode as a line of episodes.jsonl (and of the spool). */
export function episodeLine(graded: GradedEpisode): string {
  return `${JSON.stringify(graded)}\n`;
}

export class EpisodeLog {
  private readonly stream: WriteStream;
  private closed = false;
  // Every writer that finds the buffer full waits on the same 'drain': one listener however many
  // episodes finish at once (a listener each would pile up past Node's warning limit under load).
  private drained: Promise<void> | undefined;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'w' });
  }

  /**
   * Appends one graded episode as a JSON line (`line`, when the caller already serialized it for
   * the spool too: a wave's episodes end together, on one thread); waits when the stream asks.
   */
  async write(graded: GradedEpisode, line = episodeLine(graded)): Promise<void> {
    if (this.closed) return;
    const ok = this.stream.write(line);
    if (ok) return;
    this.drained ??= new Promise<void>((r) =>
      this.stream.once('drain', () => {
        this.drained = undefined;
        r();
      }),
    );
    await this.drained;
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((r) => this.stream.end(() => r()));
  }
}

/** One JSON-lines file per case under a directory of its own, removed by `dispose`. */
export class CaseSpool {
  private readonly files = new Map<string, string>();
  // Appends to one file are chained so two workers finishing the same case never interleave lines.
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    caseIds: readonly string[],
  ) {
    mkdirSync(dir, { recursive: true });
    // Files are named by position: scenario ids may hold characters a file name cannot.
    for (const [i, id] of caseIds.entries()) this.files.set(id, join(dir, `${i}.jsonl`));
  }

  /** Appends one graded episode (as `line`, when already serialized) to its case's file. */
  async write(graded: GradedEpisode, line = episodeLine(graded)): Promise<void> {
    const id = graded.record.scenario;
    const file = this.files.get(id);
    if (!file) throw new Error(`case spool: no case '${id}' in this run`);
    const next = (this.pending.get(id) ?? Promise.resolve()).then(() => appendFile(file, line));
    this.pending.set(id, next);
    try {
      await next;
    } finally {
      if (this.pending.get(id) === next) this.pending.delete(id);
    }
  }

  /** Every graded episode of one case, by side, in the order they finished. */
  read(id: string): Record<Side, GradedEpisode[]> {
    const file = this.files.get(id);
    if (!file) throw new Error(`case spool: no case '${id}' in this run`);
    const out: Record<Side, GradedEpisode[]> = { base: [], head: [] };
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      // A case none of whose episodes ran (an interrupted run) has no file.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
      throw err;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      const g = JSON.parse(line) as GradedEpisode;
      out[g.record.side].push(g);
    }
    return out;
  }

  /** Waits for pending appends, then removes the spool directory. */
  async dispose(): Promise<void> {
    await Promise.allSettled([...this.pending.values()]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
