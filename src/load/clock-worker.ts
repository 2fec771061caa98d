/**
 * The pacer's clock thread (see pacer.ts): sleeps until the wake time the pacer armed in shared
 * memory, then bumps the wake sequence the pacer's thread waits on (Atomics.waitAsync). It does
 * nothing else, so it is on time whenever the system schedules it: Atomics.wait sleeps with µs
 * resolution (Node's timers tick in whole milliseconds), and the last few tens of µs, as the
 * pacer asks, are spun, because a sleeping thread wakes up to the kernel's timer slack (50 µs by
 * default) late.
 *
 * Times are milliseconds of the monotonic clock process.hrtime reads, the same on every thread.
 * The pacer writes the wake time and the spin, then bumps the arm sequence; this thread fires at
 * most once per arm. A read that straddles an arm fires once more than needed, never once less.
 */
import { workerData } from 'node:worker_threads';
import { CLOCK_ARM_SEQ, CLOCK_READY, CLOCK_SPIN_MS, CLOCK_WAKE_AT, CLOCK_WAKE_SEQ, monotonicMs } from './pacer.js';

const ints = new Int32Array(workerData as SharedArrayBuffer);
const times = new Float64Array(workerData as SharedArrayBuffer);
let firedFor: number | undefined;
Atomics.store(ints, CLOCK_READY, 1);

for (;;) {
  const armed = Atomics.load(ints, CLOCK_ARM_SEQ);
  const wakeAt = times[CLOCK_WAKE_AT]!;
  if (wakeAt === 0 || armed === firedFor) {
    // Nothing armed, or this arm has fired: sleep until the pacer arms again.
    Atomics.wait(ints, CLOCK_ARM_SEQ, armed);
    continue;
  }
  const spinMs = times[CLOCK_SPIN_MS]!;
  let now = monotonicMs();
  // Woken before the time by a new arm: read it again (it may be earlier).
  if (wakeAt - now > spinMs && Atomics.wait(ints, CLOCK_ARM_SEQ, armed, wakeAt - now - spinMs) !== 'timed-out')
    continue;
  while ((now = monotonicMs()) < wakeAt && Atomics.load(ints, CLOCK_ARM_SEQ) === armed);
  if (now < wakeAt) continue;
  firedFor = armed;
  Atomics.add(ints, CLOCK_WAKE_SEQ, 1);
  Atomics.notify(ints, CLOCK_WAKE_SEQ);
}
