/**
 * The load plane: the scenario tools' open-loop generator, warmed once per process, with the
 * experiment's switches as edges of its own schedule (no request due after a switch is sent before
 * the switch is done, so every request due in a fault's window meets it).
 */
import { runOpenLoop, ScheduleEnd, type OpenLoopResult, type SecondBucket } from '../../load/index.js';
import { warmUpOnce } from '../../scenario/warm-up.js';
import type { LoadPlan } from '../model.js';

export { ScheduleEnd, type OpenLoopResult, type SecondBucket };

export interface LoadRun {
  plan: LoadPlan;
  /** Send to this address instead of the url's (the proxy in front of it). */
  connectTo: { host: string; port: number } | undefined;
  edgesMs: readonly number[];
  onEdge: (index: number) => void | Promise<void>;
  onStart: () => void;
  onSecond: (bucket: SecondBucket) => void;
  signal: AbortSignal | undefined;
  /** Ends the schedule early (an abort, once its recovery is judged). */
  scheduleEnd?: ScheduleEnd;
  /** Requests cross an in-process proxy: the generator watches this thread's load too. */
  throughProcessProxy: boolean;
}

export async function warmUpLoad(signal: AbortSignal | undefined): Promise<void> {
  await warmUpOnce(signal);
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
    watchCallerThread: run.throughProcessProxy,
    edgesMs: run.edgesMs,
    onEdge: run.onEdge,
    onStart: run.onStart,
    onSecond: run.onSecond,
    ...(run.signal ? { signal: run.signal } : {}),
    ...(run.scheduleEnd ? { scheduleEnd: run.scheduleEnd } : {}),
  });
}
