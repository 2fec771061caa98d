/**
 * Wake-ups at sub-millisecond precision without a busy-wait, for the links' timed writes.
 *
 * Node's timers count whole milliseconds against a loop clock truncated to the millisecond, and
 * the loop sleeps whole milliseconds from a moment already past that clock's tick: a setTimeout
 * fires from about 1 ms early to 1 ms late of the moment asked for. Rounding up to be never early
 * adds about 1 ms to every delay; waiting out the last millisecond with setImmediate spins a core
 * at a thousand delayed chunks a second, which under CPU contention starves everything else and
 * lengthens the tail it was meant to shorten. Here one helper thread per thread that uses these
 * timers sleeps in Atomics.wait (microsecond resolution, no CPU while waiting) until the earliest
 * wake-up is due and then posts a message, which wakes the event loop.
 *
 *   after(ms, fn) ─▶ heap by due time ─▶ earliest due, shared memory ─▶ thread: Atomics.wait until due
 *   fn() ◀──── every due entry, in due order ◀──── 'message' ◀───────────────────────── postMessage
 *
 * Beside it, a whole-millisecond setTimeout rounded up past the earliest due time is the
 * backstop: it runs the due entries if the thread is late, not started yet, or gone, so a wake-up
 * is never lost, only coarser. A wake-up never comes before its due time on the monotonic clock;
 * callers on another clock should still check theirs (it may differ by microseconds).
 */
import { Worker } from 'node:worker_threads';
import { monotonicMs, SHARED_WAKE_BYTES, sharedWakeViews } from './wake-shared.js';

/** A scheduled wake-up; pass it to cancelWake. */
export interface Wake {
  readonly due: number;
}

interface Entry extends Wake {
  readonly callback: () => void;
  /** Position in the heap; -1 once fired or cancelled. */
  index: number;
}

class WakeTimers {
  private readonly heap: Entry[] = [];
  private readonly shared = new SharedArrayBuffer(SHARED_WAKE_BYTES);
  private readonly views = sharedWakeViews(this.shared);
  private thread: Worker | undefined;
  private threadGone = false;
  /** The due time last written to shared memory. */
  private published = Number.POSITIVE_INFINITY;
  private backstop: NodeJS.Timeout | undefined;
  private backstopDue = Number.POSITIVE_INFINITY;

  constructor() {
    this.views.due[0] = Number.POSITIVE_INFINITY;
  }

  /** Starts the helper thread ahead of the first wake-up (it takes tens of milliseconds to start). */
  prepare(): void {
    this.startThread();
  }

  after(waitMs: number, callback: () => void): Wake {
    const entry: Entry = { due: monotonicMs() + Math.max(0, waitMs), callback, index: -1 };
    this.push(entry);
    if (entry.index === 0) this.arm(false);
    return entry;
  }

  cancel(wake: Wake): void {
    const entry = wake as Entry;
    if (entry.index < 0) return;
    const wasFirst = entry.index === 0;
    this.remove(entry);
    if (wasFirst) this.arm(false);
  }

  /** Runs every entry due by now; entries they schedule wait for the next wake-up. */
  private readonly fire = (): void => {
    const now = monotonicMs();
    try {
      while (this.heap.length > 0 && this.heap[0]!.due <= now) {
        const entry = this.heap[0]!;
        this.remove(entry);
        entry.callback();
      }
    } finally {
      // Always publish after a message: the thread waits for the sequence to move on.
      this.arm(true);
    }
  };

  private readonly onBackstop = (): void => {
    this.backstop = undefined;
    this.backstopDue = Number.POSITIVE_INFINITY;
    this.fire();
  };

  /** Publishes the earliest due time to the thread and moves the backstop to it. */
  private arm(force: boolean): void {
    const due = this.heap[0]?.due ?? Number.POSITIVE_INFINITY;
    if (force || due !== this.published) {
      this.published = due;
      this.views.due[0] = due;
      Atomics.add(this.views.sequence, 0, 1);
      Atomics.notify(this.views.sequence, 0);
    }
    if (due !== Number.POSITIVE_INFINITY) this.startThread();
    if (due === this.backstopDue) return;
    if (this.backstop !== undefined) clearTimeout(this.backstop);
    this.backstop = undefined;
    this.backstopDue = due;
    // Whole milliseconds from a truncated loop clock: a ceiling plus one is never before `due`.
    if (due !== Number.POSITIVE_INFINITY)
      this.backstop = setTimeout(this.onBackstop, Math.ceil(due - monotonicMs()) + 1);
  }

  private startThread(): void {
    if (this.thread !== undefined || this.threadGone) return;
    try {
      const thread = new Worker(new URL('./wake-thread.js', import.meta.url), { workerData: this.shared });
      thread.on('message', this.fire);
      const gone = (): void => {
        this.threadGone = true;
        this.thread = undefined;
      };
      thread.on('error', gone);
      thread.on('exit', gone);
      // The thread never keeps the process alive; pending wake-ups do, through the backstop.
      // (After the listeners: adding a 'message' listener refs the thread's port again.)
      thread.unref();
      this.thread = thread;
    } catch {
      this.threadGone = true;
    }
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
      if (parent.due <= entry.due) break;
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
      if (childAt + 1 < this.heap.length && this.heap[childAt + 1]!.due < this.heap[childAt]!.due) childAt++;
      const child = this.heap[childAt]!;
      if (entry.due <= child.due) break;
      this.heap[at] = child;
      child.index = at;
      at = childAt;
    }
    this.heap[at] = entry;
    entry.index = at;
  }
}

const timers = new WakeTimers();

/** Calls `callback` once, no earlier than `waitMs` from now and usually within a fraction of a millisecond after. */
export function wakeAfter(waitMs: number, callback: () => void): Wake {
  return timers.after(waitMs, callback);
}

/** Starts the helper thread now, so that the first wake-ups do not wait for it (through the coarser backstop). */
export function prepareWakeUps(): void {
  timers.prepare();
}

/** Cancels a wake-up that has not fired; does nothing for one that has. */
export function cancelWake(wake: Wake): void {
  timers.cancel(wake);
}
