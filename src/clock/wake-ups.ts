/**
 * The one wake-up service: calls a callback at or soon after a due time on the monotonic clock, to
 * within about a tenth of a millisecond instead of a timer's one or two. The open-loop generator
 * paces its requests with it (load/open-loop.ts) and the proxy's links time their delayed writes
 * with it (proxy/link.ts).
 *
 * Why not setTimeout: Node's timers count whole milliseconds against a loop clock truncated to the
 * millisecond, so a timer fires from about 1 ms early to 1–2 ms late of the moment asked for.
 * Spinning on the caller's own event loop would be exact but burns a core the target (or the
 * proxy's other connections) needs.
 *
 *   at(due, fn) ─▶ heap by (due, order asked) ─▶ earliest, shared memory ─▶ helper: Atomics.wait, spin
 *   fn() ◀──── every entry due, in due order ◀──── Atomics.waitAsync on the wake sequence ◀── bump
 *
 * One helper thread per thread that uses the service (wake-thread.ts), doing nothing else, sleeps
 * with Atomics.wait (µs resolution, no CPU) until the earliest due time and bumps a counter this
 * thread awaits with Atomics.waitAsync, which wakes its event loop at once. Measured at 1,000
 * req/s under load: a median send lag of 0.04 ms where setTimeout gave 0.6–0.7 ms. Its cost is its
 * thread's wake-ups (20–60 µs of CPU each on a 2-core VM, a bare C nanosleep's too; the spin is a
 * small part), so it wakes as seldom as the precision allows:
 *
 * - it fires at most once per MIN_WAKE_GAP_MS: entries due closer together go out together;
 * - it spins only the last SPIN_SHARE of the gap before a wake (at most SPIN_MAX_MS), to beat the
 *   kernel's timer slack: at most a twentieth of a core;
 * - it is notified of an arm only when the arm is earlier than its sleep's end (SLEEP_UNTIL), and,
 *   having fired, it sleeps until a gap like the last has passed: on an even schedule (the pacer's)
 *   the next arm is read when it wakes for it, one wake-up per wake where it took two; and
 * - the arms of one wake's callbacks (a tick's next request, links' next pieces) are made once, after them.
 *
 * Beside it, a ref'd timer is the backstop: it keeps the event loop alive while an entry is pending
 * (neither the unref'd helper nor a pending waitAsync does) and runs the due entries should the
 * helper be starved, not started yet, or gone, so a wake-up is never lost, only coarser. Entries due
 * together are called in due order, ties in the order asked (a link's pieces, a run's requests);
 * an entry is never called before its due time on this service's clock, and one added by a
 * callback waits for the next wake. Callers on another clock (performance.now()) check theirs.
 */
import { Worker } from 'node:worker_threads';
import { monotonicMs } from './monotonic.js';
import { ARM_SEQ, READY, SHARED_BYTES, SLEEP_UNTIL, SPIN_MS, sharedViews, WAKE_AT, WAKE_SEQ } from './shared.js';

/**
 * The service fires at most this often, counted from the time armed; entries due closer together go out together.
 * 0.25 counted from when the owner got to a wake spaced wakes 0.35–0.4 ms on a loaded machine: this keeps that
 * count of wake-ups (the cost) and makes their spacing even, so the helper's guess of the next one holds.
 */
export const MIN_WAKE_GAP_MS = 0.35;
/** The helper spins at most this long before a wake time… */
const SPIN_MAX_MS = 0.05;
/** …and at most this share of the time since the last wake. */
const SPIN_SHARE = 0.05;
/** With the helper running, the backstop timer fires this long after a wake time it missed. */
const BACKSTOP_MS = 2;

const DEFERRED = -2;

/** A scheduled wake-up: pass it to `cancel`. */
export interface Wake {
  /** The due time, on the service's clock (ms). */
  readonly dueMs: number;
}

interface Entry extends Wake {
  readonly callback: () => void;
  /** The order it was asked in: breaks ties of due time. */
  readonly order: number;
  /** Position in the heap; -1 once called or cancelled, DEFERRED while held back from the wake under way. */
  index: number;
}

