/**
 * Starting a board's helper thread (wake-thread.ts) and keeping one running. A helper exits only if
 * it crashes (or is terminated); the services on its board then pace on their backstop timers, to
 * the 1–2 ms a timer gives. So a helper that exited after it ran is replaced, on the same board:
 * the new one reads every slot's arm as it starts, so the services waiting on the old one (their
 * arms, their Atomics.waitAsync) are woken by it with nothing to redo. One that exits before it ran
 * (it would again: no thread to be had, a broken start) is not, and nor is any after
 * HELPER_RESTARTS replacements; then the board is marked GONE and every service told, and they pace
 * on their timers from then on.
 */
import { Worker } from 'node:worker_threads';
import { boardViews, GONE, READY, wakeSeqIndex } from './shared.js';

/** How many times a board's helper that exited after it ran is replaced. */
export const HELPER_RESTARTS = 3;

/** What the keeper needs of a helper thread (a Worker; a test's stand-in). */
export interface HelperThread {
  on(event: 'exit' | 'error', listener: () => void): unknown;
  terminate(): unknown;
}

/** A board's helper, kept running. */
export interface KeptHelper {
  /** The helper running now, until the board is GONE. */
  readonly current: HelperThread | undefined;
  /** How many helpers have been started. */
  readonly started: number;
  /** Ends the helper and starts no other (the board's own service is closed). */
  stop(): void;
}

/** Starts a helper thread for `board`, unref'd; undefined when no thread can be had. */
export function startHelper(board: SharedArrayBuffer): Worker | undefined {
  try {
    // No option of the process's: it needs none, and some fail a worker started from a file (--input-type, from
    // `node --input-type=module -e`), or cost every thread (an --import preload).
    const thread = new Worker(new URL('./wake-thread.js', import.meta.url), { workerData: board, execArgv: [] });
    // The thread never keeps the process alive; pending wake-ups do, through the backstop.
    thread.unref();
    return thread;
  } catch {
    return undefined;
  }
}

/** Starts `board`'s helper and replaces it when it exits (see above); `start` is replaceable for tests. */
export function keepHelper(
  board: SharedArrayBuffer,
  start: (board: SharedArrayBuffer) => HelperThread | undefined = startHelper,
): KeptHelper {
  const { ints, slots } = boardViews(board);
  let current: HelperThread | undefined;
  let started = 0;
  let stopped = false;
  const giveUp = (): void => {
    current = undefined;
    if (Atomics.exchange(ints, GONE, 1) === 1) return;
    // Wake every service waiting on it: each finds GONE set as it arms again, and paces on its timer.
    for (let slot = 0; slot < slots; slot++) {
      Atomics.add(ints, wakeSeqIndex(slot), 1);
      Atomics.notify(ints, wakeSeqIndex(slot));
    }
  };
  const launch = (): void => {
    // Set again by the helper once it runs: until then, the services' backstops are their timers' finest.
    Atomics.store(ints, READY, 0);
    const helper = start(board);
    if (helper === undefined) return giveUp();
    started++;
    current = helper;
    let ended = false;
    const exited = (): void => {
      if (ended || stopped) return;
      ended = true;
      const ran = Atomics.load(ints, READY) === 1;
      if (ran && started <= HELPER_RESTARTS) launch();
      else giveUp();
    };
    helper.on('error', exited);
    helper.on('exit', exited);
  };
  launch();
  return {
    get current() {
      return current;
    },
    get started() {
      return started;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      const helper = current;
      giveUp();
      void helper?.terminate();
    },
  };
}
