/**
 * Runs one scenario: a fault proxy and the load generator on a timeline.
 *
 *   [baseline phase: proxy, no fault, load for `duration`]   (when baseline: true)
 *   fault phase:     proxy ── fault on at faultStart … off at faultEnd ──▶
 *                    load  ── open loop (or closed-loop capacity) for `duration` ──▶
 *
 * Without `proxies`, the load goes to an ephemeral proxy port that forwards (plain TCP, so TLS
 * stays end to end with the url's server name) to the url's host; with `proxies`, the load goes
 * straight to the url and the faults apply to the app's outbound calls through the mapped ports.
 * Each phase has its own proxy, so each phase's counters are its own. The proxy runs on the proxy
 * thread (proxy-host/) and the load on the generator thread, so neither waits for the other's
 * event loop, nor for this thread's. Everything started is stopped before this returns, throws or
 * is cancelled.
 */
import { CancelledError, InputError } from '../kernel/errors.js';
import { beginMeasuring } from '../measuring.js';
import {
  runCapacity,
  runOpenLoop,
  summarizeSamples,
  type CapacityResult,
  LiveCounters,
  type OpenLoopResult,
} from '../load/index.js';
import { mappingInFrontOf, validateFault } from '../proxy/index.js';
import { refuseInProduction } from '../production.js';
import { startHostedProxy, type HostedProxy } from '../proxy-host/index.js';
import { validateHttpFault } from '../proxy/http/index.js';
import { describeFault } from '../report/fault-text.js';
import { describeHttpFault } from './http-fault.js';
import type { ScenarioSpec } from './input.js';
import type { ImpactRow, LoadFigures, PhaseResult, ScenarioResult, TimelineSecond } from './result.js';
import { evaluateErrorSlo, evaluateSlos, upperBound } from './slo.js';
import { decideVerdict } from './verdict.js';
import { WARM_REQUESTS_PER_CONNECTION, warmUpOnce } from './warm-up.js';
import { describeTargets } from '../target-policy.js';

export interface ScenarioProgress {
  /** Milliseconds of load done so far, over every phase. */
  doneMs: number;
  totalMs: number;
  message: string;
}

export interface RunOptions {
  signal?: AbortSignal | undefined;
  /** Called about once a second while load runs. */
  onProgress?: ((progress: ScenarioProgress) => void) | undefined;
  /** Arguments the caller gave that belong to other fault types (reported, not used). */
  ignoredArguments?: string[] | undefined;
  /** Run even where the environment says production (--allow-production; src/production.ts). */
  allowProduction?: boolean | undefined;
}

const REPORTED_PERCENTILES = [25, 50, 75, 95, 99];

