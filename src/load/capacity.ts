/**
 * The closed-loop capacity mode (`strategy: "capacity"`; docs/design.md, "5. Load, scenarios and verdicts"): how many
 * requests per
 * second the endpoint sustains. Each of `connections` keep-alive connections sends its next
 * request as soon as the previous response completes, so the rate is whatever the target allows;
 * it is the right tool for "how much throughput is left under this fault", and the wrong one for
 * latency under a given load (use runOpenLoop for that).
 *
 * It runs on autocannon 9, whose figures carry its limits, stated here so nobody reads more into
 * them: latency is recorded in whole milliseconds (truncated), only for completed responses
 * (timeouts never enter it), and TLS certificates are never verified (autocannon hard-codes
 * rejectUnauthorized: false, so https needs an explicit tls.rejectUnauthorized: false).
 */
import type { AutocannonResult } from 'autocannon';
import { isIP, type LookupFunction } from 'node:net';
import { CancelledError, OperationalError, InputError } from '../kernel/errors.js';
import { MAX_CONNECTIONS, requireCount, requirePositive, resolveTarget, type LoadTarget } from './options.js';

export interface CapacityOptions extends LoadTarget {
  connections: number;
  /** The most requests per second sent over all connections (the server's --max-rate); default no cap. */
  maxRatePerSecond?: number;
  durationMs: number;
  /** Per request, from its send; at least 1000 (autocannon's minimum is 1 s). */
  timeoutMs: number;
  /** Aborting stops the run within about 100 ms; the promise rejects with a CancelledError. */
  signal?: AbortSignal;
  /**
   * Called as each request ends, `error` true for a transport error, a timeout or a 5xx (what
   * `errors` counts): live progress, since the result comes only at the end.
   */
  onSettled?: (error: boolean) => void;
}

export interface CapacityResult {
  mode: 'closed-loop';
  connections: number;
  /** The run's actual length (autocannon stops at a 100 ms sampling tick after durationMs). */
  elapsedMs: number;
  /** Completed responses (any status) per second of elapsedMs: the sustained capacity. */
  requestsPerSecond: number;
  sent: number;
  responses: number;
  /** Transport errors, timeouts and 5xx responses. */
  errors: number;
  timeouts: number;
  http5xx: number;
  statusCodes: Record<string, number>;
  /** Of completed responses only, in whole milliseconds (autocannon truncates), from the send. */
  latencyWholeMs: { mean: number; min: number; max: number; p50: number; p90: number; p99: number; p999: number };
}

/** autocannon checks for its end only at each sampling tick; 100 ms bounds how late a stop lands. */
const SAMPLE_INTERVAL_MS = 100;

