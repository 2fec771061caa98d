/**
 * What a scenario run returns: every number the markdown report shows, as plain JSON (the MCP
 * tools' structuredContent and `faultline run --json`). Times are milliseconds (µs resolution)
 * unless a name says otherwise; "latency" is always counted from the request's intended start.
 */
import type { ResolvedHttpFault } from '../proxy/http/index.js';
import type { CapacityResult, GeneratorLateness, SampleSummary, Stats } from '../load/index.js';
import type { ProxyCounters, ResolvedFault } from '../proxy/index.js';
import type { SlosSentOnTime } from './late-sent.js';
import type { SloResult } from './slo.js';
import type { Strategy } from './input.js';
import type { Verdict } from './verdict.js';

export interface PercentileRow {
  /** 25, 50, 75, 95, 99. */
  percentile: number;
  latencyMs: number;
  /** Requests whose latency is at or under latencyMs. */
  requests: number;
  /** The same, as a percentage of all requests. */
  percentOfTotal: number;
}

export interface TimelineSecond {
  /** Second of the run the requests were due in (by intended start, not by when they ended): 0 is [0 s, 1 s). */
  second: number;
  requests: number;
  errors: number;
  p50Ms: number | null;
  p95Ms: number | null;
  /** Whether the fault was active during any part of this second. */
  faultActive: boolean;
}

/**
 * The open-loop figures of one phase: the load generator's summary (counts, errors by class,
 * status codes, latency / service time / TTFB / send-lag stats, see load/samples.ts) and more.
 */
export interface LoadFigures extends SampleSummary {
  /** Failures by errno code or message (ECONNREFUSED, "HTTP 503", …). */
  errorDetails: Record<string, number>;
  percentiles: PercentileRow[];
  targetRatePerSecond: number;
  achievedRatePerSecond: number;
  /** From the start of the load until its last request settled. */
  elapsedMs: number;
  /**
   * Requests that waited for a free connection: every open one was busy and none could open
   * (max_connections reached, or 4 on-demand connections already being set up).
   */
  queued: number;
  /** The most connections the load could open. */
  maxConnections: number;
  /** Unmeasured requests sent before the clock started, to warm the path the phase brought up (in no figure). */
  warmRequests?: number;
  /**
   * The warm-up of faultline's own generator and proxy that ran in this process before this phase (now or for an
   * earlier run; scenario/warm-up.ts): open-loop load at this rate, for this long, to a sink of its own on loopback
   * (never the target), and the requests it sent: paced at that rate, and the warm ones each of its connections sent as
   * it opened. Absent when it failed: the phase then started cold.
   */
  processWarmUp?: { ratePerSecond: number; durationMs: number; requests: number; connectionRequests: number };
  /** Connections the load opened (num_clients at the start, more on demand). */
  connectionsOpened: number;
  /** Times a connection opened a new socket after its last one closed (the target or a fault closed it, or a request
   * timed out on it), from the clock's start: the warm requests' reopenings are in no figure. */
  connectionsReopened: number;
  /** The most requests on the wire at once: the connections the rate needed. */
  peakBusyConnections: number;
  /**
   * The load generator's own lateness (load/generator-behind.ts): requests faultline sent late because its own
   * thread was behind, not because they waited for a connection. When `behind`, the verdict's reasons name the phase.
   */
  generatorLate?: GeneratorLateness;
  /** Requests whose deadline came while still queued (timeouts, never sent). */
  notSent: number;
  /**
   * Set when the connections limited the run (requests waited at the max_connections cap): the share
   * that waited, the median wait, and the connections the rate needs (rate × mean service time).
   */
  saturation: { waitedPercent: number; waitP50Ms: number; connectionsNeeded: number } | null;
  timeline: TimelineSecond[];
  /** The requests due while the fault was active, when it was active for only part of the run. */
  duringFault: { fromMs: number; toMs: number; requests: number; errors: number; latency: Stats | null } | null;
}