export async function runScenario(spec: ScenarioSpec, options: RunOptions = {}): Promise<ScenarioResult> {
  // The production guard, before the baseline: the fault phase would inject.
  refuseInProduction('run a fault scenario', options.allowProduction === true);
  const startedAt = new Date().toISOString();
  const seed = spec.seed ?? Math.floor(Math.random() * 2 ** 31);
  const phases = spec.baseline ? (['baseline', 'fault'] as const) : (['fault'] as const);
  // A phase lasts its duration, then at most `timeout` while the requests still in flight settle.
  const phaseMs = spec.durationMs + spec.timeoutMs;
  const totalMs = phases.length * phaseMs;
  let baseline: PhaseResult | null = null;
  let run: PhaseResult | undefined;
  let switchedOn = false;
  // Optional work on this thread (an MCP server's code warm-up) waits until the run is over: the
  // proxy runs here, so its steps would be reported as the target's latency (src/measuring.ts).
  const endMeasuring = beginMeasuring();
  try {
    for (const [index, phase] of phases.entries()) {
      const result = await runPhase(spec, phase, seed, {
        signal: options.signal,
        onProgress:
          options.onProgress &&
          ((doneMs, message) => options.onProgress!({ doneMs: index * phaseMs + doneMs, totalMs, message })),
      });
      if (phase === 'baseline') baseline = result.phase;
      else ({ phase: run, faultSwitchedOn: switchedOn } = result);
    }
  } finally {
    endMeasuring();
  }
  const fault = run!;
  const url = new URL(spec.url);
  const httpSettings = spec.httpFault ? validateHttpFault(spec.httpFault) : undefined;
  const settings = httpSettings ?? validateFault(spec.fault);
  const { verdict, reasons } = decideVerdict(spec, fault, switchedOn);
  // The load ends once its last request has settled, which may be before `duration` (the last
  // one is due up to one interval before it) or after it (draining): the proxy, and so the
  // fault, stops then.
  const loadEndMs = fault.load?.elapsedMs ?? fault.capacity?.elapsedMs ?? spec.durationMs;
  return {
    title: `Evaluating runtime performance of ${spec.url}`,
    url: spec.url,
    method: spec.method,
    headers: maskCredentials(spec.headers),
    hasBody: spec.body !== '',
    timeoutMs: spec.timeoutMs,
    strategy: {
      type: spec.strategy,
      durationMs: spec.durationMs,
      clients: spec.clients,
      rps: spec.rps,
      ratePerSecond: spec.clients * spec.rps,
      maxConnections: spec.maxConnections,
      expectStatus: spec.expectStatus,
    },
    fault: {
      type: httpSettings ? (`http_${httpSettings.type}` as const) : spec.fault.type,
      settings,
      description: httpSettings ? describeHttpFault(httpSettings) : describeFault(validateFault(spec.fault)),
      startMs: spec.faultStartMs,
      endMs: spec.faultEndMs,
      activeUntilMs: !switchedOn
        ? spec.faultStartMs
        : spec.faultEndMs < spec.durationMs
          ? Math.min(spec.faultEndMs, loadEndMs)
          : loadEndMs,
      switchedOn,
      seed,
    },
    proxies: proxyMappings(spec, url),
    routedThroughProxy: spec.proxies.length === 0,
    targets: describeTargets(spec.targets),
    ignoredArguments: options.ignoredArguments ?? [],
    startedAt,
    endedAt: new Date().toISOString(),
    baseline,
    run: fault,
    impact: baseline ? impactRows(baseline, fault) : [],
    verdict,
    verdictReasons: reasons,
    passed: verdict === 'passed',
  };
}

interface PhaseOptions {
  signal: AbortSignal | undefined;
  onProgress: ((doneMs: number, message: string) => void) | undefined;
}

/** A phase's figures, and whether its fault was ever switched on (see faultWindow). */
interface PhaseOutcome {
  phase: PhaseResult;
  faultSwitchedOn: boolean;
}

async function runPhase(
  spec: ScenarioSpec,
  phase: 'baseline' | 'fault',
  seed: number,
  options: PhaseOptions,
): Promise<PhaseOutcome> {
  if (options.signal?.aborted) throw new CancelledError('scenario cancelled');
  const url = new URL(spec.url);
  const startedAt = new Date().toISOString();
  const targetConnectFailures: Record<string, number> = {};
  // With the proxy in the load's path, an open-loop phase first warms what it brought up (see
  // WARM_REQUESTS_PER_CONNECTION): its fault from the start is switched on after that, and a
  // connect failure counts once the clock has started. With `proxies` the app's calls are warmed,
  // if at all, by the app; the load goes as it comes.
  const warms = spec.strategy !== 'capacity' && spec.proxies.length === 0;
  const counting = { on: !warms };
  const proxy = await startPhaseProxy(spec, url, seed, (reason) => {
    if (counting.on) targetConnectFailures[reason] = (targetConnectFailures[reason] ?? 0) + 1;
  });
  if (spec.strategy !== 'capacity') {
    // The process's first open-loop run only: its own code warm, so second 0 measures the target.
    // After the proxy has bound the caller's ports, so a port in use is refused at once. A cancel
    // stops it (unless another scenario waits for it too) and does not wait out its load.
    await warmUpOnce(options.signal);
  }
  if (options.signal?.aborted) {
    await proxy.stop();
    throw new CancelledError('scenario cancelled');
  }
  const live = new LiveCounters();
  const progress = { errors: 0 };
  const ticker = startProgressTicker(spec, phase, live, progress, options.onProgress);
  const timers: NodeJS.Timeout[] = [];
  try {
    // A start or an end is an edge of the open loop's own schedule (no request due past it is sent
    // before the switch; one at 0 once the phase's connections are open and warm, before the clock
    // starts), or timed from the start of the closed loop, whose fault from the start is on before
    // it opens its first connection.
    const window =
      phase === 'fault'
        ? await faultWindow(spec, proxy, warms)
        : { edgesMs: [], switchAt: async () => {}, switchedOn: () => false };
    const target = {
      url: spec.url,
      method: spec.method,
      body: spec.body,
      headers: spec.headers,
      tls: { rejectUnauthorized: spec.rejectUnauthorized },
      targets: spec.targets,
      ...(spec.proxies.length === 0 ? { connectTo: { host: '127.0.0.1', port: proxy.ports[0]! } } : {}),
    };
    const measured =
      spec.strategy === 'capacity'
        ? await runClosedLoopPhase(spec, target, window, { live, progress, timers, signal: options.signal })
        : await runOpenLoopPhase(spec, phase, target, window, {
            live,
            progress,
            proxy,
            signal: options.signal,
            warmRequests: warms ? WARM_REQUESTS_PER_CONNECTION : 0,
            onStart: () => void (counting.on = true),
          });
    return {
      phase: {
        phase,
        startedAt,
        endedAt: new Date().toISOString(),
        ...measured,
        passed: measured.slos.every((slo) => slo.pass),
        proxy: await proxy.counters(),
        proxyPorts: [...proxy.ports],
        targetConnectFailures,
      },
      faultSwitchedOn: window.switchedOn(),
    };
  } finally {
    clearInterval(ticker);
    for (const timer of timers) clearTimeout(timer);
    await proxy.stop();
  }
}

