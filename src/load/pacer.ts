/**
 * Wakes this thread's open-loop runs when their next requests are due, to within about a tenth of
 * a millisecond instead of a timer's one or two.
 *
 * Why not setTimeout: Node's timers count in whole milliseconds from the event loop's cached
 * clock, so a timer for a request due in 0.4 ms fires 1–2 ms later, and one due in 1.0 ms may
 * fire early and need a second round. Measured at 1,000 req/s on this 2-core machine: a median
 * send lag (intended start to the write) of 0.6–0.7 ms, all of it the timer's. Spinning on the
 * generator's own event loop would be exact but would burn a core the target needs.
 *
 * So a clock thread (clock-worker.ts), doing nothing else, sleeps with Atomics.wait (µs
 * resolution) until the earliest wake time any run on this thread asked for, and bumps a counter
 * this thread awaits with Atomics.waitAsync, which wakes its event loop at once. Measured, same
 * machine, under load: a median lag of 0.04 ms at 1,000 req/s. Two bounds keep its cost small:
 *
 * - it fires at most once per MIN_WAKE_GAP_MS: at higher rates a wake sends the few requests
 *   due since the last one (each still timed from its own intended start), and
 * - it spins only the last SPIN_SHARE of the gap before a wake (at most SPIN_MAX_MS), to beat the
 *   kernel's timer slack: at most a twentieth of a core.
 *
 * A ref'd timer BACKSTOP_MS after each wake time keeps the event loop alive (a pending waitAsync
 * does not) and wakes the runs should the clock thread be starved or gone; without a clock thread
 * (it could not start, or exited) the timer alone paces, as before.
 */
import { Worker } from 'node:worker_threads';

/**
 * Shared memory layout, each index in its own element size: Int32 0–1 (bytes 0–7), Float64 1–2
 * (bytes 8–23), Int32 6 (bytes 24–27).
 */
export const CLOCK_ARM_SEQ = 0;
export const CLOCK_WAKE_SEQ = 1;
export const CLOCK_WAKE_AT = 1;
export const CLOCK_SPIN_MS = 2;
/** Set by the clock thread once it runs: until then the backstop timer paces alone. */
export const CLOCK_READY = 6;
const CLOCK_BYTES = 4 * Float64Array.BYTES_PER_ELEMENT;

/** The clock fires at most this often; requests due closer together go out together. */
export const MIN_WAKE_GAP_MS = 0.25;
/** The clock spins at most this long before a wake time… */
const SPIN_MAX_MS = 0.05;
/** …and at most this share of the time since the last wake. */
const SPIN_SHARE = 0.05;
/** The timer behind each wake fires this long after it, should the clock thread not have. */
const BACKSTOP_MS = 2;
/**
 * Wake times are armed this much after the time asked for, so that rounding between the two
 * clocks can never wake a run a hair before its request is due (it would find nothing to send).
 */
const WAKE_MARGIN_MS = 0.001;

/** Milliseconds of the monotonic clock: the same on every thread of the process. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export interface PacerWake {
  /** The callback will not be called (a no-op once it has been). */
  cancel(): void;
}

