/**
 * Keeps this thread's event loop busy, as a saturated in-process proxy would, for tests of how the
 * load generator behaves when the thread it watches has no time left.
 */

const blocker = new Int32Array(new SharedArrayBuffer(4));

/**
 * Holds this thread busy for `ms` (nothing else of it runs meanwhile: a long GC pause, a loaded machine).
 * Blocked in Atomics.wait rather than spinning: to its event loop (and its eventLoopUtilization) the
 * time is as busy, but it costs no CPU, and on 2 cores the suite's time is its CPU.
 */
export function busyWait(ms: number): void {
  const until = performance.now() + ms;
  // Atomics.wait may return early (it never does here: nothing notifies blocker); wait out what is left.
  for (let left = ms; left > 0; left = until - performance.now()) Atomics.wait(blocker, 0, 0, left);
}

/**
 * Busy-waits `sliceMs` at a time, back to back (setImmediate between slices, so I/O and timers
 * still run: every tick on time, yet the loop ~100% busy). Returns a function that stops it.
 */
export function busyInSlices(sliceMs: number): () => void {
  let burning = true;
  const burn = (): void => {
    busyWait(sliceMs);
    if (burning) setImmediate(burn);
  };
  setImmediate(burn);
  return () => {
    burning = false;
  };
}

/** Busy-waits `sliceMs`, then idles so the thread is about `share` busy, until stopped. */
export function busyShare(sliceMs: number, share: number): () => void {
  let burning = true;
  const burn = (): void => {
    busyWait(sliceMs);
    if (burning) setTimeout(burn, (sliceMs * (1 - share)) / share);
  };
  setTimeout(burn, 0);
  return () => {
    burning = false;
  };
}
