/**
 * The helper thread of a wake-up service (see wake-ups.ts): sleeps until the wake time its owner
 * armed in shared memory, then bumps the wake sequence the owner waits on (Atomics.waitAsync). It
 * does nothing else, so it is on time whenever the system schedules it: Atomics.wait sleeps with
 * µs resolution (Node's timers tick in whole milliseconds), and the last few tens of µs, as the
 * owner asks, are spun, because a sleeping thread wakes up to the kernel's timer slack (50 µs by
 * default) late.
 *
 * The owner writes the wake time and the spin, then bumps the arm sequence; this thread fires at
 * most once per arm. A read that straddles an arm fires once more than needed, never once less.
 * The loop never returns to this thread's event loop; terminating the thread interrupts
 * Atomics.wait.
 */
import { workerData } from 'node:worker_threads';
import { monotonicMs } from './monotonic.js';
import { ARM_SEQ, READY, SPIN_MS, sharedViews, WAKE_AT, WAKE_SEQ } from './shared.js';

const { ints, times } = sharedViews(workerData as SharedArrayBuffer);
let firedFor: number | undefined;
Atomics.store(ints, READY, 1);

for (;;) {
  const armed = Atomics.load(ints, ARM_SEQ);
  const wakeAt = times[WAKE_AT]!;
  if (!(wakeAt < Number.POSITIVE_INFINITY) || armed === firedFor) {
    // Nothing armed, or this arm has fired: sleep until the owner arms again.
    Atomics.wait(ints, ARM_SEQ, armed);
    continue;
  }
  const spinMs = times[SPIN_MS]!;
  let now = monotonicMs();
  // Woken before the time by a new arm: read it again (it may be earlier).
  if (wakeAt - now > spinMs && Atomics.wait(ints, ARM_SEQ, armed, wakeAt - now - spinMs) !== 'timed-out') continue;
  while ((now = monotonicMs()) < wakeAt && Atomics.load(ints, ARM_SEQ) === armed);
  if (now < wakeAt) continue;
  firedFor = armed;
  Atomics.add(ints, WAKE_SEQ, 1);
  Atomics.notify(ints, WAKE_SEQ);
}
