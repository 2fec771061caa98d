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
 * One helper thread per process (wake-thread.ts), doing nothing else, sleeps with Atomics.wait (µs
 * resolution, no CPU) until the earliest time any thread's service armed (each has a slot of one
 * board, shared.ts) and bumps a counter that thread awaits with Atomics.waitAsync, which wakes its
 * event loop at once. The board comes from the main thread, which starts its helper and replaces
 * one that exits (helper.ts): the load generator's and the proxy host's threads are lent a slot of
 * it (lendClock, useSharedClock), given back when the thread exits; a thread not given one has a
 * board, and a helper, of its own. Measured at 1,000
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
 * helper be starved, not started yet, being replaced, or gone, so a wake-up is never lost, only
 * coarser. Entries due together are called in due order, ties in the order asked (a link's pieces,
 * a run's requests); an entry is never called before its due time on this service's clock, and
 * one added by a callback waits for the next wake. Callers on another clock (performance.now())
 * check theirs.
 */
import { isMainThread, type Worker } from 'node:worker_threads';
import { keepHelper, type HelperThread, type KeptHelper } from './helper.js';
import { monotonicMs } from './monotonic.js';
import {
  armSeqIndex,
  boardViews,
  claimSlot,
  DOORBELL,
  GONE,
  newBoard,
  PROCESS_SLOTS,
  READY,
  releaseSlot,
  SLEEP_SEQ,
  SLEEP_UNTIL,
  spinIndex,
  wakeAtIndex,
  wakeSeqIndex,
} from './shared.js';

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
  /**
   * A slot of this board (shared.ts), whose helper another thread starts (shareClock): the process's. Default:
   * a board of its own, with a helper this service starts.
   */
  board?: SharedArrayBuffer;
  /**
   * The slot of `board` lent to this thread (lendClock): the lender gives it back when the thread exits. Default:
   * the service claims one itself, and gives it back on close().
   */
  slot?: number;
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
  private readonly board: SharedArrayBuffer;
  /** The board is this service's own: it starts the helper (else the thread that shared the board did). */
  private readonly ownBoard: boolean;
  private readonly ints: Int32Array;
  private readonly times: Float64Array;
  /** This service's slot of the board. */
  private readonly slot: number;
  /** The slot was claimed by this service, not lent: close() gives it back. */
  private readonly claimed: boolean;
  /** The helper is asked for (started, on its own board; on a shared board, started by the board's thread). */
  private thread = false;
  /** The helper of its own board, kept running (helper.ts). */
  private helper: KeptHelper | undefined;
  private closed = false;
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
    const given = options.board && boardViews(options.board);
    const lent = options.slot;
    const slot =
      given && (lent === undefined ? claimSlot(given.ints, given.slots) : lent >= 0 && lent < given.slots ? lent : -1);
    // Every slot of the given board taken (a process with many such threads): a board of its own.
    this.ownBoard = slot === undefined || slot < 0;
    this.board = this.ownBoard ? newBoard(1) : options.board!;
    ({ ints: this.ints, times: this.times } = boardViews(this.board));
    this.slot = this.ownBoard ? claimSlot(this.ints, 1)! : slot!;
    this.claimed = this.ownBoard || lent === undefined;
    // The helper reads monotonicMs: another clock cannot be shared with it.
    this.threadless = options.thread === false || options.now !== undefined || waitAsync === undefined;
  }

  /** Whether the helper thread paces (else the backstop timer alone does: while it starts, or when it cannot). */
  get precise(): boolean {
    return this.thread && Atomics.load(this.ints, READY) === 1 && Atomics.load(this.ints, GONE) === 0;
  }

  /** How many entries are pending. */
  get pending(): number {
    return this.heap.length;
  }

  /** Starts the helper thread ahead of the first wake-up (it takes tens of milliseconds to start). */
  prepare(): void {
    this.startThread();
  }

  /**
   * Ends the service: pending entries are dropped (never called), its backstop cleared, its helper (of its own
   * board) ended, and a slot it claimed given back for another service (a lent one is the lender's to give back).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.heap) entry.index = -1;
    this.heap.length = 0;
    if (this.backstop !== undefined) this.timer.clear(this.backstop);
    this.backstop = undefined;
    this.helper?.stop();
    if (this.claimed && !this.ownBoard) releaseSlot(this.board, this.slot);
  }

  /** Calls `callback` once, at or soon after `dueMs` on this service's clock. */
  at(dueMs: number, callback: () => void): Wake {
    if (this.closed) throw new Error('the wake-up service is closed');
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
    if (this.closed) return;
    this.wakes.thread++;
    this.fire();
  };

  private readonly onTimer = (): void => {
    this.backstop = undefined;
    if (this.closed) return;
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
    if (this.thread && Atomics.load(this.ints, GONE) === 1) {
      // The board's helper has exited and is not replaced (helper.ts): from now on the timer alone paces.
      this.thread = false;
      this.threadless = true;
    }
    if (this.thread) {
      const slot = this.slot;
      // Read before arming, so a wake that comes between the two is not waited for again.
      const seen = Atomics.load(this.ints, wakeSeqIndex(slot));
      const spin = Math.min(SPIN_MAX_MS, SPIN_SHARE * (wakeAt - this.lastWakeMs));
      this.times[wakeAtIndex(slot)] = wakeAt;
      this.times[spinIndex(slot)] = spin;
      Atomics.add(this.ints, armSeqIndex(slot), 1);
      Atomics.add(this.ints, DOORBELL, 1);
      // Paired with the helper's bump of SLEEP_SEQ after it writes SLEEP_UNTIL (wake-thread.ts sleep): if the helper
      // read the doorbell before the bump above, this load reads its bump, so the plain read below sees that write.
      // The doorbell's add alone orders nothing for another location on a weakly ordered CPU (arm64).
      Atomics.load(this.ints, SLEEP_SEQ);
      // The helper reads the arm when its sleep ends: a wake-up (tens of µs of CPU) only for an earlier time.
      if (!(wakeAt - spin >= this.times[SLEEP_UNTIL]!)) Atomics.notify(this.ints, DOORBELL);
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
    const result = waitAsync!(this.ints, wakeSeqIndex(this.slot), seen);
    if (!result.async) {
      queueMicrotask(this.onThread);
      return;
    }
    this.waiting = true;
    void (result.value as Promise<string>).then(this.onThread);
  }

  private startThread(): void {
    if (this.thread || this.threadless) return;
    // On a shared board, the thread that shared it started its helper.
    if (this.ownBoard) this.helper = keepHelper(this.board);
    this.thread = Atomics.load(this.ints, GONE) === 0;
    this.threadless = !this.thread; // no thread to be had (resource limits): the timer paces
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

/** A slot of the process's board lent to a thread (lendClock), for its useSharedClock. */
export interface SharedClock {
  board: SharedArrayBuffer;
  slot: number;
}

let service: WakeUps | undefined;
/** The process's board (main thread only). */
let processBoard: SharedArrayBuffer | undefined;
/** The slot of the process's board lent to this thread (useSharedClock). */
let threadClock: SharedClock | undefined;
let processHelper: KeptHelper | undefined;

/**
 * The process's board, its helper started and kept running (helper.ts): the services of the threads this one starts
 * take slots of it (lendClock) rather than start a helper each. Main thread only (undefined elsewhere): the helper
 * lives as long as its starter, and the main thread outlives every other.
 */
export function shareClock(): SharedArrayBuffer | undefined {
  if (!isMainThread) return undefined;
  processBoard ??= newBoard(PROCESS_SLOTS);
  processHelper ??= keepHelper(processBoard);
  return processBoard;
}

/**
 * Starts a thread (`start`, given what to pass to its useSharedClock) with a slot of the process's board, and gives
 * the slot back when the thread exits, however it ends (closed, terminated, crashed): threads started again and
 * again reuse the board's few slots. With none free, or off the main thread, `start` is given undefined and the
 * thread's service has a board and a helper of its own.
 */
export function lendClock<T extends Worker>(start: (clock: SharedClock | undefined) => T): T {
  const board = shareClock();
  const slot = board && claimSlot(boardViews(board).ints, PROCESS_SLOTS);
  if (board === undefined || slot === undefined) return start(undefined);
  let thread: T;
  try {
    thread = start({ board, slot });
  } catch (error) {
    releaseSlot(board, slot);
    throw error;
  }
  thread.once('exit', () => releaseSlot(board, slot));
  return thread;
}

/** In a thread given a slot of the process's board (lendClock): this thread's service wakes on that slot. */
export function useSharedClock(clock: unknown): void {
  const given = clock as Partial<SharedClock> | null | undefined;
  if (service === undefined && given?.board instanceof SharedArrayBuffer && Number.isSafeInteger(given.slot))
    threadClock = { board: given.board, slot: given.slot! };
}

/** This thread's wake-up service (each thread has its own heap), made by its first use. */
export function threadWakeUps(): WakeUps {
  if (service === undefined) {
    const board = isMainThread ? shareClock() : undefined;
    service = new WakeUps(threadClock ?? (board !== undefined ? { board } : {}));
  }
  return service;
}

/** The process's helper thread running now (tests end it, as a crash would); undefined before shareClock. */
export function processClockHelper(): HelperThread | undefined {
  return processHelper?.current;
}
