/**
 * The load plane: the scenario tools' open-loop generator, warmed once per process, with the
 * experiment's switches as edges of its own schedule (no request due after a switch is sent before
 * the switch is done, so every request due in a fault's window meets it).
 */
import {
  runOpenLoop,
  ScheduleEnd,
  type LiveCounters,
  type OpenLoopResult,
  type SecondBucket,
  type ThreadLoadGauge,
} from '../../load/index.js';
import { warmUpOnce as warmUpLoad, WARM_REQUESTS_PER_CONNECTION, type WarmUp } from '../../scenario/warm-up.js';
import type { LoadPlan } from '../model.js';

export { ScheduleEnd, WARM_REQUESTS_PER_CONNECTION, warmUpLoad, type OpenLoopResult, type SecondBucket, type WarmUp };

export interface LoadRun {
  plan: LoadPlan;
  /** Send to this address instead of the url's (the proxy in front of it). */
  connectTo: { host: string; port: number } | undefined;
  /** Unmeasured requests on each connection before the clock starts (a scenario's proxy in front: warm-up.ts). */
  warmRequestsPerConnection: number;
  /** Counted live, for progress. */
  live: LiveCounters;
  edgesMs: readonly number[];
  onEdge: (index: number) => void | Promise<void>;
  onStart: (startedAt: number) => void;
  onSecond: (bucket: SecondBucket) => void;
  signal: AbortSignal | undefined;
  /** Requests cross the runner's proxy: the generator watches its thread's load too (its lateness is not the app's). */
  watchLoadOf: ThreadLoadGauge | undefined;
  /** Ends the schedule early (an abort, once its recovery is judged). */
  scheduleEnd?: ScheduleEnd;
}

export function runLoad(run: LoadRun): Promise<OpenLoopResult> {
  const { plan } = run;
  return runOpenLoop({
    url: plan.url,
    method: plan.method,
    body: plan.body,
    headers: plan.headers,
    tls: { rejectUnauthorized: plan.rejectUnauthorized },
    targets: plan.targets,
    ...(run.connectTo ? { connectTo: run.connectTo } : {}),
    ratePerSecond: plan.clients * plan.rps,
    connections: plan.clients,
    maxConnections: plan.maxConnections,
    expectedStatus: plan.expectedStatus,
    durationMs: plan.durationMs,
    timeoutMs: plan.timeoutMs,
    ...(run.watchLoadOf ? { watchLoadOf: run.watchLoadOf } : {}),
    warmRequestsPerConnection: run.warmRequestsPerConnection,
    live: run.live,
    edgesMs: run.edgesMs,
    onEdge: run.onEdge,
    onStart: run.onStart,
    onSecond: run.onSecond,
    ...(run.signal ? { signal: run.signal } : {}),
    ...(run.scheduleEnd ? { scheduleEnd: run.scheduleEnd } : {}),
  });
}
