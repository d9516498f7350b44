// Idempotency keys (docs/formats/twin.md, `idempotency_key`): the first answer under a key is kept and
// replayed; calls sharing a key run one at a time so a concurrent retry never applies the effect twice.
import type { ToolAnswer } from './run-tool.js';

/** An answer kept under a key, with the canonical arguments that produced it. */
export interface StoredAnswer {
  argsJson: string;
  answer: ToolAnswer;
}

/** One episode's idempotency keys. */
export class IdempotencyStore {
  private readonly answers = new Map<string, StoredAnswer>();
  private readonly queues = new Map<string, Promise<void>>();

  /** Runs `fn` after every earlier call holding the same key has finished. */
  async serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.queues.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.queues.get(key) === tail) this.queues.delete(key);
    }
  }

  get(key: string): StoredAnswer | undefined {
    return this.answers.get(key);
  }

  /** Keeps the answer unless it is a server error (a 5xx says nothing settled, so a retry runs again). */
  keep(key: string, argsJson: string, answer: ToolAnswer): void {
    if (answer.status >= 500) return;
    if (!this.answers.has(key)) this.answers.set(key, { argsJson, answer });
  }
}
