/**
 * How busy another thread is, as seen from the generator thread: the caller's, or the thread a
 * scenario's fault proxy is hosted on (proxy-host/).
 *
 * The generator holds back on-demand connections while a thread the requests wait on is
 * saturated (open-loop.ts, `grow`): then a new connection does not help the target, it costs that
 * thread more. On its own thread the generator sees only its own event loop; but in a scenario
 * every request also crosses the fault proxy on another thread, and when that thread is behind,
 * responses come late and every connection looks busy. Measured at 10,000 req/s through
 * the in-process proxy with the generator on its own thread and no such gauge: the run grew to
 * its cap of 1,000 connections (three sockets each on the proxy's thread) and p99 went past a
 * second, where 50–150 carried the rate.
 *
 * So the watched thread samples its own event-loop utilisation every SAMPLE_MS into shared
 * memory while something watches it, and the generator reads it with no message in between. A
 * sample older than SAMPLE_MS plus the caller's lateness bound says that thread's timers run that
 * late: behind too, whatever its utilisation. Why not only utilisation: a thread that waits for a
 * CPU (a loaded machine, its own process's other threads) is neither busy nor idle by it, yet the
 * responses wait in it. The bound was 5 periods (50 ms) where the generator allows its own loop 5
 * ms (open-loop.ts, LATE_NO_GROWTH_MS): `faultline run latency --latency 0 --baseline` at 4,000
 * req/s through the proxy, nice -20 at load ~10, two interleaved pairs: with 50 ms the phases opened
 * 348-720 connections (p99 0.36-2.8 s), with 5 ms over the period 208-444 (p99 0.11-0.57 s).
 */

/** The sampler's period: a sample up to this old (plus a timer's usual lateness) is on time. */
const SAMPLE_MS = 10;

/** The time in epoch ms (µs resolution): the same clock on either thread, where performance.now() need not be. */
function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** [utilisation over the last sample period, when it was taken (epoch ms)]; 0 when never sampled. */
export type ThreadLoadGauge = Float64Array;

/**
 * Whether the watched thread was over `threshold` busy in its last sample period, or its sampler (a timer) is more
 * than `lateMs` late at `nowMs` (epoch ms): its last sample is older than a period and that.
 */
export function threadBusy(gauge: ThreadLoadGauge, threshold: number, lateMs: number, nowMs = epochNowMs()): boolean {
  const utilization = gauge[0]!;
  const sampledAt = gauge[1]!;
  if (sampledAt === 0) return false;
  return utilization > threshold || nowMs - sampledAt > SAMPLE_MS + lateMs;
}

/** Whether `value` is a gauge as watchThisThread makes them (shared memory, so it can cross threads). */
export function isThreadLoadGauge(value: unknown): value is ThreadLoadGauge {
  return value instanceof Float64Array && value.length === 2 && value.buffer instanceof SharedArrayBuffer;
}

let gauge: ThreadLoadGauge | undefined;
let sampler: NodeJS.Timeout | undefined;
let watchers = 0;

/**
 * Starts sampling this thread's load (if no run already does) and returns the shared gauge; call
 * `stop` when the run ends. The sampler is unref'd: it never keeps the process alive.
 */
export function watchThisThread(): { gauge: ThreadLoadGauge; stop: () => void } {
  gauge ??= new Float64Array(new SharedArrayBuffer(2 * Float64Array.BYTES_PER_ELEMENT));
  const shared = gauge;
  if (watchers++ === 0) {
    let mark = performance.eventLoopUtilization();
    shared[0] = 0;
    shared[1] = epochNowMs();
    sampler = setInterval(() => {
      const now = performance.eventLoopUtilization();
      shared[0] = performance.eventLoopUtilization(now, mark).utilization;
      shared[1] = epochNowMs();
      mark = now;
    }, SAMPLE_MS);
    sampler.unref();
  }
  let stopped = false;
  return {
    gauge: shared,
    stop: () => {
      if (stopped) return;
      stopped = true;
      if (--watchers === 0) {
        clearInterval(sampler);
        sampler = undefined;
        shared[1] = 0;
      }
    },
  };
}
