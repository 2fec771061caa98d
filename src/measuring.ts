/**
 * Whether this process is measuring: a scenario's load and its in-process fault proxy share the
 * main thread, so any other work there (a tool's warm-up in idle time) shows in the report as the
 * target's latency. Optional work waits for `whenNotMeasuring()` before each of its steps.
 * Knows nothing of scenarios or tools; tiny, so a command may import it statically.
 */
let active = 0;
let waiters: Array<() => void> = [];

/** Marks a measured run as started; call the returned function (once) when it ends. */
export function beginMeasuring(): () => void {
  active += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    active -= 1;
    if (active > 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };
}

/** Resolves at once when nothing is being measured, else when the last measured run ends. */
export function whenNotMeasuring(): Promise<void> {
  return active === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
}
