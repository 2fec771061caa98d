/**
 * Runs one scenario: each phase an experiment (compile.ts) run on the experiment runner (src/experiment/runner.ts).
 *
 *   [baseline phase: proxy, no fault, load for `duration`]   (when baseline: true)
 *   fault phase:     proxy ── fault on at faultStart … off at faultEnd ──▶
 *                    load  ── open loop (or closed-loop capacity) for `duration` ──▶
 *
 * Without `proxies`, the load goes to an ephemeral proxy port that forwards (plain TCP, so TLS
 * stays end to end with the url's server name) to the url's host; with `proxies`, the load goes
 * straight to the url and the faults apply to the app's outbound calls through the mapped ports.
 * Each phase has its own proxy, so each phase's counters are its own. The runner runs the proxy on the proxy
 * thread (proxy-host/) and the load on the generator thread, and stops everything it started before it returns,
 * throws or is cancelled. This file turns what it measured into fault's report figures (ScenarioResult).
 */
import { beginMeasuring } from '../measuring.js';
import { CancelledError, OperationalError } from '../kernel/errors.js';
import {
  generatorBehindText,
  generatorLateness,
  latenciesIn,
  runCapacity,
  summarizeSamples,
  type CapacityResult,
  type OpenLoopResult,
} from '../load/index.js';
import { mappingInFrontOf } from '../proxy/mapping.js';
import { validateFault } from '../proxy/faults/index.js';
import { refuseInProduction } from '../production.js';
import { validateHttpFault } from '../proxy/http/index.js';
import { describeFault } from '../report/fault-text.js';
import { ProgramPolicy } from '../consent/index.js';
import type { RunProgress } from '../experiment/runner.js';
import { compileScenario } from './compile.js';
import { describeHttpFault } from './http-fault.js';
import type { ScenarioSpec } from './input.js';
import type { ImpactRow, LoadFigures, PhaseResult, ScenarioResult, TimelineSecond } from './result.js';
import { judgeSentOnTime } from './late-sent.js';
import { evaluateErrorSlo, evaluateSlos, upperBound } from './slo.js';
import type { WarmUp } from './warm-up.js';
import { decideVerdict } from './verdict.js';
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
  // Measuring from the first phase to the last, so optional work does not slip in between (src/measuring.ts).
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
      // A phase that ended is all done, though it used less than its settle allowance: a client's
      // progress bar reaches its end instead of stopping where the last request settled.
      options.onProgress?.({ doneMs: (index + 1) * phaseMs, totalMs, message: `${phase}: done` });
    }
  } catch (error) {
    // Whichever part saw the cancel first (the warm-up, the experiment runner, the load), the person ran a scenario.
    if (error instanceof CancelledError) throw new CancelledError(`${scenarioName(spec)} scenario cancelled`);
    throw error;
  } finally {
    endMeasuring();
  }
  const fault = run!;
  const url = new URL(spec.url);
  const httpSettings = spec.httpFault ? validateHttpFault(spec.httpFault) : undefined;
  const settings = httpSettings ?? validateFault(spec.fault);
  const { verdict, reasons } = decideVerdict(spec, fault, switchedOn);
  const behind = generatorNotes(baseline, fault);
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
    impactWarning: behind.impactWarning,
    verdict,
    verdictReasons: reasons,
    verdictCaveats: behind.reasons,
    passed: verdict === 'passed',
  };
}

/** What the person ran: the fault's command name (`faultline run latency`, `fault_run_latency_…`). */
function scenarioName(spec: ScenarioSpec): string {
  return spec.httpFault ? 'http-error' : spec.fault.type.replaceAll('_', '-');
}

/**
 * The phases whose load generator ran behind (load/generator-behind.ts), each said as a caveat (the result's
 * verdictCaveats, never the verdict's reason), and, with a baseline, why the impact comparison is inconclusive. A pass
 * stands (a late generator only adds latency); a failed latency SLO it may explain is the verdict's (late-sent.ts).
 */
