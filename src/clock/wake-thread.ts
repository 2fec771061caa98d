/**
 * The helper thread of a wake-up service (see wake-ups.ts): sleeps until the wake time its owner
 * armed in shared memory, then bumps the wake sequence the owner waits on (Atomics.waitAsync). It
 * does nothing else, so it is on time whenever the system schedules it: Atomics.wait sleeps with
 * µs resolution (Node's timers tick in whole milliseconds), and the last few tens of µs, as the
 * owner asks, are spun, because a sleeping thread wakes up to the kernel's timer slack (50 µs by
 * default) late.
 *
 * What it costs is its wake-ups (each 20–60 µs of CPU on a 2-core VM, even a bare nanosleep's), so
 * it wakes once per wake it fires where it can: it publishes when its sleep ends by itself
 * (SLEEP_UNTIL), and the owner notifies only for an arm earlier than that. Having fired, it sleeps
 * until the time the same gap on would come (an even schedule's next wake, the pacer's), so the
 * arm that follows, made while it sleeps, is read when it wakes and not by a second wake-up.
 *
 * The owner writes the wake time and the spin, then bumps the arm sequence; this thread fires at
 * most once per arm. A read that straddles an arm fires once more than needed, never once less.
 * The loop never returns to this thread's event loop; terminating the thread interrupts
 * Atomics.wait.
 */
import { writeFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { monotonicMs } from './monotonic.js';
import {
  ARM_SEQ,
  HELPER_NAME,
  READY,
  SLEEP_SEQ,
  SLEEP_UNTIL,
  SPIN_MS,
  sharedViews,
  WAKE_AT,
  WAKE_SEQ,
} from './shared.js';

const { ints, times } = sharedViews(workerData as SharedArrayBuffer);
let firedFor: number | undefined;
/** The wake time last fired, and the one a gap as long as the last would come at (+Infinity before two). */
let firedAt = Number.NaN;
let guessAt = Number.POSITIVE_INFINITY;
try {
  writeFileSync('/proc/thread-self/comm', HELPER_NAME);
} catch {
  // Not Linux: the thread keeps its name.
}
Atomics.store(ints, READY, 1);

/** Sleeps until `until` (+Infinity: until notified) or an arm other than `armed`, whichever first. */
function sleep(armed: number, until: number, now: number): void {
  times[SLEEP_UNTIL] = until;
  // A full fence between publishing the end of the sleep and reading the arm: an owner that armed
  // after this read sees SLEEP_UNTIL and notifies if its time is earlier (wake-ups.ts arm).
  Atomics.add(ints, SLEEP_SEQ, 1);
  if (until === Number.POSITIVE_INFINITY) Atomics.wait(ints, ARM_SEQ, armed);
  else Atomics.wait(ints, ARM_SEQ, armed, until - now);
  times[SLEEP_UNTIL] = now; // awake: this thread reads the arm again before it sleeps
}

for (;;) {
  const armed = Atomics.load(ints, ARM_SEQ);
  const wakeAt = times[WAKE_AT]!;
  const spinMs = times[SPIN_MS]!;
  let now = monotonicMs();
  if (!(wakeAt < Number.POSITIVE_INFINITY) || armed === firedFor) {
    // Nothing armed, or this arm has fired: sleep until the owner arms again, or until the next
    // wake of an even schedule, after which a later arm still needs no notify.
    const until = guessAt - spinMs;
    sleep(armed, until > now ? until : Number.POSITIVE_INFINITY, now);
    continue;
  }
  // Woken before the time by a new arm: read it again (it may be earlier).
  if (wakeAt - now > spinMs) {
    sleep(armed, wakeAt - spinMs, now);
    continue;
  }
  while ((now = monotonicMs()) < wakeAt && Atomics.load(ints, ARM_SEQ) === armed);
  if (now < wakeAt) continue;
  firedFor = armed;
  guessAt = wakeAt + (wakeAt - firedAt); // NaN (never) until two have fired
  if (!(guessAt < Number.POSITIVE_INFINITY)) guessAt = Number.POSITIVE_INFINITY;
  firedAt = wakeAt;
  Atomics.add(ints, WAKE_SEQ, 1);
  Atomics.notify(ints, WAKE_SEQ);
}
