/** Waiting on something another process or thread does, bounded, without assuming how fast the machine is. */

/**
 * Resolves once `count()` has not changed for `quietMs` (a load that stopped sends nothing more);
 * throws when that has not happened within `limitMs` (a load that never stops).
 */
export async function quietFor(count: () => number, quietMs: number, limitMs: number): Promise<void> {
  const started = Date.now();
  let last = count();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() - started > limitMs) throw new Error(`still changing after ${limitMs} ms (now ${count()})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (count() !== last) {
      last = count();
      since = Date.now();
    }
  }
}

/**
 * How long a test waits for what a process start or a thread does (a line on stderr, a port that
 * listens, an MCP initialize answer, a child that is reaped) before taking it as hung. A hang
 * guard, never a figure: a wait that is met returns at once, a start that fails is seen when the
 * process exits, and a process start has taken over 20 s at a load of 28 on 2 cores.
 */
export const HANG_GUARD_MS = 300_000;