type PhaseTarget = Parameters<typeof runOpenLoop>[0] & Parameters<typeof runCapacity>[0];
type PhaseWindow = { edgesMs: number[]; switchAt: (index: number) => Promise<void>; switchedOn: () => boolean };
interface PhaseMeasures {
  load: LoadFigures | null;
  capacity: CapacityResult | null;
  slos: PhaseResult['slos'];
  slosNotEvaluated: string[];
}

/** The phase's proxy, on its own thread: the load's target behind it, and the caller's mappings. */
function startPhaseProxy(
  spec: ScenarioSpec,
  url: URL,
  seed: number,
  onConnectFailure: (reason: string) => void,
): Promise<HostedProxy> {
  return startHostedProxy({
    mappings: proxyMappings(spec, url),
    seed,
    // Checked by runScenario before the run (RunOptions.allowProduction).
    allowProduction: true,
    onEvent: (event) => {
      if (event.type !== 'connect_failed') return;
      onConnectFailure(/\bE[A-Z_]{3,}\b/.exec(event.error)?.[0] ?? event.error);
    },
    tls: { rejectUnauthorized: spec.rejectUnauthorized },
    // Protocol-aware for an HTTP fault, and when a mapping says its protocol (redis://, http://): a network fault there
    // is then counted in that protocol's unit too (Redis commands, HTTP requests), as the experiment runner does.
    ...(spec.httpFault || spec.proxies.some((mapping) => mapping.protocol !== undefined) ? { http: true } : {}),
    // The proxy in front of url connects to the load's target, and the caller's mappings to the
    // app's dependencies: the same target policy applies to both, checked at every connect
    // (src/target-policy.ts).
    targets: spec.targets,
  }).catch((error: unknown) => {
    // A port of the caller's mappings that cannot be bound (already in use) is a bad argument:
    // name it as the caller wrote it. Without mappings the port is ephemeral and cannot clash.
    if (error instanceof InputError && spec.proxies.length > 0) throw new InputError(`proxies: ${error.message}`);
    throw error;
  });
}

/**
 * Once a second, also while the requests in flight at the end of the load settle (up to
 * `timeout`), so a client sees the call is alive and why it is not over yet.
 */
