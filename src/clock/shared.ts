/**
 * The memory a thread's wake-up service (wake-ups.ts) shares with its helper thread
 * (wake-thread.ts). Each index in its own element size: Int32 0–3 (bytes 0–15), Float64 2–4
 * (bytes 16–39).
 */

/** Bumped by the owner after every write of WAKE_AT and SPIN_MS: the helper fires at most once per arm. */
export const ARM_SEQ = 0;
/** Bumped by the helper when the armed time has come; the owner awaits it with Atomics.waitAsync. */
export const WAKE_SEQ = 1;
/** Set to 1 by the helper once it runs: until then the backstop timer paces alone. */
export const READY = 2;
/** Bumped by the helper after each write of SLEEP_UNTIL: a full fence before it reads ARM_SEQ and sleeps. */
export const SLEEP_SEQ = 3;
/** The armed wake time (monotonicMs), +Infinity for none. */
export const WAKE_AT = 2;
/** How long before WAKE_AT the helper stops sleeping and spins (ms). */
export const SPIN_MS = 3;
/**
 * When the helper's sleep ends by itself (monotonicMs), +Infinity while it sleeps until notified, and at most
 * the time it last woke while awake: an arm whose time is later needs no notify (the helper reads it then).
 */
export const SLEEP_UNTIL = 4;
export const SHARED_BYTES = 5 * Float64Array.BYTES_PER_ELEMENT;
/** The helpers' thread name (Linux, at most 15 bytes): what top -H, perf and the benchmarks find them by. */
export const HELPER_NAME = 'faultline-clock';

export function sharedViews(buffer: SharedArrayBuffer): { ints: Int32Array; times: Float64Array } {
  return { ints: new Int32Array(buffer), times: new Float64Array(buffer) };
}