export function generatorNotes(
  baseline: PhaseResult | null,
  fault: PhaseResult,
): { reasons: string[]; impactWarning: string | null } {
  const phases: string[] = [];
  const reasons: string[] = [];
  for (const phase of [baseline, fault]) {
    const text = phase?.load?.generatorLate ? generatorBehindText(phase.load.generatorLate) : null;
    if (text === null || !phase) continue;
    phases.push(phase.phase);
    reasons.push(`In the ${phase.phase} phase, ${text}.`);
  }
  if (baseline === null || phases.length === 0) return { reasons, impactWarning: null };
  const which = phases.length === 2 ? 'both phases' : `the ${phases[0]} phase`;
  return {
    reasons,
    impactWarning:
      `Inconclusive comparison: the load generator ran behind in ${which} (see the verdict's reasons), so this ` +
      `comparison measures this machine as much as the target.`,
  };
}

interface PhaseOptions {
  signal: AbortSignal | undefined;
  onProgress: ((doneMs: number, message: string) => void) | undefined;
}

/** A phase's figures, and whether its fault was ever switched on. */
interface PhaseOutcome {
  phase: PhaseResult;
  faultSwitchedOn: boolean;
}

/**
 * A phase is an experiment run (compile.ts) on the experiment runner, whose proxy, warm-up, fault switches (at the
 * open loop's edges, or by timers from the closed loop's start), cancellation and cleanup are the experiment's; its
 * figures are read from what the run measured (the load's result, the proxy's counters).
 */
async function runPhase(
  spec: ScenarioSpec,
  phase: 'baseline' | 'fault',
  seed: number,
  options: PhaseOptions,
): Promise<PhaseOutcome> {
  const onProgress = options.onProgress;
  const counts = { settled: 0, errors: 0 };
  let capacity: CapacityResult | undefined;
  const closedLoop = async (connectTo: { host: string; port: number } | undefined): Promise<void> => {
    capacity = await runCapacity({
      url: spec.url,
      method: spec.method,
      body: spec.body,
      headers: spec.headers,
      tls: { rejectUnauthorized: spec.rejectUnauthorized },
      targets: spec.targets,
      ...(connectTo ? { connectTo } : {}),
      connections: spec.clients,
      durationMs: spec.durationMs,
      timeoutMs: Math.max(1000, spec.timeoutMs),
      maxRatePerSecond: spec.maxRatePerSecond,
      signal: options.signal,
      onSettled: (error) => {
        counts.settled += 1;
        if (error) counts.errors += 1;
      },
    });
  };
  // Loaded when a scenario runs: the runner brings every plane's adapter, which reading a scenario does not need.
  const { runExperimentFor } = await import('../experiment/runner.js');
  const { result, load, warmUp, proxy } = await runExperimentFor(compileScenario(spec, phase, seed), {
    // The mappings were checked against the server's limits when read (input.ts); the guard, by runScenario.
    policy: { ...spec.targets, allowNonLoopbackBind: true, allowProduction: true },
    // A compiled scenario starts no program (compile.ts writes no command), so this policy is never asked.
    programs: ProgramPolicy.owner(),
    signal: options.signal,
    // Nothing listening at the url ends the run at once, as an experiment's load.url does (a target that refuses every
    // connection tests nothing about the fault); the app's dependencies are reached by the app alone.
    preflightUrlOnly: true,
    ...(spec.strategy === 'capacity' && { closedLoop }),
    ...(onProgress && { onProgress: (progress) => onProgress(...progressOf(spec, phase, progress, counts)) }),
  });
  // A switch that failed (the proxy thread went away) fails the phase.
  const unset = result.faults.find((fault) => fault.actedDetail.startsWith('could not be set'));
  if (unset) throw new OperationalError(`${unset.name}: ${unset.actedDetail}`);
  const measured = capacity ? capacityMeasures(spec, capacity) : openLoopMeasures(spec, phase, load!, warmUp);
  return {
    phase: {
      phase,
      startedAt: result.startedAt,
      endedAt: result.endedAt,
      ...measured,
      passed: measured.slos.every((slo) => slo.pass),
      proxy: proxy!.counters,
      proxyPorts: proxy!.ports,
      targetConnectFailures: result.connectFailures,
    },
    faultSwitchedOn: result.faults.some((fault) => fault.onAtMs !== null),
  };
}