function startProgressTicker(
  spec: ScenarioSpec,
  phase: string,
  live: LiveCounters,
  progress: { errors: number },
  onProgress: PhaseOptions['onProgress'],
): NodeJS.Timeout {
  const loadStart = performance.now();
  return setInterval(() => {
    const elapsedMs = performance.now() - loadStart;
    const doneMs = Math.min(spec.durationMs + spec.timeoutMs, elapsedMs);
    const inFlight = live.dispatched - live.settled;
    const message =
      elapsedMs < spec.durationMs || spec.strategy === 'capacity'
        ? `${phase}: ` +
          `${Math.round(Math.min(elapsedMs, spec.durationMs) / 1000)}s/${spec.durationMs / 1000}s, ` +
          `${live.settled} requests settled, ${progress.errors} errors` +
          // The closed loop holds its `clients` connections; autocannon does not say how many are open.
          (spec.strategy === 'capacity' ? '' : `, ${live.openConnections} connections`)
        : `${phase}: draining: ${inFlight} request${inFlight === 1 ? '' : 's'} ` +
          `in flight (each ends by its timeout, ${spec.timeoutMs / 1000}s ` +
          `after its intended start)`;
    onProgress?.(doneMs, message);
  }, 1000);
}

/** The closed loop (capacity): starts at once, the fault switched by timers; only error SLOs apply. */
async function runClosedLoopPhase(
  spec: ScenarioSpec,
  target: Omit<PhaseTarget, 'ratePerSecond' | 'connections' | 'durationMs' | 'timeoutMs'>,
  window: PhaseWindow,
  run: { live: LiveCounters; progress: { errors: number }; timers: NodeJS.Timeout[]; signal: AbortSignal | undefined },
): Promise<PhaseMeasures> {
  const switches: Array<Promise<void>> = [];
  window.edgesMs.forEach((atMs, index) =>
    run.timers.push(
      setTimeout(() => {
        const switched = window.switchAt(index);
        switched.catch(() => {}); // awaited below, once the load is over
        switches.push(switched);
      }, atMs),
    ),
  );
  const capacity = await runCapacity({
    ...target,
    connections: spec.clients,
    durationMs: spec.durationMs,
    timeoutMs: Math.max(1000, spec.timeoutMs),
    maxRatePerSecond: spec.maxRatePerSecond,
    signal: run.signal,
    // The open loop counts in `live` itself; the closed loop reports each request's end.
    onSettled: (error) => {
      run.live.settled += 1;
      if (error) run.progress.errors += 1;
    },
  });
  // A switch that failed (the proxy thread went away) fails the phase, as in the open loop.
  await Promise.all(switches);
  // Closed loop has no per-request latencies from an intended start: only error SLOs apply.
  const { sent, errors: failed } = capacity;
  return {
    load: null,
    capacity,
    slos: spec.slos.filter((slo) => slo.type === 'error').map((slo) => evaluateErrorSlo(slo, sent, failed)),
    slosNotEvaluated: spec.slos.filter((slo) => slo.type === 'latency').map((slo) => slo.title),
  };
}

/** The open loop: the fault switched at edges of its own schedule; every SLO applies. */

async function runOpenLoopPhase(
  spec: ScenarioSpec,
  phase: 'baseline' | 'fault',
  target: Omit<PhaseTarget, 'ratePerSecond' | 'connections' | 'durationMs' | 'timeoutMs'>,
  window: PhaseWindow,
  run: {
    live: LiveCounters;
    progress: { errors: number };
    proxy: HostedProxy;
    signal: AbortSignal | undefined;
    warmRequests: number;
    onStart: () => void;
  },
): Promise<PhaseMeasures> {
  const result = await runOpenLoop({
    ...target,
    ratePerSecond: spec.clients * spec.rps,
    connections: spec.clients,
    maxConnections: spec.maxConnections,
    expectedStatus: spec.expectedStatus,
    durationMs: spec.durationMs,
    timeoutMs: spec.timeoutMs,
    signal: run.signal,
    live: run.live,
    // Every request crosses the proxy's thread: its lateness is not the target's.
    watchLoadOf: run.proxy.load,
    // The process's warm-up (warm-up.ts) warmed the code on a proxy of its own to a sink; this
    // phase's proxy, its upstream connections and the target's side of them are new: a few
    // unmeasured requests on each connection warm them before the first measured one, and before
    // the fault from the start is switched on.
    warmRequestsPerConnection: run.warmRequests,
    // Posted by the generator thread as its clock starts, before the first request: a failure that
    // request meets reaches this thread after it.
    onStart: run.onStart,
    edgesMs: window.edgesMs,
    onEdge: window.switchAt,
    onSecond: (bucket) => {
      run.progress.errors += bucket.errors;
    },
  });
  const sorted = Float64Array.from(result.samples.latencyMs.subarray(0, result.samples.count)).sort();
  return {
    load: loadFigures(spec, phase, result, sorted),
    capacity: null,
    slos: evaluateSlos(spec.slos, sorted, result.errors),
    slosNotEvaluated: [],
  };
}