interface Entry {
  /** performance.now() time at which the callback is due. */
  atMs: number;
  callback: () => void;
  active: boolean;
}

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export class Pacer {
  private readonly entries: Entry[] = [];
  private readonly ints: Int32Array;
  private readonly times: Float64Array;
  /** monotonicMs() − performance.now(), read so that it is never below the true difference. */
  private readonly offsetMs: number;
  private clock: Worker | undefined;
  /** A waitAsync on the wake sequence is pending. */
  private waiting = false;
  private backstop: NodeJS.Timeout | undefined;
  /** The wake time armed now (performance.now() ms), or Infinity. */
  private armedAtMs = Infinity;
  private lastWakeMs = -Infinity;
  /** Wakes, for tests and benchmarks: by the clock thread, and by the backstop timer. */
  readonly wakes = { clock: 0, timer: 0 };

  constructor(options: { clockThread?: boolean } = {}) {
    const shared = new SharedArrayBuffer(CLOCK_BYTES);
    this.ints = new Int32Array(shared);
    this.times = new Float64Array(shared);
    const before = performance.now();
    this.offsetMs = monotonicMs() - before;
    if (waitAsync !== undefined && options.clockThread !== false) this.startClock(shared);
  }

  /** Whether a clock thread paces (else the timer alone does: while the thread starts, or when it could not). */
  get precise(): boolean {
    return this.clock !== undefined && Atomics.load(this.ints, CLOCK_READY) === 1;
  }

  /** Calls `callback` once, at or soon after `atMs` (performance.now() time). */
  wakeAt(atMs: number, callback: () => void): PacerWake {
    const entry: Entry = { atMs, callback, active: true };
    this.entries.push(entry);
    if (atMs < this.armedAtMs) this.arm();
    return {
      cancel: () => {
        if (!entry.active) return;
        entry.active = false;
        this.entries.splice(this.entries.indexOf(entry), 1);
        if (this.entries.length === 0) this.arm();
      },
    };
  }

  private startClock(shared: SharedArrayBuffer): void {
    try {
      const clock = new Worker(new URL('./clock-worker.js', import.meta.url), { workerData: shared });
      clock.unref();
      const gone = (): void => {
        if (this.clock !== clock) return;
        this.clock = undefined;
        this.rearm();
      };
      clock.on('error', gone);
      clock.on('exit', gone);
      this.clock = clock;
    } catch {
      // No thread to be had (resource limits): the timer paces.
    }
  }

  /** Arms the clock and the backstop timer for the earliest entry (or disarms both). */
  private arm(): void {
    let next = Infinity;
    for (const entry of this.entries) if (entry.atMs < next) next = entry.atMs;
    const wakeAt = next === Infinity ? Infinity : Math.max(next, this.lastWakeMs + MIN_WAKE_GAP_MS) + WAKE_MARGIN_MS;
    if (wakeAt === this.armedAtMs) return;
    this.armedAtMs = wakeAt;
    clearTimeout(this.backstop);
    this.backstop = undefined;
    if (this.clock !== undefined) {
      // Read before arming, so a wake that comes between the two is not waited for again.
      const seen = Atomics.load(this.ints, CLOCK_WAKE_SEQ);
      this.times[CLOCK_WAKE_AT] = wakeAt === Infinity ? 0 : wakeAt + this.offsetMs;
      this.times[CLOCK_SPIN_MS] = Math.min(SPIN_MAX_MS, SPIN_SHARE * (wakeAt - this.lastWakeMs));
      Atomics.add(this.ints, CLOCK_ARM_SEQ, 1);
      Atomics.notify(this.ints, CLOCK_ARM_SEQ);
      if (wakeAt !== Infinity && !this.waiting) this.waitForClock(seen);
    }
    if (wakeAt === Infinity) return;
    const delayMs = wakeAt - performance.now() + (this.precise ? BACKSTOP_MS : 0);
    this.backstop = setTimeout(this.onTimer, Math.max(0, delayMs));
  }

  /** The clock thread exited: arm again, on the timer alone. */
  private rearm(): void {
    this.armedAtMs = Number.NaN;
    this.arm();
  }

  private waitForClock(seen: number): void {
    const result = waitAsync(this.ints, CLOCK_WAKE_SEQ, seen);
    if (!result.async) {
      queueMicrotask(this.onClock);
      return;
    }
    this.waiting = true;
    void (result.value as Promise<string>).then(this.onClock);
  }

  private readonly onClock = (): void => {
    this.waiting = false;
    this.wakes.clock++;
    this.wake();
  };

  private readonly onTimer = (): void => {
    this.backstop = undefined;
    this.wakes.timer++;
    this.wake();
  };

  /** Calls every entry now due, then arms for the next. */
  private wake(): void {
    const now = performance.now();
    this.lastWakeMs = now;
    this.armedAtMs = Number.NaN; // whatever was armed has fired (or is moot): arm afresh below
    const due: Entry[] = [];
    for (let k = this.entries.length - 1; k >= 0; k--) {
      const entry = this.entries[k]!;
      if (entry.atMs > now) continue;
      entry.active = false;
      this.entries.splice(k, 1);
      due.push(entry);
    }
    // Several come due in one wake after a stall: call them in due order (ties: as asked).
    due.reverse().sort((a, b) => a.atMs - b.atMs);
    for (const entry of due) entry.callback();
    this.arm();
  }
}

let pacer: Pacer | undefined;

/** This thread's pacer, started by its first use. */
export function threadPacer(): Pacer {
  return (pacer ??= new Pacer());
}