type Measures = Pick<PhaseResult, 'load' | 'capacity' | 'slos' | 'slosWindow' | 'slosSentOnTime' | 'slosNotEvaluated'>;

/**
 * A fault window shorter than the run is judged over the requests due in it, as an experiment judges its window:
 * over the whole phase a short fault is diluted (8 slow requests of 100 pass p95). A window no request was due in is
 * judged over the phase; the verdict then says the fault met no request (verdict.ts).
 */
function openLoopMeasures(
  spec: ScenarioSpec,
  phase: 'baseline' | 'fault',
  load: OpenLoopResult,
  warmUp: WarmUp | undefined,
): Measures {
  const sorted = Float64Array.from(load.samples.latencyMs.subarray(0, load.samples.count)).sort();
  const figures = loadFigures(spec, phase, load, sorted);
  if (warmUp) figures.processWarmUp = { ...warmUp };
  const window = figures.duringFault;
  const behind = figures.generatorLate?.behind === true;
  if (window && window.requests > 0) {
    const inWindow = Float64Array.from(latenciesIn(load.samples, window)).sort();
    const slos = evaluateSlos(spec.slos, inWindow, window.errors);
    const slosWindow = { fromMs: window.fromMs, toMs: window.toMs, requests: window.requests };
    const slosSentOnTime = judgeSentOnTime(spec.slos, slos, load.samples, window, behind);
    return {
      load: figures,
      capacity: null,
      slos,
      slosWindow,
      slosNotEvaluated: [],
      ...(slosSentOnTime && { slosSentOnTime }),
    };
  }
  const slos = evaluateSlos(spec.slos, sorted, load.errors);
  const slosSentOnTime = judgeSentOnTime(spec.slos, slos, load.samples, { fromMs: -Infinity, toMs: Infinity }, behind);
  return { load: figures, capacity: null, slos, slosNotEvaluated: [], ...(slosSentOnTime && { slosSentOnTime }) };
}

/** The closed loop has no per-request latencies from an intended start: only error SLOs apply. */
function capacityMeasures(spec: ScenarioSpec, capacity: CapacityResult): Measures {
  return {
    load: null,
    capacity,
    slos: spec.slos
      .filter((slo) => slo.type === 'error')
      .map((slo) => evaluateErrorSlo(slo, capacity.sent, capacity.errors)),
    slosNotEvaluated: spec.slos.filter((slo) => slo.type === 'latency').map((slo) => slo.title),
  };
}

/**
 * Said once a second, also while the requests in flight at the end of the load settle (up to `timeout`), so a client
 * sees the call is alive and why it is not over yet. The closed loop counts its own (`counts`) and holds its `clients`
 * connections; it does not say how many are open.
 */
function progressOf(
  spec: ScenarioSpec,
  phase: string,
  progress: RunProgress,
  counts: { settled: number; errors: number },
): [doneMs: number, message: string] {
  const { elapsedMs, inFlight, ...load } = progress.load!;
  const capacity = spec.strategy === 'capacity';
  const figures = capacity
    ? `${counts.settled} requests settled, ${counts.errors} errors`
    : `${load.settled} requests settled, ${load.errors} errors, ${load.connections} connections`;
  return [
    Math.min(spec.durationMs + spec.timeoutMs, elapsedMs),
    elapsedMs < spec.durationMs || capacity
      ? `${phase}: ${Math.round(Math.min(elapsedMs, spec.durationMs) / 1000)}s/${spec.durationMs / 1000}s, ${figures}`
      : `${phase}: draining: ${inFlight} request${inFlight === 1 ? '' : 's'} ` +
        `in flight (each ends by its timeout, ${spec.timeoutMs / 1000}s after its intended start)`,
  ];
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
    generatorLate: generatorLateness(result),
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
