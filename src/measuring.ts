/**
 * Whether this process is measuring a run (an experiment's or a scenario's load): optional work
 * that competes for the CPU holds meanwhile, or it shows in the report as the target's latency.
 * The listing thread's warm-up (src/code/listing-thread.ts) running during a scenario's baseline
 * added ~80 ms to its p99 on 2 cores (bench scenario.proxy-tail). Knows nothing of scenarios or
 * tools; tiny, so any module may import it.
 */
let active = 0;
const listeners = new Set<(measuring: boolean) => void>();

/** Marks a measured run as started; call the returned function (once) when it ends. */
export function beginMeasuring(): () => void {
  active += 1;
  if (active === 1) for (const listener of listeners) listener(true);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    active -= 1;
    if (active === 0) for (const listener of listeners) listener(false);
  };
}

/** How many measured runs are under way (begun, not ended). */
export function measuredRuns(): number {
  return active;
}

/** Calls `listener` when measuring starts (at once if it has) and when the last measured run ends. */
export function onMeasuring(listener: (measuring: boolean) => void): () => void {
  listeners.add(listener);
  if (active > 0) listener(true);
  return () => listeners.delete(listener);
}
