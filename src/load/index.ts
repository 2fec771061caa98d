/**
 * Load generation (docs/design.md, "5. Load, scenarios and verdicts"). Everything the rest of faultline uses comes from
 * this file.
 *
 *   const result = await runOpenLoop({
 *     url: 'http://127.0.0.1:8080/api',        // Host header and TLS server name come from here
 *     connectTo: { host: '127.0.0.1', port: proxyPort },   // optional: send somewhere else
 *     method: 'POST', body: '{"a":1}',         // a non-empty body is sent as application/json
 *     ratePerSecond: 5 * 20,                   // total: num_clients × rps
 *     connections: 5,                          // num_clients keep-alive connections
 *     durationMs: 10_000, timeoutMs: 5_000,
 *     signal, onSecond: (bucket) => …,
 *   });
 *   result.latency.p99          // ms from the intended start (no coordinated omission)
 *   result.samples.latencyMs[i] // every request, for fault windows and SLO counts
 *   summarizeSamples(result.samples, { fromMs: 2000, toMs: 5000 })
 *
 *   const capacity = await runCapacity({ url, connections: 10, durationMs: 10_000, timeoutMs: 5_000 });
 *   capacity.requestsPerSecond  // closed loop: what the endpoint sustains
 *
 * Percentiles are exact R-6 (percentiles.ts). Errors are classed refused / reset / timeout /
 * http_5xx / http_status / other (error-class.ts); a status outside the expected set is an error.
 */
export {
  runOpenLoop,
  ScheduleEnd,
  MAX_CONNECTING,
  type OpenLoopResult,
  type SecondBucket,
  LATENCY_BOUNDS_MS,
  SENT_LATE_MS,
} from './open-loop.js';
export {
  generatorLateness,
  generatorBehindText,
  worstLate,
  GENERATOR_BEHIND_SHARE,
  type GeneratorLateness,
} from './generator-behind.js';
export { LiveCounters } from './live-counters.js';
export { generatorThreadResources } from './generator-thread.js';
export { watchThisThread, type ThreadLoadGauge } from './thread-load.js';
export { runCapacity, type CapacityResult } from './capacity.js';
export {
  latenciesIn,
  latenciesSentOnTime,
  summarizeSamples,
  type RequestSamples,
  type SampleSummary,
} from './samples.js';
export { computeStats, percentileR6, selectPercentiles, type Stats } from './percentiles.js';
export type { ErrorClass } from './error-class.js';
export { DEFAULT_EXPECTED_STATUS, parseExpectedStatus, type ExpectedStatus } from './expect-status.js';
export { openFileLimit, RESERVED_FDS } from './fd-limit.js';
export { MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS } from './options.js';
