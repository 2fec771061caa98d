/**
 * The memory the wake-up services (wake-ups.ts) share with their helper thread (wake-thread.ts): a board
 * of SLOTS, one per service, and a header the helper and every service read.
 *
 *   header (bytes 0–31):  Int32 0 DOORBELL, 1 READY, 2 CLAIMED, 3 GONE, 4 SLEEP_SEQ · Float64 3 SLEEP_UNTIL
 *   slot k (32 bytes at 32 + 32k):  Int32 ARM_SEQ, WAKE_SEQ · Float64 WAKE_AT, SPIN_MS · Int32 TAKEN
 *
 * One board per process serves every thread that uses the service (the caller's, the generator's, the proxy's),
 * so the process has one helper thread where it had one per thread: each costs a Node thread's start (~50 ms of
 * CPU on a 2-core VM) and wake-ups of its own. A thread started without the board (not by the load generator or
 * the proxy host) gets a board of its own, with a helper of its own.
 */

/** Bumped by a service after each arm (a full fence before it reads SLEEP_UNTIL): the helper waits on it. */
export const DOORBELL = 0;
/** Set to 1 by the helper once it runs: until then the backstop timers pace alone. */
export const READY = 1;
/** How many slots have been used so far (a high-water mark; slots are given back and reused): the helper reads no
 * further. */
export const CLAIMED = 2;
/**
 * Set to 1 by the thread that started the helper when the helper has exited and is not replaced (helper.ts): the
 * services pace on timers.
 */
export const GONE = 3;
/**
 * Bumped by the helper after each write of SLEEP_UNTIL, before it reads the doorbell and sleeps; a service loads it
 * after ringing, before it reads SLEEP_UNTIL (the pair that makes that plain read see the write).
 */
export const SLEEP_SEQ = 4;
/**
 * When the helper's sleep ends by itself (monotonicMs), +Infinity while it sleeps until notified, and at most the
 * time it last woke while awake: an arm whose time is later needs no notify (the helper reads it then).
 */
export const SLEEP_UNTIL = 3;

const HEADER_BYTES = 32;
const SLOT_BYTES = 32;
/** A process board's slots: the caller's thread, the generator's, the proxy threads', tests'. */
export const PROCESS_SLOTS = 16;

/** Bumped by the slot's service after every write of its WAKE_AT and SPIN_MS: the helper fires at most once per arm. */
export function armSeqIndex(slot: number): number {
  return (HEADER_BYTES + slot * SLOT_BYTES) / 4;
}
/** Bumped by the helper when the slot's armed time has come; the service awaits it with Atomics.waitAsync. */
export function wakeSeqIndex(slot: number): number {
  return (HEADER_BYTES + slot * SLOT_BYTES) / 4 + 1;
}
/** The slot's armed wake time (monotonicMs), +Infinity for none. */
export function wakeAtIndex(slot: number): number {
  return (HEADER_BYTES + slot * SLOT_BYTES) / 8 + 1;
}
/** How long before the slot's wake time the helper stops sleeping and spins (ms). */
export function spinIndex(slot: number): number {
  return (HEADER_BYTES + slot * SLOT_BYTES) / 8 + 2;
}
/** 1 while a service owns the slot, 0 while it is free. */
export function takenIndex(slot: number): number {
  return (HEADER_BYTES + slot * SLOT_BYTES) / 4 + 6;
}

/** The helpers' thread name (Linux, at most 15 bytes): what top -H, perf and the benchmarks find them by. */
export const HELPER_NAME = 'faultline-clock';

export interface BoardViews {
  ints: Int32Array;
  times: Float64Array;
  /** How many slots the board has. */
  slots: number;
}

/** A board of `slots` slots, nothing armed. */
export function newBoard(slots: number): SharedArrayBuffer {
  const buffer = new SharedArrayBuffer(HEADER_BYTES + slots * SLOT_BYTES);
  const { times } = boardViews(buffer);
  for (let slot = 0; slot < slots; slot++) times[wakeAtIndex(slot)] = Number.POSITIVE_INFINITY;
  return buffer;
}

export function boardViews(buffer: SharedArrayBuffer): BoardViews {
  return {
    ints: new Int32Array(buffer),
    times: new Float64Array(buffer),
    slots: (buffer.byteLength - HEADER_BYTES) / SLOT_BYTES,
  };
}

/** Claims a free slot of the board, the lowest; undefined when every slot is taken. */
export function claimSlot(ints: Int32Array, slots: number): number | undefined {
  for (let slot = 0; slot < slots; slot++) {
    if (Atomics.compareExchange(ints, takenIndex(slot), 0, 1) !== 0) continue;
    // Raised before the slot's first arm rings the doorbell: the helper then reads this far.
    for (let used = Atomics.load(ints, CLAIMED); used <= slot; used = Atomics.load(ints, CLAIMED))
      Atomics.compareExchange(ints, CLAIMED, used, slot + 1);
    return slot;
  }
  return undefined;
}

/**
 * Gives a slot back, its arm withdrawn, for another service to claim. Its wake sequence is bumped (and its waiter,
 * if any, told): a fire the helper decided on for this owner's arm fails (wakeSlot), never reaching the next owner.
 */
export function releaseSlot(board: SharedArrayBuffer, slot: number): void {
  const { ints, times } = boardViews(board);
  times[wakeAtIndex(slot)] = Number.POSITIVE_INFINITY;
  Atomics.add(ints, wakeSeqIndex(slot), 1);
  Atomics.notify(ints, wakeSeqIndex(slot));
  Atomics.store(ints, takenIndex(slot), 0);
}

/**
 * The helper's fire of a slot whose wake sequence it read as `seen` before it read the arm: false, and nothing
 * woken, when the sequence has moved since (the slot was given back, and perhaps claimed again).
 */
export function wakeSlot(ints: Int32Array, slot: number, seen: number): boolean {
  if (Atomics.compareExchange(ints, wakeSeqIndex(slot), seen, seen + 1) !== seen) return false;
  Atomics.notify(ints, wakeSeqIndex(slot));
  return true;
}