/**
 * The fault's window: on at faultStartMs and, when it ends before the load does, off at faultEndMs
 * (requests in flight then finish without it). A fault from the start is an edge at 0 when the load
 * warms its connections first (`atZeroEdge`: the open loop passes it after its warm requests, before
 * its clock starts), else switched on here, before the load begins. A fault that lasts to the end
 * of the load stays on until the last request has settled, so every request sent under it meets
 * it for its whole life (a latency run's last
 * requests are delayed like the others; a blackhole's held requests time out); the report then
 * gives that real end (`activeUntilMs`), draining included. An edge is passed only while the load
 * runs: when every request has settled before fault_start, the fault is never switched on
 * (`switchedOn`), and the verdict says no request met it.
 */
async function faultWindow(
  spec: ScenarioSpec,
  proxy: HostedProxy,
  atZeroEdge: boolean,
): Promise<{ edgesMs: number[]; switchAt: (index: number) => Promise<void>; switchedOn: () => boolean }> {
  const httpFault = spec.httpFault;
  let switchedOn = false;
  const switchOn = httpFault ? () => proxy.setHttpFaults([httpFault]) : () => proxy.setFaults([spec.fault]);
  // On once the proxy's thread has it: the load sends nothing due past the edge before then.
  const on = async (): Promise<void> => {
    await switchOn();
    switchedOn = true;
  };
  const off = httpFault ? () => proxy.setHttpFaults([]) : () => proxy.setFaults([]);
  if (spec.faultStartMs <= 0 && !atZeroEdge) await on();
  const edgesMs: number[] = [];
  const switches: Array<() => Promise<void>> = [];
  if (spec.faultStartMs > 0 || atZeroEdge) {
    edgesMs.push(Math.max(0, spec.faultStartMs));
    switches.push(on);
  }
  if (spec.faultEndMs < spec.durationMs) {
    edgesMs.push(spec.faultEndMs);
    switches.push(off);
  }
  return { edgesMs, switchAt: (index) => switches[index]!(), switchedOn: () => switchedOn };
}

/** The proxy's mappings, as text: the user's, or one ephemeral port in front of the url. */
function proxyMappings(spec: ScenarioSpec, url: URL): string[] {
  return spec.proxies.length > 0 ? spec.proxies.map((mapping) => mapping.text) : [mappingInFrontOf(url)];
}

function loadFigures(
  spec: ScenarioSpec,
  phase: 'baseline' | 'fault',
  result: OpenLoopResult,
  sorted: Float64Array,
): LoadFigures {
  const total = result.requests;
  const faultOn = (fromMs: number, toMs: number) =>
    phase === 'fault' && fromMs < spec.faultEndMs && toMs > spec.faultStartMs;
  const timeline: TimelineSecond[] = result.seconds.map((bucket) => ({
    second: bucket.second,
    requests: bucket.requests,
    errors: bucket.errors,
    p50Ms: bucket.p50Ms,
    p95Ms: bucket.p95Ms,
    faultActive: faultOn(bucket.second * 1000, (bucket.second + 1) * 1000),
  }));
  const partialFault = phase === 'fault' && (spec.faultStartMs > 0 || spec.faultEndMs < spec.durationMs);
  let duringFault: LoadFigures['duringFault'] = null;
  if (partialFault) {
    const window = summarizeSamples(result.samples, { fromMs: spec.faultStartMs, toMs: spec.faultEndMs });
    duringFault = {
      fromMs: spec.faultStartMs,
      toMs: spec.faultEndMs,
      requests: window.requests,
      errors: window.errors,
      latency: window.latency,
    };
  }
  return {
    requests: total,
    responses: result.responses,
    errors: result.errors,
    errorsByClass: result.errorsByClass,
    errorDetails: result.errorDetails,
    statusCodes: result.statusCodes,
    latency: result.latency,
    serviceTime: result.serviceTime,
    ttfb: result.ttfb,
    sendLag: result.sendLag,
    percentiles: REPORTED_PERCENTILES.map((percentile) => {
      const latencyMs = result.latency ? (result.latency[`p${percentile}` as 'p50'] as number) : 0;
      const requests = upperBound(sorted, latencyMs);
      return { percentile, latencyMs, requests, percentOfTotal: total === 0 ? 0 : (requests / total) * 100 };
    }),
    targetRatePerSecond: spec.clients * spec.rps,
    achievedRatePerSecond: result.achievedRatePerSecond,
    elapsedMs: result.elapsedMs,
    queued: result.queued,
    maxConnections: spec.maxConnections,
    warmRequests: result.warmRequests,
    connectionsOpened: result.connectionsOpened,
    connectionsReopened: result.connectionsReopened,
    peakBusyConnections: result.peakBusyConnections,
    saturation: saturationOf(spec, result),
    notSent: result.notSent,
    timeline,
    duringFault,
  };
}

