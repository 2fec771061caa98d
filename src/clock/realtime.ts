/**
 * A warning for a process run under real-time scheduling (`chrt -f`, SCHED_FIFO or SCHED_RR) without
 * `node --single-threaded-gc`: there it can spin for good, and no code of ours can prevent it.
 *
 * At one real-time priority a thread runs until it blocks. After a GC, V8's incremental sweeper re-posts itself
 * to the event loop until the sweeper's helper threads (the same priority) have swept their pages, so an idle loop
 * never blocks and those helpers never run: with one core, or as many such isolates (main thread, generator, proxy
 * thread) as cores, nothing moves again (measured: a 4 s `faultline run` pinned to one core hung 3 of 3 times; a
 * bare `new Worker` after some allocation hangs alike). The flag cannot be set once Node runs (V8 aborts at its
 * next GC), so the process says so, once, on stderr, as it loads its clock (index.ts): before it would hang.
 */
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const SCHED_FIFO = 1;
const SCHED_RR = 2;
/** V8 flags that keep the GC's work on the thread that needs it (either spelling). */
const SINGLE_THREADED_GC = /^--(single[-_]threaded|single[-_]threaded[-_]gc)$/;

/** The scheduling policy in a /proc/<pid>/stat line (field 41; the name before it may hold spaces and ")"). */
export function policyFromStat(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const policy = Number(fields[41 - 3]);
  return fields.length > 41 - 3 && Number.isInteger(policy) ? policy : undefined;
}

/** Whether a process with this stat line and these Node flags can spin for good (see above). */
export function realtimeGcHazard(stat: string, execArgv: readonly string[]): boolean {
  const policy = policyFromStat(stat);
  return (policy === SCHED_FIFO || policy === SCHED_RR) && !execArgv.some((arg) => SINGLE_THREADED_GC.test(arg));
}

let checked = false;

/**
 * Warns once per process (on stderr, as a Node warning) when it runs real-time without the flag: from the main
 * thread only (each thread has its own copy of this module).
 */
export function warnRealtimeGc(): void {
  if (checked || !isMainThread) return;
  checked = true;
  let stat: string;
  try {
    stat = readFileSync('/proc/thread-self/stat', 'utf8');
  } catch {
    return; // not Linux: no policy to read
  }
  // NODE_OPTIONS' flags are not in execArgv.
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (!realtimeGcHazard(stat, flags)) return;
  process.emitWarning(
    'this process runs under real-time scheduling (SCHED_FIFO/SCHED_RR) without node --single-threaded-gc: ' +
      "V8's GC helper threads can starve and the process spin for good; start node with --single-threaded-gc",
    { code: 'FAULTLINE_REALTIME_GC' },
  );
}
