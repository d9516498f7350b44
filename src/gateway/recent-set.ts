// A set that remembers only its most recent members: bounded memory for facts that are only
// useful while they are fresh.

/** A set of at most `limit` members; adding past the limit forgets the oldest. */
export class RecentSet<T> {
  private readonly members = new Set<T>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 0)
      throw new Error(`limit must be a whole number >= 0, got ${limit}`);
  }

  add(value: T): void {
    // Re-adding moves a member to the newest end (a Set keeps insertion order).
    this.members.delete(value);
    this.members.add(value);
    while (this.members.size > this.limit) {
      this.members.delete(this.members.values().next().value as T);
    }
  }

  has(value: T): boolean {
    return this.members.has(value);
  }

  get size(): number {
    return this.members.size;
  }
}