/**
 * Whether the connections, not the target, limited the run: connections open on demand, so a
 * request waits only when all `max_connections` are busy, and its latency then includes that
 * wait. Little's law gives how many requests were in flight on average (rate × mean service
 * time), so the report can say how many connections the rate needs.
 */
function saturationOf(spec: ScenarioSpec, result: OpenLoopResult): LoadFigures['saturation'] {
  // Brief waits while on-demand connections were being set up (at most MAX_CONNECTING at once)
  // are not the cap: only waits with every one of max_connections open say raise it.
  if (result.requests === 0 || result.queuedAtCap === 0) return null;
  const rate = spec.clients * spec.rps;
  const meanServiceMs = result.serviceTime?.mean ?? 0;
  return {
    waitedPercent: (result.queuedAtCap / result.requests) * 100,
    waitP50Ms: result.sendLag?.p50 ?? 0,
    connectionsNeeded: Math.ceil((rate * meanServiceMs) / 1000),
  };
}

function impactRows(baseline: PhaseResult, fault: PhaseResult): ImpactRow[] {
  const row = (
    metric: string,
    unit: ImpactRow['unit'],
    before: number | null | undefined,
    after: number | null | undefined,
  ): ImpactRow => {
    const b = before ?? null;
    const a = after ?? null;
    return {
      metric,
      unit,
      baseline: b,
      fault: a,
      change: a !== null && b !== null ? a - b : null,
      ratio: a !== null && b !== null && b !== 0 ? a / b : null,
    };
  };
  if (baseline.capacity || fault.capacity) {
    return [
      row('sustained requests/s', 'req/s', baseline.capacity?.requestsPerSecond, fault.capacity?.requestsPerSecond),
      row('p50 latency', 'ms', baseline.capacity?.latencyWholeMs.p50, fault.capacity?.latencyWholeMs.p50),
      row('p99 latency', 'ms', baseline.capacity?.latencyWholeMs.p99, fault.capacity?.latencyWholeMs.p99),
    ];
  }
  const b = baseline.load!;
  const f = fault.load!;
  const errorPercent = (load: LoadFigures) => (load.requests === 0 ? 0 : (load.errors / load.requests) * 100);
  return [
    row('mean latency', 'ms', b.latency?.mean, f.latency?.mean),
    row('p50 latency', 'ms', b.latency?.p50, f.latency?.p50),
    row('p95 latency', 'ms', b.latency?.p95, f.latency?.p95),
    row('p99 latency', 'ms', b.latency?.p99, f.latency?.p99),
    row('max latency', 'ms', b.latency?.max, f.latency?.max),
    row('errors', '%', errorPercent(b), errorPercent(f)),
    row('achieved rate', 'req/s', b.achievedRatePerSecond, f.achievedRatePerSecond),
  ];
}

const CREDENTIAL_HEADERS = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;

/** fault masks Authorization as xxxxxx; so do we, and the other usual credential headers. */
function maskCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, CREDENTIAL_HEADERS.test(name) ? 'xxxxxx' : value]),
  );
}
