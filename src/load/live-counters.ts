/**
 * What an open-loop run has done so far, for progress reports: written by the generator as it
 * runs, read by whoever reports. The generator normally runs on a thread of its own
 * (generator-thread.ts), so the figures live in shared memory: the generator's thread writes
 * them, the caller's thread reads them whenever it likes, with no message in between.
 */
export class LiveCounters {
  /** [dispatched, settled, openConnections, errors]; 32-bit is enough (a run has at most 5 million requests). */
  readonly shared: Int32Array;

  /** New counters at zero, or a view of counters another thread created (their `shared.buffer`). */
  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT)) {
    this.shared = new Int32Array(buffer);
  }

  /** Requests that left the scheduler (sent, or queued for a connection). */
  get dispatched(): number {
    return Atomics.load(this.shared, 0);
  }
  set dispatched(value: number) {
    Atomics.store(this.shared, 0, value);
  }

  /** Requests that ended (response, failure or timeout). */
  get settled(): number {
    return Atomics.load(this.shared, 1);
  }
  set settled(value: number) {
    Atomics.store(this.shared, 1, value);
  }

  /** Connections the run has opened so far. */
  get openConnections(): number {
    return Atomics.load(this.shared, 2);
  }
  set openConnections(value: number) {
    Atomics.store(this.shared, 2, value);
  }

  /** Of the settled requests, those that failed (any error class): live, as `settled` is. */
  get errors(): number {
    return Atomics.load(this.shared, 3);
  }
  set errors(value: number) {
    Atomics.store(this.shared, 3, value);
  }
}
