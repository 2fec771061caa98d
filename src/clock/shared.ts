/**
 * The memory a thread's wake-up service (wake-ups.ts) shares with its helper thread
 * (wake-thread.ts). Each index in its own element size: Int32 0–2 (bytes 0–11), Float64 2–3
 * (bytes 16–31).
 */

/** Bumped by the owner after every write of WAKE_AT and SPIN_MS: the helper fires at most once per arm. */
export const ARM_SEQ = 0;
/** Bumped by the helper when the armed time has come; the owner awaits it with Atomics.waitAsync. */
export const WAKE_SEQ = 1;
/** Set to 1 by the helper once it runs: until then the backstop timer paces alone. */
export const READY = 2;
/** The armed wake time (monotonicMs), +Infinity for none. */
export const WAKE_AT = 2;
/** How long before WAKE_AT the helper stops sleeping and spins (ms). */
export const SPIN_MS = 3;
export const SHARED_BYTES = 4 * Float64Array.BYTES_PER_ELEMENT;

export function sharedViews(buffer: SharedArrayBuffer): { ints: Int32Array; times: Float64Array } {
  return { ints: new Int32Array(buffer), times: new Float64Array(buffer) };
}
