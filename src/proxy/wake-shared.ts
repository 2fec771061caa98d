/** The memory and clock the wake-up timers (wake-timers.ts) share with their thread (wake-thread.ts). */

/** Milliseconds on the monotonic clock every thread of the process reads alike (performance.now()'s origin is per thread). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * Two views of one shared buffer: `due`, the earliest wake-up (monotonicMs, +Infinity for none),
 * and `sequence`, bumped after every write of `due` so a waiting thread sees the change.
 */
export function sharedWakeViews(buffer: SharedArrayBuffer): { due: Float64Array; sequence: Int32Array } {
  return { due: new Float64Array(buffer, 0, 1), sequence: new Int32Array(buffer, 8, 1) };
}

export const SHARED_WAKE_BYTES = 16;
