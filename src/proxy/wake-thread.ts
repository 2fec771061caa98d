/**
 * The wake-up thread's side (see wake-timers.ts): sleeps until the earliest wake-up published in
 * shared memory is due, then tells the owning thread with a message, and sleeps again until that
 * thread publishes the next one. Atomics.wait's timeout has microsecond resolution and costs no
 * CPU while it waits; a new publication (the sequence number changes) ends the wait early.
 *
 * The loop never returns to this thread's event loop: postMessage sends without it, and
 * terminating the thread interrupts Atomics.wait.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { monotonicMs, sharedWakeViews } from './wake-shared.js';

const { due, sequence } = sharedWakeViews(workerData as SharedArrayBuffer);
const port = parentPort!;

for (;;) {
  const seen = Atomics.load(sequence, 0);
  const wait = due[0]! - monotonicMs();
  if (wait > 0) {
    Atomics.wait(sequence, 0, seen, wait === Number.POSITIVE_INFINITY ? undefined : wait);
  } else {
    port.postMessage(seen);
    // The owning thread always publishes again after a message, so this wait ends.
    Atomics.wait(sequence, 0, seen);
  }
}
