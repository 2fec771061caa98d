/**
 * The helper thread of the wake-up services (see wake-ups.ts): sleeps until the earliest wake time
 * any service armed on its board (shared.ts), then bumps that service's wake sequence, which the
 * service waits on (Atomics.waitAsync). It does nothing else, so it is on time whenever the system
 * schedules it: Atomics.wait sleeps with µs resolution (Node's timers tick in whole milliseconds),
 * and the last few tens of µs, as the service asks, are spun, because a sleeping thread wakes up to
 * the kernel's timer slack (50 µs by default) late. Services whose times come within one spin are
 * woken by one wake-up.
 *
 * What it costs is its wake-ups (each 20–60 µs of CPU on a 2-core VM, even a bare nanosleep's), so
 * it wakes once per wake it fires where it can: it publishes when its sleep ends by itself
 * (SLEEP_UNTIL), and a service notifies only for an arm earlier than that. Having fired a slot, it
 * sleeps at most until the time the same gap on would come for it (an even schedule's next wake,
 * the pacer's), so the arm that follows, made while it sleeps, is read when it wakes and not by a
 * second wake-up.
 *
 * A service writes the wake time and the spin, bumps its slot's arm sequence, then the doorbell this
 * thread waits on; this thread fires at most once per arm. A read that straddles an arm fires once
 * more than needed, never once less. It reads a slot's wake sequence before its arm and fires by
 * compare-and-swap from that value (shared.ts wakeSlot): a slot given back meanwhile (its sequence
 * bumped) is not fired but read again, so a new owner never gets the old owner's wake. Free slots
 * are skipped. The loop never returns to this thread's event loop; terminating the thread
 * interrupts Atomics.wait.
 */
import { writeFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { monotonicMs } from './monotonic.js';
import {
  armSeqIndex,
  boardViews,
  CLAIMED,
  DOORBELL,
  HELPER_NAME,
  READY,
  SLEEP_SEQ,
  SLEEP_UNTIL,
  spinIndex,
  takenIndex,
  wakeAtIndex,
  wakeSeqIndex,
  wakeSlot,
} from './shared.js';

const { ints, times, slots } = boardViews(workerData as SharedArrayBuffer);
/** Per slot: the arm last fired; the wake time last fired, and the one a gap as long as the last would come at. */
const firedFor: Array<number | undefined> = new Array<number | undefined>(slots).fill(undefined);
const firedAt: number[] = new Array<number>(slots).fill(Number.NaN);
const guessAt: number[] = new Array<number>(slots).fill(Number.POSITIVE_INFINITY);
/** Per slot, as read this turn: its wake sequence (read first), its arm sequence, and whether that arm is to fire. */
const wakeSeen: number[] = new Array<number>(slots).fill(0);
const armed: number[] = new Array<number>(slots).fill(0);
const pending: boolean[] = new Array<boolean>(slots).fill(false);
try {
  writeFileSync('/proc/thread-self/comm', HELPER_NAME);
} catch {
  // Not Linux: the thread keeps its name.
}
Atomics.store(ints, READY, 1);

/** Sleeps until `until` (+Infinity: until notified) or a doorbell other than `bell`, whichever first. */
function sleep(bell: number, until: number, now: number): void {
  times[SLEEP_UNTIL] = until;
  // A full fence between publishing the end of the sleep and reading the doorbell: a service that
  // armed after this read sees SLEEP_UNTIL and notifies if its time is earlier (wake-ups.ts arm).
  Atomics.add(ints, SLEEP_SEQ, 1);
  if (until === Number.POSITIVE_INFINITY) Atomics.wait(ints, DOORBELL, bell);
  else Atomics.wait(ints, DOORBELL, bell, until - now);
  times[SLEEP_UNTIL] = now; // awake: this thread reads the arms again before it sleeps
}

/** Wakes every slot whose arm is due by `now`, but one given back since it was read (the next turn reads it again). */
function fire(used: number, now: number): void {
  for (let slot = 0; slot < used; slot++) {
    const at = times[wakeAtIndex(slot)]!;
    if (!pending[slot] || at > now) continue;
    if (!wakeSlot(ints, slot, wakeSeen[slot]!)) continue;
    firedFor[slot] = armed[slot];
    let guess = at + (at - firedAt[slot]!); // NaN (never) until two have fired
    if (!(guess < Number.POSITIVE_INFINITY)) guess = Number.POSITIVE_INFINITY;
    guessAt[slot] = guess;
    firedAt[slot] = at;
  }
}

for (;;) {
  const bell = Atomics.load(ints, DOORBELL);
  const used = Math.min(Atomics.load(ints, CLAIMED), slots);
  let now = monotonicMs();
  // The earliest due arm (by when its spin starts), and the earliest time a fired slot's next arm may be read.
  let due = -1;
  let dueStart = Number.POSITIVE_INFINITY;
  let wakeFor = Number.POSITIVE_INFINITY;
  for (let slot = 0; slot < used; slot++) {
    if (Atomics.load(ints, takenIndex(slot)) === 0) {
      // Free: nothing to fire, and the next owner's schedule is not this one's.
      pending[slot] = false;
      firedAt[slot] = Number.NaN;
      guessAt[slot] = Number.POSITIVE_INFINITY;
      continue;
    }
    wakeSeen[slot] = Atomics.load(ints, wakeSeqIndex(slot)); // before the arm: a slot given back fails its fire
    armed[slot] = Atomics.load(ints, armSeqIndex(slot)); // before the time: an arm in between fires once more
    const at = times[wakeAtIndex(slot)]!;
    const spin = times[spinIndex(slot)]!;
    pending[slot] = at < Number.POSITIVE_INFINITY && armed[slot] !== firedFor[slot];
    if (pending[slot]) {
      if (at - spin < dueStart) {
        dueStart = at - spin;
        due = slot;
      }
    } else if (guessAt[slot]! - spin > now && guessAt[slot]! - spin < wakeFor) {
      // Nothing armed, or this arm has fired: sleep at most until the next wake of an even
      // schedule, after which a later arm still needs no notify.
      wakeFor = guessAt[slot]! - spin;
    }
  }
  if (due < 0 || dueStart > now) {
    // Woken before the time by a new arm: read them again (one may be earlier).
    sleep(bell, Math.min(dueStart, wakeFor), now);
    continue;
  }
  const dueAt = times[wakeAtIndex(due)]!;
  while ((now = monotonicMs()) < dueAt && Atomics.load(ints, DOORBELL) === bell);
  if (now < dueAt) continue;
  fire(used, now);
}
