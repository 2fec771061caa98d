/**
 * Every request of an open-loop run, one slot per request in order of intended start, as typed
 * arrays (a 5,000 req/s, 10-minute run is 3 million requests). All times are milliseconds with
 * µs resolution. Summaries are computed from these arrays, so any time window (e.g. while a fault
 * was active) can be summarized exactly as the whole run is.
 */
import { ERROR_CLASSES, zeroErrorCounts, type ErrorClass } from './error-class.js';
import { computeStats, type Stats } from './percentiles.js';

export interface RequestSamples {
  count: number;
  /** When the request was due, from the start of the run. Ascending. */
  intendedStartMs: Float64Array;
  /** From the intended start to the response's last byte or the failure; a timeout records the timeout. */
  latencyMs: Float64Array;
  /** From leaving the queue (connecting first if needed) to the same end; NaN when never sent. */
  serviceMs: Float64Array;
  /** From writing the request to the first byte of the final response (interim 1xx skipped); NaN when none arrived. */
  ttfbMs: Float64Array;
  /** HTTP status of the response; 0 when there was none (a transport error or a timeout). */
  status: Uint16Array;
  /** 0 for success (an expected status), else 1 + the index in ERROR_CLASSES. */
  errorClass: Uint8Array;
}

export function createSamples(count: number): RequestSamples {
  return {
    count,
    intendedStartMs: new Float64Array(count),
    latencyMs: new Float64Array(count),
    serviceMs: new Float64Array(count),
    ttfbMs: new Float64Array(count),
    status: new Uint16Array(count),
    errorClass: new Uint8Array(count),
  };
}

export function encodeErrorClass(errorClass: ErrorClass | null): number {
  return errorClass === null ? 0 : ERROR_CLASSES.indexOf(errorClass) + 1;
}

/** The error class of request i, or null when it succeeded. */
export function errorClassAt(samples: RequestSamples, i: number): ErrorClass | null {
  const code = samples.errorClass[i] ?? 0;
  return code === 0 ? null : ERROR_CLASSES[code - 1]!;
}

export interface SampleSummary {
  /** Requests summarized (every one, whatever its outcome). */
  requests: number;
  /** Requests that got a complete response (any status, including 5xx). */
  responses: number;
  /** Requests in any error class. */
  errors: number;
  errorsByClass: Record<ErrorClass, number>;
  /** Responses per HTTP status code. */
  statusCodes: Record<string, number>;
  /** From the intended start; every request, timeouts at their timeout, errors at their failure. */
  latency: Stats | null;
  /** From the actual send; every request that was sent. */
  serviceTime: Stats | null;
  /** From writing the request to the first byte of the final response (interim 1xx skipped); every request that got
   * one. */
  ttfb: Stats | null;
  /** From the intended start to the actual send: timer lateness plus waiting for a free connection. */
  sendLag: Stats | null;
}

/** Summarizes the requests whose intended start is in [fromMs, toMs) (default: all of them). */
export function summarizeSamples(
  samples: RequestSamples,
  window: { fromMs?: number; toMs?: number } = {},
): SampleSummary {
  const first = lowerBound(samples.intendedStartMs, samples.count, window.fromMs ?? -Infinity);
  const end = lowerBound(samples.intendedStartMs, samples.count, window.toMs ?? Infinity);
  const errorsByClass = zeroErrorCounts();
  const statusCodes: Record<string, number> = {};
  const service: number[] = [];
  const ttfb: number[] = [];
  const lag: number[] = [];
  let responses = 0;
  let errors = 0;
  for (let i = first; i < end; i++) {
    const errorClass = errorClassAt(samples, i);
    if (errorClass !== null) {
      errors++;
      errorsByClass[errorClass]++;
    }
    const status = samples.status[i]!;
    if (status !== 0) {
      responses++;
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    }
    const serviceMs = samples.serviceMs[i]!;
    if (!Number.isNaN(serviceMs)) {
      service.push(serviceMs);
      lag.push(samples.latencyMs[i]! - serviceMs);
    }
    const ttfbMs = samples.ttfbMs[i]!;
    if (!Number.isNaN(ttfbMs)) ttfb.push(ttfbMs);
  }
  return {
    requests: end - first,
    responses,
    errors,
    errorsByClass,
    statusCodes,
    latency: computeStats(samples.latencyMs.subarray(first, end)),
    serviceTime: computeStats(service),
    ttfb: computeStats(ttfb),
    sendLag: computeStats(lag),
  };
}

/** The latencies (ms, in order of intended start) of the requests whose intended start is in [fromMs, toMs). */
export function latenciesIn(samples: RequestSamples, window: { fromMs: number; toMs: number }): Float64Array {
  const first = lowerBound(samples.intendedStartMs, samples.count, window.fromMs);
  return samples.latencyMs.subarray(first, lowerBound(samples.intendedStartMs, samples.count, window.toMs));
}

/**
 * The latencies of the requests in the window that left at most `lateMs` after their intended start (send lag =
 * latency − service time), ascending. A request never sent (it timed out in the queue) is kept: its wait was for
 * a connection, not the generator's. Send lag also holds waits for a free connection, so this leaves out at least
 * every request the scheduler sent late (sentLate), and perhaps some the target held up.
 */
export function latenciesSentOnTime(
  samples: RequestSamples,
  window: { fromMs: number; toMs: number },
  lateMs: number,
): Float64Array {
  const first = lowerBound(samples.intendedStartMs, samples.count, window.fromMs);
  const end = lowerBound(samples.intendedStartMs, samples.count, window.toMs);
  const kept: number[] = [];
  for (let i = first; i < end; i++) {
    const latency = samples.latencyMs[i]!;
    const service = samples.serviceMs[i]!;
    if (Number.isNaN(service) || latency - service <= lateMs) kept.push(latency);
  }
  return Float64Array.from(kept).sort();
}

/** The first index in sorted[0, count) whose value is ≥ value. */
function lowerBound(sorted: Float64Array, count: number, value: number): number {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