export interface PhaseResult {
  phase: 'baseline' | 'fault';
  startedAt: string;
  endedAt: string;
  /** Open-loop figures (strategy "load"). */
  load: LoadFigures | null;
  /** Closed-loop figures (strategy "capacity"). */
  capacity: CapacityResult | null;
  slos: SloResult[];
  /**
   * Set when the SLOs were judged over the requests due in a fault window shorter than the run (as an experiment
   * judges a window), not over the whole phase, whose figures the report still gives: the window and its requests.
   */
  slosWindow?: { fromMs: number; toMs: number; requests: number } | null;
  /**
   * Set when the load generator ran behind and a latency SLO failed: those SLOs judged again without the requests
   * sent late (late-sent.ts); one that then holds makes the verdict inconclusive.
   */
  slosSentOnTime?: SlosSentOnTime;
  /** SLOs that could not be evaluated: latency SLOs in a closed-loop (capacity) run. */
  slosNotEvaluated: string[];
  /** Every evaluated SLO passed. */
  passed: boolean;
  /** The proxy's counters for this phase (each phase has its own proxy). */
  proxy: ProxyCounters;
  /** The ports the proxy listened on, in mapping order. */
  proxyPorts: number[];
  /**
   * Why the proxy could not reach a target, by errno code (ECONNREFUSED, ENOTFOUND, …). The load
   * sees these as resets: the proxy had accepted the connection, then closed it.
   */
  targetConnectFailures: Record<string, number>;
}

export interface ImpactRow {
  metric: string;
  unit: 'ms' | '%' | 'req/s';
  baseline: number | null;
  fault: number | null;
  /** fault − baseline. */
  change: number | null;
  /** fault / baseline, when the baseline is not 0. */
  ratio: number | null;
}

export interface ScenarioResult {
  title: string;
  url: string;
  method: string;
  /** Header names and values, with credentials masked. */
  headers: Record<string, string>;
  hasBody: boolean;
  timeoutMs: number;
  strategy: {
    type: Strategy;
    durationMs: number;
    clients: number;
    rps: number;
    ratePerSecond: number;
    /** Connections open on demand up to this many. */
    maxConnections: number;
    /** Statuses that counted as success, e.g. "2xx,3xx". */
    expectStatus: string;
  };
  fault: {
    /** A network fault's type, or `http_<type>` for an HTTP fault. */
    type: ResolvedFault['type'] | `http_${ResolvedHttpFault['type']}`;
    settings: ResolvedFault | ResolvedHttpFault;
    /** fault's description string (see report/fault-text.ts). */
    description: string;
    startMs: number;
    /** The end of the window asked for (at most the load's duration). */
    endMs: number;
    /**
     * When the fault really stopped acting: endMs when it ended before the load; when it lasted
     * to the end of the load, the moment the last request settled (it stays on while they drain);
     * startMs when it was never switched on.
     */
    activeUntilMs: number;
    /**
     * Whether the fault was ever on: false when every request had settled before fault_start
     * (the last one was due before the window opened), so no request could meet it.
     */
    switchedOn: boolean;
    seed: number | string;
  };
  /** The mappings the proxy served ("0=tcp://host:port" in front of url when none were given). */
  proxies: string[];
  /** Load went through the proxy (no proxies given), or straight to url (proxies given). */
  routedThroughProxy: boolean;
  /** What the load and the proxy were allowed to dial: "loopback only", "loopback, 10.0.0.0/8". */
  targets: string;
  /** Arguments given that belong to other fault types, ignored. */
  ignoredArguments: string[];
  startedAt: string;
  endedAt: string;
  baseline: PhaseResult | null;
  run: PhaseResult;
  impact: ImpactRow[];
  /**
   * Set when the load generator ran behind in a phase (LoadFigures.generatorLate): the impact rows then compare this
   * machine's lateness as much as the target, and the comparison is inconclusive (the verdict's caveats say so).
   */
  impactWarning?: string | null;
  /**
   * failed: an SLO failed; inconclusive: the fault could not have touched what was measured (no
   * connection through a mapped port, or the fault never acted while active), or a failed latency SLO
   * holds without the requests the generator sent late; passed otherwise.
   */
  verdict: Verdict;
  /** Why the verdict is what it is, with what to do: the report's first lines. */
  verdictReasons: string[];
  /** What to bear in mind that did not decide the verdict (the load generator ran behind): said after the reasons. */
  verdictCaveats: string[];
  /** verdict === 'passed'. */
  passed: boolean;
}