export async function runCapacity(options: CapacityOptions): Promise<CapacityResult> {
  if (options === null || typeof options !== 'object') throw new InputError('options must be an object');
  const target = resolveTarget(options);
  const connections = requireCount('connections', options.connections, MAX_CONNECTIONS);
  const durationMs = requirePositive('durationMs', options.durationMs);
  const timeoutMs = requirePositive('timeoutMs', options.timeoutMs);
  const maxRate =
    options.maxRatePerSecond === undefined ? undefined : requirePositive('maxRatePerSecond', options.maxRatePerSecond);
  if (timeoutMs < 1000)
    throw new InputError(`timeoutMs must be at least 1000 in capacity mode (autocannon's minimum), got ${timeoutMs}`);
  if (target.secure && (options.tls?.rejectUnauthorized !== false || options.tls?.ca !== undefined)) {
    throw new InputError(
      'capacity mode cannot verify TLS certificates (autocannon does ' +
        'not); pass tls.rejectUnauthorized: false to measure an https URL ' +
        'unverified',
    );
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InputError('signal must be an AbortSignal');
  const signal = options.signal;
  if (signal?.aborted) throw new CancelledError('capacity run cancelled before it started');

  // autocannon resolves names itself, with no lookup to apply the target policy at connect: the
  // name is resolved here, through that policy, and autocannon connects to the address it gave.
  const connectHost =
    target.lookup === undefined ? target.connectHost : await resolveThroughPolicy(target.lookup, target.connectHost);
  const host = connectHost.includes(':') ? `[${connectHost}]` : connectHost;
  const headers: Record<string, string> = { host: target.hostHeader };
  for (const [name, value] of target.headers) headers[name] = value;

  // Loaded here, not at start-up: autocannon costs ~130 ms to load and only this mode uses it.
  const { default: autocannon } = await import('autocannon');
  let stopAtDuration: NodeJS.Timeout | undefined;
  const outcome = await new Promise<{ error: Error | null; result: AutocannonResult }>((resolve) => {
    const instance = autocannon(
      {
        url: `${target.url.protocol}//${host}:${target.connectPort}${target.path}`,
        connections,
        duration: durationMs / 1000,
        timeout: timeoutMs / 1000,
        method: target.method,
        headers,
        ...(target.body.length > 0 ? { body: target.body.toString('utf8') } : {}),
        ...(target.servername !== undefined ? { servername: target.servername } : {}),
        sampleInt: SAMPLE_INTERVAL_MS,
        // A closed loop sends as fast as the target answers; a rate cap still holds it. autocannon's
        // own rate limit grants each connection a budget per second and overshoots it (measured:
        // 80 req/s against a cap of 50), so the run is also given the cap's total, maxRate ×
        // duration, as its request count; with a count autocannon ignores its duration, so a timer
        // stops it at durationMs whatever happens.
        //
        // With a rate, autocannon also "corrects" each latency for coordinated omission with an
        // expected interval of ceil(1 / per-connection rate), i.e. 1 ms: HdrHistogram then adds
        // made-up samples at latency − 1 ms, − 2 ms, … down to 1 ms, halving the mean and p50 (a
        // 50 ms fault read p50 26 ms, min 1). A closed loop has no schedule to omit from: off.
        ...(maxRate !== undefined
          ? {
              overallRate: maxRate,
              amount: Math.max(1, Math.floor((maxRate * durationMs) / 1000)),
              ignoreCoordinatedOmission: true,
            }
          : {}),
      },
      (error, result) => {
        clearTimeout(stopAtDuration);
        signal?.removeEventListener('abort', onAbort);
        resolve({ error, result });
      },
    );
    const onSettled = options.onSettled;
    if (onSettled) {
      instance.on('response', (_client, statusCode) => onSettled(statusCode >= 500));
      instance.on('reqError', () => onSettled(true));
    }
    const onAbort = (): void => instance.stop();
    signal?.addEventListener('abort', onAbort);
    if (maxRate !== undefined) stopAtDuration = setTimeout(() => instance.stop(), durationMs);
  });
  // autocannon destroys its sockets as it calls back, from a timer; their handles finish closing
  // in that event-loop turn's close phase, which has passed by the second check phase from now.
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  if (signal?.aborted) throw new CancelledError('capacity run cancelled');
  if (outcome.error) throw outcome.error;
  const raw = outcome.result;

  const elapsedMs = raw.duration * 1000;
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(raw.statusCodeStats)) statusCodes[code] = count;
  return {
    mode: 'closed-loop',
    connections,
    elapsedMs,
    requestsPerSecond: raw.requests.total / (elapsedMs / 1000),
    // Responses plus failed requests. autocannon's own requests.sent adds each connection's rate
    // budget to its count at start, so with a rate cap it overstates what was sent.
    sent: raw.requests.total + raw.errors,
    responses: raw.requests.total,
    errors: raw.errors + raw['5xx'],
    timeouts: raw.timeouts,
    http5xx: raw['5xx'],
    statusCodes,
    latencyWholeMs: {
      mean: raw.latency.mean,
      min: raw.latency.min,
      max: raw.latency.max,
      p50: raw.latency.p50,
      p90: raw.latency.p90,
      p99: raw.latency.p99,
      p999: raw.latency.p99_9,
    },
  };
}

/**
 * The address `host` resolves to through `lookup` (the target policy's): an IP literal as it is; a
 * name the policy refuses is an OperationalError naming why; a name that does not resolve is left
 * as it is, for autocannon's connections to fail on as they would.
 */
export function resolveThroughPolicy(lookup: LookupFunction, host: string): Promise<string> {
  if (isIP(host) !== 0) return Promise.resolve(host);
  return new Promise((resolve, reject) => {
    lookup(host, { all: false }, (error, address) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOTLOCAL') reject(new OperationalError(error.message));
      else if (error || typeof address !== 'string') resolve(host);
      else resolve(address);
    });
  });
}
