// Waiting in tests without a wall-clock bet: poll a condition until it holds or a generous deadline
// passes, then fail with what was awaited. A loaded 2-core machine may take seconds where an idle one
// takes milliseconds; the deadline only bounds a hang, it never decides a pass.
export async function until(
  what: string,
  holds: () => boolean | Promise<boolean>,
  { timeoutMs = 30_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
