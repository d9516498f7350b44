// The statement_timeout the suite's SQL runs under inside an episode (state.sql, expectation
// queries): the episode's timeout, so a statement that never ends cannot hold a worker forever.

/** A statement_timeout setting: whole milliseconds, at least 1; '0' (none) when no timeout is given. */
export function statementTimeout(timeoutMs: number | undefined): string {
  if (timeoutMs === undefined) return '0';
  const ms = Math.max(1, Math.ceil(timeoutMs));
  if (!Number.isSafeInteger(ms))
    throw new RangeError(`statement timeout ${timeoutMs} ms is not a whole number`);
  return String(ms);
}
