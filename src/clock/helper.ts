/**
 * Starting a board's helper thread (wake-thread.ts). A helper exits only if it crashes (or is
 * terminated); then the board is marked GONE and every service told, and they pace on their
 * backstop timers from then on.
 */
import { Worker } from 'node:worker_threads';
import { boardViews, GONE, wakeSeqIndex } from './shared.js';

/** What the keeper needs of a helper thread (a Worker; a test's stand-in). */
export interface HelperThread {
  on(event: 'exit' | 'error', listener: () => void): unknown;
  terminate(): unknown;
}

/** A board's helper. */
export interface KeptHelper {
  /** The helper running, until the board is GONE. */
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

/** Starts `board`'s helper, and marks the board GONE when it exits; `start` is replaceable for tests. */
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
    const helper = start(board);
    if (helper === undefined) return giveUp();
    started++;
    current = helper;
    let ended = false;
    const exited = (): void => {
      if (ended || stopped) return;
      ended = true;
      giveUp();
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