/** The backstop's timer, replaceable so a test can drive the service by hand. */
export interface BackstopTimer {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

export interface WakeUpOptions {
  /** The clock due times are on (ms). Default monotonicMs; any other runs without a helper thread. */
  now?: () => number;
  /** Start a helper thread (default true); without one the backstop timer alone paces. */
  thread?: boolean;
  timer?: BackstopTimer;
}

const systemTimer: BackstopTimer = {
  set: (callback, delayMs) => setTimeout(callback, delayMs),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

export class WakeUps {
  private readonly heap: Entry[] = [];
  private asked = 0;
  private readonly now: () => number;
  private readonly timer: BackstopTimer;
  private readonly shared = new SharedArrayBuffer(SHARED_BYTES);
  private readonly ints: Int32Array;
  private readonly times: Float64Array;
  private thread: Worker | undefined;
  /** No helper is to be (had): not asked for, or it could not start, or exited. */
  private threadless: boolean;
  /** A waitAsync on the wake sequence is pending. */
  private waiting = false;
  private backstop: unknown;
  /** The wake time armed now, or +Infinity; NaN forces the next arm to publish. */
  private armedAtMs = Number.POSITIVE_INFINITY;
  /** The time of the last wake: armed for, or when it came if it came earlier. */
  private lastWakeMs = Number.NEGATIVE_INFINITY;
  /** Callbacks of a wake are running: their entries are armed for once, when they are done. */
  private firing = false;
  /** Wakes, for tests and benchmarks: by the helper thread, and by the backstop timer. */
  readonly wakes = { thread: 0, timer: 0 };

  constructor(options: WakeUpOptions = {}) {
    this.now = options.now ?? monotonicMs;
    this.timer = options.timer ?? systemTimer;
    ({ ints: this.ints, times: this.times } = sharedViews(this.shared));
    this.times[WAKE_AT] = Number.POSITIVE_INFINITY;
    // The helper reads monotonicMs: another clock cannot be shared with it.
    this.threadless = options.thread === false || options.now !== undefined || waitAsync === undefined;
  }

  /** Whether the helper thread paces (else the backstop timer alone does: while it starts, or when it cannot). */
  get precise(): boolean {
    return this.thread !== undefined && Atomics.load(this.ints, READY) === 1;
  }

  /** How many entries are pending. */
  get pending(): number {
    return this.heap.length;
  }

  /** Starts the helper thread ahead of the first wake-up (it takes tens of milliseconds to start). */
  prepare(): void {
    this.startThread();
  }

  /** Calls `callback` once, at or soon after `dueMs` on this service's clock. */
  at(dueMs: number, callback: () => void): Wake {
    const entry: Entry = { dueMs, callback, order: this.asked++, index: -1 };
    this.push(entry);
    if (entry.index === 0) this.arm();
    return entry;
  }

  /** Calls `callback` once, no earlier than `waitMs` from now. */
  after(waitMs: number, callback: () => void): Wake {
    return this.at(this.now() + Math.max(0, waitMs), callback);
  }

  /** Cancels a wake-up not yet called; does nothing for one that has been (or twice). */
  cancel(wake: Wake | undefined): void {
    const entry = wake as Entry | undefined;
    if (entry === undefined || entry.index === -1) return;
    if (entry.index === DEFERRED) {
      entry.index = -1; // not put back after the wake under way
      return;
    }
    const wasFirst = entry.index === 0;
    this.remove(entry);
    if (wasFirst) this.arm();
  }

  /** Calls every entry due by now, in due order; entries their callbacks add wait for the next wake. */
  private fire(): void {
    const now = this.now();
    const asked = this.asked;
    // Gaps count from the time armed, not from when this thread got to it: an even schedule's wakes stay
    // evenly spaced (the helper foresees the next), and MIN_WAKE_GAP_MS apart on average all the same.
    this.lastWakeMs = this.armedAtMs < now ? this.armedAtMs : now;
    this.armedAtMs = Number.NaN; // whatever was armed has fired (or is moot): arm afresh below
    const later: Entry[] = [];
    this.firing = true;
    try {
      for (let head = this.heap[0]; head !== undefined && head.dueMs <= now; head = this.heap[0]) {
        this.remove(head);
        // Added by a callback of this wake and due already: the next wake calls it.
        if (head.order < asked) head.callback();
        else {
          head.index = DEFERRED;
          later.push(head);
        }
      }
    } finally {
      // A callback that throws leaves the rest pending, armed for.
      for (const entry of later) if (entry.index === DEFERRED) this.push(entry);
      this.firing = false;
      this.arm();
    }
  }

  private readonly onThread = (): void => {
    this.waiting = false;
    this.wakes.thread++;
    this.fire();
  };

  private readonly onTimer = (): void => {
    this.backstop = undefined;
    this.wakes.timer++;
    this.fire();
  };

  /** Arms the helper and the backstop timer for the earliest entry (or disarms both). */
  private arm(): void {
    if (this.firing) return;
    const head = this.heap[0];
    const wakeAt =
      head === undefined ? Number.POSITIVE_INFINITY : Math.max(head.dueMs, this.lastWakeMs + MIN_WAKE_GAP_MS);
    if (wakeAt === this.armedAtMs) return;
    this.armedAtMs = wakeAt;
    if (wakeAt !== Number.POSITIVE_INFINITY) this.startThread();
    if (this.thread !== undefined) {
      // Read before arming, so a wake that comes between the two is not waited for again.
      const seen = Atomics.load(this.ints, WAKE_SEQ);
      this.times[WAKE_AT] = wakeAt;
      this.times[SPIN_MS] = Math.min(SPIN_MAX_MS, SPIN_SHARE * (wakeAt - this.lastWakeMs));
      Atomics.add(this.ints, ARM_SEQ, 1); // a full fence before reading SLEEP_UNTIL (wake-thread.ts sleep)
      // The helper reads the arm when its sleep ends: a wake-up (tens of µs of CPU) only for an earlier time.
      if (!(wakeAt - this.times[SPIN_MS]! >= this.times[SLEEP_UNTIL]!)) Atomics.notify(this.ints, ARM_SEQ);
      if (wakeAt !== Number.POSITIVE_INFINITY && !this.waiting) this.waitForThread(seen);
    }
    if (this.backstop !== undefined) this.timer.clear(this.backstop);
    this.backstop = undefined;
    if (wakeAt === Number.POSITIVE_INFINITY) return;
    // Whole milliseconds from a truncated loop clock: a ceiling plus one is never before the wake time.
    const delayMs = Math.ceil(wakeAt - this.now()) + (this.precise ? BACKSTOP_MS : 1);
    this.backstop = this.timer.set(this.onTimer, Math.max(0, delayMs));
  }

  private waitForThread(seen: number): void {
    const result = waitAsync!(this.ints, WAKE_SEQ, seen);
    if (!result.async) {
      queueMicrotask(this.onThread);
      return;
    }
    this.waiting = true;
    void (result.value as Promise<string>).then(this.onThread);
  }

  private startThread(): void {
    if (this.thread !== undefined || this.threadless) return;
    try {
      const thread = new Worker(new URL('./wake-thread.js', import.meta.url), { workerData: this.shared });
      // The thread never keeps the process alive; pending wake-ups do, through the backstop.
      thread.unref();
      const gone = (): void => {
        if (this.thread !== thread) return;
        this.thread = undefined;
        this.threadless = true;
        this.armedAtMs = Number.NaN; // arm again, on the timer alone
        this.arm();
      };
      thread.on('error', gone);
      thread.on('exit', gone);
      this.thread = thread;
    } catch {
      // No thread to be had (resource limits): the timer paces.
      this.threadless = true;
    }
  }

  private before(a: Entry, b: Entry): boolean {
    return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.order < b.order);
  }

  private push(entry: Entry): void {
    entry.index = this.heap.length;
    this.heap.push(entry);
    this.siftUp(entry.index);
  }

  private remove(entry: Entry): void {
    const last = this.heap.pop()!;
    const at = entry.index;
    entry.index = -1;
    if (last === entry) return;
    this.heap[at] = last;
    last.index = at;
    this.siftUp(at);
    this.siftDown(last.index);
  }

  private siftUp(at: number): void {
    const entry = this.heap[at]!;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = this.heap[parentAt]!;
      if (!this.before(entry, parent)) break;
      this.heap[at] = parent;
      parent.index = at;
      at = parentAt;
    }
    this.heap[at] = entry;
    entry.index = at;
  }

  private siftDown(at: number): void {
    const entry = this.heap[at]!;
    for (;;) {
      let childAt = 2 * at + 1;
      if (childAt >= this.heap.length) break;
      if (childAt + 1 < this.heap.length && this.before(this.heap[childAt + 1]!, this.heap[childAt]!)) childAt++;
      const child = this.heap[childAt]!;
      if (!this.before(child, entry)) break;
      this.heap[at] = child;
      child.index = at;
      at = childAt;
    }
    this.heap[at] = entry;
    entry.index = at;
  }
}

let service: WakeUps | undefined;

/** This thread's wake-up service (each thread has its own heap and helper), made by its first use. */
export function threadWakeUps(): WakeUps {
  return (service ??= new WakeUps());
}
