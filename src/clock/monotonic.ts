/**
 * Milliseconds on the monotonic clock, read alike by every thread of the process (performance.now()
 * counts from an origin of each thread's own). The wake-up service (wake-ups.ts) and its helper
 * thread share due times on it.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
