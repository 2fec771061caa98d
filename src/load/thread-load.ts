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
 * sample that is STALE_MS old says that thread has not run its timers since: busy too.
 */

const SAMPLE_MS = 10;
/** A sample older than this: the watched thread has not run a timer for several periods. */
const STALE_MS = 5 * SAMPLE_MS;

/** The time in epoch ms (µs resolution): the same clock on either thread, where performance.now() need not be. */
function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** [utilisation over the last sample period, when it was taken (epoch ms)]; 0 when never sampled. */
export type ThreadLoadGauge = Float64Array;

/** Whether the watched thread was over `threshold` busy in its last sample period, or has not sampled lately. */
export function threadBusy(gauge: ThreadLoadGauge, threshold: number): boolean {
  const utilization = gauge[0]!;
  const sampledAt = gauge[1]!;
  if (sampledAt === 0) return false;
  return utilization > threshold || epochNowMs() - sampledAt > STALE_MS;
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
