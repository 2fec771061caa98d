/**
 * The open-loop load generator (docs/design.md, "5. Load, scenarios and verdicts"): requests are due at evenly spaced
 * intended times,
 * t_i = i / ratePerSecond from the start, whatever the target does (k6's constant-arrival-rate);
 * `connections` keep-alive connections carry them, and when a request is due while every one is
 * busy, another opens, up to `maxConnections` (as k6's arrival-rate executors add virtual users),
 * so the generator is not what makes the service look slow. At most MAX_CONNECTING of those
 * on-demand connections are being set up at once, and they open only after the event-loop turn
 * has read the responses already in, and not while the scheduler itself runs late (`grow`).
 * A due request that finds no idle connection waits in a FIFO queue, and its latency still
 * counts from its intended start (wrk2's rule), so a stall shows in the percentiles of every
 * request that was due during it — no coordinated omission. Service time counts from the actual
 * send and TTFB from writing the request.
 *
 *   scheduler ──due i──▶ idle connection? ──yes──▶ send ──▶ response | failure | deadline
 *                           │ no                                                  │
 *                           └──▶ waiting queue ◀── next waiting ◀─────────────────┘ (connection freed)
 *                                    │ after the turn's I/O (setImmediate): not late, below
 *                                    │ maxConnections, < MAX_CONNECTING setting up?
 *                                    └──yes──▶ open one, send the oldest waiting
 *
 * Each request has a deadline, intended start + timeoutMs. Past it the request is a `timeout`
 * whether it was on the wire (the socket is destroyed) or still queued (it is never sent), and it
 * enters the latency distribution at exactly timeoutMs. So the run ends at most about timeoutMs
 * after the last intended start, even against a blackhole.
 *
 * Requests go on the wire in the order they were due (the queue is FIFO and a new request never
 * passes a waiting one), and every deadline is intended start + the same timeout, so the
 * requests in flight are in deadline order too: one timer, armed for the oldest, watches them
 * all, instead of a setTimeout and a clearTimeout per request (at 20,000 req/s those were 40,000
 * timer-list operations a second on the generator's event loop).
 *
 * By default a run happens on the generator thread (generator-thread.ts), not the caller's:
 * runOpenLoop validates here, and the thread runs the same OpenLoopRun (runOnThisThread).
 */
import { threadWakeUps, type Wake } from '../clock/index.js';
import { CancelledError, InputError } from '../kernel/errors.js';
import { HttpConnection, type ExchangeEvents } from './connection.js';
import { runOnGeneratorThread } from './generator-thread.js';
import { LiveCounters } from './live-counters.js';
import { isThreadLoadGauge, threadBusy, type ThreadLoadGauge } from './thread-load.js';
import type { TransportFailure } from './error-class.js';
import { Fifo } from './fifo.js';
import {
  MAX_CONNECTIONS,
  MAX_TIMEOUT_MS,
  requireCount,
  requirePositive,
  resolveTarget,
  type LoadTarget,
} from './options.js';
import { selectPercentiles } from './percentiles.js';
import { buildRequest } from './request.js';
import {
  DEFAULT_EXPECTED_STATUS,
  isExpectedStatus,
  parseExpectedStatus,
  type ExpectedStatus,
} from './expect-status.js';
import {
  createSamples,
  encodeErrorClass,
  summarizeSamples,
  type RequestSamples,
  type SampleSummary,
} from './samples.js';

export interface OpenLoopOptions extends LoadTarget {
  /** Total requests per second over all connections (fault's num_clients × rps). */
  ratePerSecond: number;
  /** Keep-alive connections ready at the start (fault's num_clients). */
  connections: number;
  /** The most connections the run may open when every open one is busy (default `connections`). */
  maxConnections?: number;
  /** Statuses that count as success (default 2xx and 3xx); others are http_5xx or http_status errors. */
  expectedStatus?: ExpectedStatus;
  /** Updated as the run goes, for progress reports (requests in flight while the run drains). */
  live?: LiveCounters;
  /**
   * Where the generator runs (default 'worker'): on the process's generator thread, shared by its
   * runs (generator-thread.ts), so that sending on time and timestamping responses never wait
   * for what else the caller's thread does — a scenario's in-process proxy, an MCP server's
   * messages; or on the 'caller's thread, as bench/load.ts does to compare the two.
   */
  thread?: 'worker' | 'caller';
  /**
   * On the generator thread, also hold back on-demand connections while the caller's thread is
   * over BUSY_NO_GROWTH busy or behind (thread-load.ts): set it when the requests cross that thread (the
   * in-process proxy), whose lateness would otherwise look like a target that needs more
   * connections. On the caller's thread the generator's own loop is that thread: nothing to add.
   */
  watchCallerThread?: boolean;
  /**
   * The load gauge of another thread every request crosses (a proxy hosted on a thread of its
   * own: HostedProxy.load): on-demand connections are held back while that thread is over
   * BUSY_NO_GROWTH busy or its timers run over LATE_NO_GROWTH_MS late, as for watchCallerThread, on
   * either thread the generator runs on.
   */
  watchLoadOf?: ThreadLoadGauge;
  /** Requests are due during [0, durationMs); the run then waits for the last to settle. */
  durationMs: number;
  /** Per request, counted from its intended start. */
  timeoutMs: number;
  /** Aborting stops the run: sockets destroyed, the promise rejects with a CancelledError. */
  signal?: AbortSignal;
  /** Called with each second's figures once all of its requests have settled, in order. */
  onSecond?: (bucket: SecondBucket) => void;
  /**
   * Called when the run's clock starts: after its first `connections` are open (see preconnect),
   * so what is timed against the run starts with it. (From the generator thread the news arrives
   * a little late: what must happen exactly at a moment of the run's clock is an edge, below.)
   * `startedAt` is the moment the clock started, as performance.timeOrigin + performance.now() (the same on every
   * thread): a caller that keeps its own clock starts it from there, not from when the news arrived.
   */
  onStart?: (startedAt: number) => void;
  /**
   * Moments of the run's clock (ms, ascending, within the duration) at which `onEdge(index)` is
   * called, on the caller's thread: a scenario's fault window switches there. No request due at or
   * after an edge is sent before its onEdge has returned (on the generator thread: before the
   * caller's thread has answered), so every request due in a window meets it, whichever thread is
   * busier; requests due meanwhile wait, and their latency still counts from their intended start.
   * An edge is also reached by time alone, with no request due past it, while the run lasts (a
   * window that ends after the last request is due, while the last ones are in flight). An edge at
   * 0 is passed before the clock starts, after the warm requests (warmRequestsPerConnection).
   */
  edgesMs?: readonly number[];
  onEdge?: (index: number) => void | Promise<void>;
  /**
   * Lets the caller end the schedule early (an experiment's abort, once its recovery is judged): requests due from
   * that moment on are never sent, and the result covers [0, that moment) as if it had been the duration.
   */
  scheduleEnd?: ScheduleEnd;
  /**
   * Unmeasured requests sent one after another on each of the run's first `connections` once they
   * are open and before the clock starts (default 0; at most MAX_WARM_REQUESTS): the path the run
   * itself brought up — a proxy's thread and its upstream connections, the target's side of each
   * connection — is then warm when the first measured request goes. They reach the target, are not
   * counted in any figure, and are reported as `warmRequests`. They go before an edge at 0 is
   * passed, so what that edge switches on (a scenario's fault from the start) never meets them.
   */
  warmRequestsPerConnection?: number;
}

/** The requests whose intended start fell in one second of the run. */
export interface SecondBucket {
  /** 0 for [0 s, 1 s) from the start of the run, and so on. */
  second: number;
  requests: number;
  errors: number;
  /** Latency from the intended start, ms; null when the second had no requests. */
  p50Ms: number | null;
  p95Ms: number | null;
  /**
   * How many of the second's requests took at most each of LATENCY_BOUNDS_MS (not cumulative, the
   * last count above the last bound), and their sum: the second's share of a latency histogram.
   */
  latencyCounts?: number[];
  latencySumMs?: number;
}

/** The upper bounds (ms) of SecondBucket.latencyCounts (src/metrics/ serves them as a histogram). */
export const LATENCY_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

export interface OpenLoopResult extends SampleSummary {
  mode: 'open-loop';
  requested: {
    ratePerSecond: number;
    connections: number;
    maxConnections: number;
    durationMs: number;
    timeoutMs: number;
    requests: number;
  };
  /** Unmeasured requests sent before the clock started (OpenLoopOptions.warmRequestsPerConnection) that ended. */
  warmRequests: number;
  /** Connections the run opened (at least `connections`, at most `maxConnections`). */
  connectionsOpened: number;
  /**
   * Sockets opened beyond one per connection: a connection whose socket closed (the target or a
   * fault closed it, or a request timed out on it and the generator dropped it) opens a new one
   * for its next request. Counted from the clock's start: the unmeasured warm requests' reopenings are in no figure.
   */
  connectionsReopened: number;
  /** The most requests on the wire at the same moment: the connections the rate really needed. */
  peakBusyConnections: number;
  /** Requests that left the queue during [0, durationMs), per second of durationMs. */
  achievedRatePerSecond: number;
  /** From the start of the run until the last request settled. */
  elapsedMs: number;
  /**
   * Requests that found every connection busy and could not open one, so waited in the queue:
   * either maxConnections was reached or MAX_CONNECTING on-demand connections were still being set
   * up (a brief wait, usually until the next response frees a connection). A request that got a
   * connection once the generator tried to open one — freed by a response read first, or opened
   * for it — is not counted, nor a wait while growth was put off (growthSkippedLate, or for
   * GROWTH_PATIENCE_MS from when the queue began; that wait shows in the send lag).
   */
  queued: number;
  /** Of `queued`, those that waited with all maxConnections open: only these say the cap limited the run. */
  queuedAtCap: number;
  /** The most on-demand connections being set up at the same moment (never above MAX_CONNECTING). */
  peakConnecting: number;
  /**
   * Times on-demand growth was put off because the generator's scheduler ran more than
   * LATE_NO_GROWTH_MS late or its event loop was over BUSY_NO_GROWTH busy: its own thread (in a
   * scenario shared with the in-process proxy), not the target, was behind. Retried every
   * millisecond.
   */
  growthSkippedLate: number;
  /**
   * Requests the scheduler itself sent more than SENT_LATE_MS after their intended start: its tick
   * ran late (its thread busy, in a scenario shared with the in-process proxy; a fault switch at an
   * edge), not a wait for a free connection, which is the target's doing and is not counted here.
   * Their latency carries this machine's lateness (generatorBehind).
   */
  sentLate: number;
  /** The most the scheduler's tick ran late: now − the intended start of the oldest request it found due. */
  worstTickLateMs: number;
  /** The longest the waiting queue got. */
  maxQueueDepth: number;
  /** Requests that reached their deadline while still queued (counted as timeouts, never sent). */
  notSent: number;
  /** Failures by errno code or message (e.g. ECONNREFUSED, "HTTP 503"), for the error set. */
  errorDetails: Record<string, number>;
  seconds: SecondBucket[];
  samples: RequestSamples;
}

/** A bound on one run's memory: every request keeps a 37-byte sample. */
export const MAX_REQUESTS_PER_RUN = 5_000_000;

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  return runPlanned(planOpenLoop(options), options);
}

/** Validates the options into a plan (InputError naming the argument), before anything is opened. */
export function planOpenLoop(options: OpenLoopOptions): Plan {
  if (options === null || typeof options !== 'object') throw new InputError('options must be an object');
  resolveTarget(options);
  const ratePerSecond = requirePositive('ratePerSecond', options.ratePerSecond);
  const connections = requireCount('connections', options.connections, MAX_CONNECTIONS);
  const maxConnections = requireCount('maxConnections', options.maxConnections ?? connections, MAX_CONNECTIONS);
  if (maxConnections < connections)
    throw new InputError(`maxConnections (${maxConnections}) must be at least connections (${connections})`);
  const durationMs = requirePositive('durationMs', options.durationMs);
  const timeoutMs = requirePositive('timeoutMs', options.timeoutMs, MAX_TIMEOUT_MS);
  const scheduled = (durationMs * ratePerSecond) / 1000;
  // Less than one: the first request (due at 0) would go anyway, at a rate far above the one asked.
  if (scheduled < 1)
    throw new InputError(
      `ratePerSecond × durationMs schedules ${Number(scheduled.toPrecision(3))} ` +
        `requests, less than one; lengthen the duration or raise the rate`,
    );
  const requests = Math.ceil(scheduled);
  if (requests > MAX_REQUESTS_PER_RUN) {
    throw new InputError(
      `ratePerSecond × durationMs schedules ${requests} requests; at ` +
        `most ${MAX_REQUESTS_PER_RUN} per run — lower the rate or the ` +
        `duration`,
    );
  }
  if (options.onSecond !== undefined && typeof options.onSecond !== 'function')
    throw new InputError('onSecond must be a function');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InputError('signal must be an AbortSignal');
  if (options.scheduleEnd !== undefined && !(options.scheduleEnd instanceof ScheduleEnd))
    throw new InputError('scheduleEnd must be a ScheduleEnd');
  if (options.onStart !== undefined && typeof options.onStart !== 'function')
    throw new InputError('onStart must be a function');
  const edgesMs = options.edgesMs ?? [];
  if (
    !Array.isArray(edgesMs) ||
    edgesMs.some(
      (edge, k) => typeof edge !== 'number' || !Number.isFinite(edge) || edge < 0 || (k > 0 && edge < edgesMs[k - 1]!),
    )
  ) {
    throw new InputError('edgesMs must be ascending numbers of ms from the start of the run');
  }
  if (edgesMs.length > 0 && typeof options.onEdge !== 'function')
    throw new InputError('onEdge must be a function when edgesMs is given');
  if (options.live !== undefined && !(options.live instanceof LiveCounters))
    throw new InputError('live must be a LiveCounters');
  if (options.thread !== undefined && options.thread !== 'worker' && options.thread !== 'caller') {
    throw new InputError(`thread must be "worker" or "caller", got ${JSON.stringify(options.thread)}`);
  }
  if (options.watchCallerThread !== undefined && typeof options.watchCallerThread !== 'boolean')
    throw new InputError('watchCallerThread must be true or false');
  if (options.watchLoadOf !== undefined && !isThreadLoadGauge(options.watchLoadOf))
    throw new InputError("watchLoadOf must be a thread load gauge (a HostedProxy's load)");
  const warmRequestsPerConnection = options.warmRequestsPerConnection ?? 0;
  if (
    !Number.isInteger(warmRequestsPerConnection) ||
    warmRequestsPerConnection < 0 ||
    warmRequestsPerConnection > MAX_WARM_REQUESTS
  )
    throw new InputError(`warmRequestsPerConnection must be a whole number from 0 to ${MAX_WARM_REQUESTS}`);
  if (options.signal?.aborted) throw new CancelledError('load run cancelled before it started');
  const expectedStatus = options.expectedStatus ?? parseExpectedStatus(DEFAULT_EXPECTED_STATUS);
  return {
    ratePerSecond,
    connections,
    maxConnections,
    durationMs,
    timeoutMs,
    requests,
    expectedStatus,
    edgesMs: [...edgesMs],
    warmRequestsPerConnection,
  };
}

/** Runs a validated plan (a test sets its `growth` to compare the rules) on the thread `options` names. */
export function runPlanned(plan: Plan, options: OpenLoopOptions): Promise<OpenLoopResult> {
  // Planned earlier: the signal may have aborted since, and an aborted signal fires no more events.
  if (options.signal?.aborted) return Promise.reject(new CancelledError('load run cancelled before it started'));
  return options.thread === 'caller' ? runOnThisThread(plan, options) : runOnGeneratorThread(plan, options);
}

/**
 * Runs a validated plan on the calling thread, holding growth back while any `watched` thread is
 * saturated. The generator thread calls this for each run, with the gauges of the threads the run
 * watches (the caller's, a hosted proxy's).
 */
export function runOnThisThread(
  plan: Plan,
  options: OpenLoopOptions,
  watched: readonly ThreadLoadGauge[] = options.watchLoadOf ? [options.watchLoadOf] : [],
): Promise<OpenLoopResult> {
  const target = resolveTarget(options);
  const run = new OpenLoopRun(plan, options, options.live, watched);
  const request = buildRequest(target);
  return run.execute((events) => new HttpConnection(target, request, events));
}

/** A validated run: what planOpenLoop returns. */
export interface Plan {
  ratePerSecond: number;
  connections: number;
  maxConnections: number;
  expectedStatus: ExpectedStatus;
  durationMs: number;
  timeoutMs: number;
  requests: number;
  /** The schedule's edges (OpenLoopOptions.edgesMs), validated. */
  edgesMs: number[];
  warmRequestsPerConnection: number;
  /**
   * 'deferred' (what runOpenLoop uses): on-demand connections open after the loop turn has read
   * its responses, and not while the generator runs late (`grow`). 'immediate': the rule before
   * the earlier rule — a due request that finds every connection busy opens one at once — kept only so
   * a test (load-open-loop) can show both side by side.
   */
  growth?: 'deferred' | 'immediate';
}

interface Slot {
  connection: HttpConnection;
  /** The request in progress, or -1. */
  request: number;
  sentAtMs: number;
  deadlineAtMs: number;
  ttfbMs: number;
  /** Its index in `slots`, for the in-flight list. */
  index: number;
  /** Opened on demand and its socket not connected yet. */
  connecting: boolean;
  /** While the slot sends its unmeasured warm requests: called as each ends. */
  warming?: () => void;
}

/**
 * On-demand connections being set up at once, at most. Opening one costs far more CPU and time
 * than a response from a fast server, so after an event-loop stall (GC, a busy neighbour) an
 * unbounded rule opens one per overdue request — measured when it was changed: 335 at 5,000 req/s,
 * p99 ×9. With a few in progress, overdue requests wait briefly for whichever connection frees
 * first, while a slow server still gets every connection it needs, four at a time.
 */
export const MAX_CONNECTING = 4;

/**
 * Above this lateness of the scheduler's tick, the generator opens no on-demand connection (see
 * `grow`). Timers normally run 0.1–1.5 ms late; 5 ms is the most the generator may add to p99
 *, so past it the generator, not the target, is what keeps requests waiting.
 */
export const LATE_NO_GROWTH_MS = 5;
/**
 * Above this share of wall time spent running callbacks (event-loop utilisation over the last
 * few tens of milliseconds: see loopBusy), the generator opens no on-demand connection either: its thread — in a
 * scenario also the in-process proxy's — has no time left, so requests wait for it, not for the
 * target, even while each tick is less than LATE_NO_GROWTH_MS late. Measured at 5,000 req/s
 * through the in-process proxy: a run's cold first second opened 300–600 connections (each one
 * three sockets and a setup's CPU on that same thread), and second 0's p95 went to 0.2–0.9 s. A
 * slow target leaves the loop mostly idle while it waits, so it still gets its connections.
 */
export const BUSY_NO_GROWTH = 0.9;
const BUSY_WINDOW_MS = 50;
const BUSY_MIN_SPAN_MS = 10;
/** The longest the run waits for its first connections to open before its clock starts. */
export const PRECONNECT_MAX_MS = 2_000;
/** The most unmeasured warm requests per connection, and how long they may take in all. */
export const MAX_WARM_REQUESTS = 100;
const WARM_MAX_MS = 2_000;
/**
 * A request the scheduler sends more than this after its intended start counts in sentLate: ten times
 * a timer's usual lateness (0.1–1.5 ms), and more than the few ms the target under test usually needs.
 */
export const SENT_LATE_MS = 10;

/**
 * How long requests wait for one of the open connections before the generator opens another (see `grow`), counted
 * from when the waiting queue last started, so at most this much is added to a request that then gets a new one.
 * Requests wait after any stall of the generator, the proxy or the machine, every connection busy with the stalled
 * responses; against a fast target those free up within a millisecond or two of its end, and a connection opened for
 * that backlog arrives after it, costs the threads that were behind its setup (through a proxy, two sockets there and
 * a dial to the target) and stays open for nothing. `faultline run latency --latency 0 --baseline` at 4,000 req/s on
 * 20 connections, on a quiet machine (SCHED_FIFO): 20-82 opened per phase without this wait (9 phases), 20-24 with it
 * (6), p99 the same (0.9-1.4 ms). A target that holds its requests keeps the queue from emptying, and grows as before.
 */
export const GROWTH_PATIENCE_MS = LATE_NO_GROWTH_MS;
/** How soon growth that was put off (LATE_NO_GROWTH_MS) is tried again. */
const GROWTH_RETRY_MS = 1;
/** Wake-ups are asked for this much after a request's time (performance.now() and the service's clock round apart). */
const CLOCK_MARGIN_MS = 0.001;

type ConnectionFactory = (events: ExchangeEvents) => HttpConnection;

/** An early end of a run's schedule, asked by the caller (OpenLoopOptions.scheduleEnd); the earliest asked holds. */
export class ScheduleEnd {
  private readonly listeners = new Set<(atMs: number) => void>();
  /** The moment of the run's clock (ms) from which no request is sent, once asked. */
  atMs: number | undefined;

  end(atMs: number): void {
    if (!Number.isFinite(atMs) || (this.atMs !== undefined && this.atMs <= atMs)) return;
    this.atMs = atMs;
    for (const listener of this.listeners) listener(atMs);
  }

  /** Calls `listener` with each end asked (at once for one already asked); returns what stops it. */
  on(listener: (atMs: number) => void): () => void {
    this.listeners.add(listener);
    if (this.atMs !== undefined) listener(this.atMs);
    return () => this.listeners.delete(listener);
  }
}

class OpenLoopRun {
  private samples: RequestSamples;
  private readonly slots: Slot[] = [];
  private readonly idle = new Fifo<Slot>();
  private readonly waiting = new Fifo<number>();
  /** Requests on the wire in the order sent (= deadline order): pairs of request, slot index. Entries whose slot has
   * moved on are stale and skipped. */
  private readonly inFlight = new Fifo<number>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** Ends of the bounded waits under way before the clock starts (within), which stop() ends at once. */
  private readonly waits = new Set<() => void>();
  private readonly errorDetails = new Map<string, number>();
  /** bucketStart[k] is the first request of second k; bucketStart[seconds] = requests. */
  private readonly bucketStart: number[] = [];
  private readonly bucketSettled: number[] = [];
  private readonly seconds: SecondBucket[] = [];
  private startMs = 0;
  private lastSettledMs = 0;
  private nextDue = 0;
  /** The next of plan.edgesMs to pass, and whether the run is waiting for one's onEdge. */
  private nextEdge = 0;
  private atEdge = false;
  private settled = 0;
  private queued = 0;
  private queuedAtCap = 0;
  private connecting = 0;
  private peakConnecting = 0;
  private maxQueueDepth = 0;
  private notSent = 0;
  private busy = 0;
  private peakBusy = 0;
  private connect: ConnectionFactory | undefined;
  /** Every socket the connections opened, reconnects included. */
  private socketsOpened = 0;
  /** Sockets reopened before the clock started (the warm requests'), which no figure counts. */
  private reopenedUnmeasured = 0;
  /** Unmeasured warm requests that ended before the clock started (warm). */
  private warmRequests = 0;
  /** The wake-up for the next due request (clock/wake-ups.ts). */
  private scheduler: Wake | undefined;
  private growth: NodeJS.Immediate | undefined;
  private growthRetry: NodeJS.Timeout | undefined;
  /** When the waiting queue last went from empty to not (performance.now()); a double from the start (see below). */
  private waitingSinceMs = -0;
  private growthPatience: NodeJS.Timeout | undefined;
  /** How late the scheduler's latest tick ran: now − the intended start of the first request it found due. */
  private lateMs = 0;
  private growthSkippedLate = 0;
  /** Requests the scheduler sent more than SENT_LATE_MS late, and the worst lateness of a tick (the result's). */
  private sentLate = 0;
  private worstTickLateMs = 0;
  /** Event-loop utilisation at the start of the current window, and over the last whole window. */
  private utilizationMark = performance.eventLoopUtilization();
  /**
   * Starts as a double (-0, which reads as 0): V8 lays out a field first set to a small integer as
   * an integer, and the first fraction stored in it changes the layout of every run object, which
   * throws away the generator's optimised hot path mid-run. Only a run that may grow its pool
   * stores one (the warm-up does not), so that was a user's first such run, at its busiest.
   */
  private lastUtilization = -0;
  /** Requests put in the waiting queue since the last `grow`, not yet counted in `queued`. */
  private uncounted = 0;
  private stopped = false;
  private stopEndWatch: (() => void) | undefined;
  private settle: { resolve: (result: OpenLoopResult) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    private plan: Plan,
    private readonly hooks: Pick<OpenLoopOptions, 'signal' | 'onSecond' | 'onStart' | 'onEdge' | 'scheduleEnd'>,
    private readonly live: LiveCounters = new LiveCounters(),
    private readonly watched: readonly ThreadLoadGauge[] = [],
  ) {
    this.samples = createSamples(plan.requests);
    for (let i = 0; i < plan.requests; i++) {
      const offset = this.offsetMs(i);
      this.samples.intendedStartMs[i] = offset;
      const second = Math.floor(offset / 1000);
      while (this.bucketStart.length <= second) this.bucketStart.push(i);
    }
    this.bucketStart.push(plan.requests);
    for (let k = 0; k < this.bucketStart.length - 1; k++) this.bucketSettled.push(0);
  }

  execute(connect: ConnectionFactory): Promise<OpenLoopResult> {
    this.connect = connect;
    // The thread's first run starts the wake-up service's helper thread now, while its
    // connections open, not at its first tick.
    threadWakeUps().prepare();
    for (let k = 0; k < this.plan.connections; k++) this.idle.push(this.openSlot());
    return new Promise<OpenLoopResult>((resolve, reject) => {
      this.settle = { resolve, reject };
      this.hooks.signal?.addEventListener('abort', this.onAbort);
      this.stopEndWatch = this.hooks.scheduleEnd?.on((atMs) => this.endAt(atMs));
      void this.preconnect().then(async () => {
        await this.warm();
        if (this.stopped || !(await this.passEdgesAtZero())) return;
        this.startMs = performance.now();
        this.reopenedUnmeasured = this.socketsOpened - this.slots.length;
        this.utilizationMark = performance.eventLoopUtilization();
        // Outside the executor now: a throw here must fail the run, not escape as an unhandled rejection.
        try {
          this.hooks.onStart?.(performance.timeOrigin + this.startMs);
          this.tick();
        } catch (error) {
          void this.fail(error);
        }
      });
    });
  }

  /**
   * Opens the run's own `connections` before its clock starts, as wrk does: their TCP (and TLS)
   * setup is not what the first requests' latency should carry, and through the in-process proxy
   * each also opens the proxy's upstream connection. Bounded by PRECONNECT_MAX_MS (or the
   * request timeout, if shorter): a target that does not accept by then is left to the requests,
   * which open their sockets again and count the wait from their intended start.
   */
  private async preconnect(): Promise<void> {
    await this.within(
      Promise.all(this.slots.map((slot) => slot.connection.preconnect())),
      Math.min(PRECONNECT_MAX_MS, this.plan.timeoutMs),
    );
  }

  /**
   * Waits for `work` at most `ms`, and no longer than the run: a cancelled run (stop) ends the wait at once, so its
   * bound's timer does not hold the process for up to PRECONNECT_MAX_MS or WARM_MAX_MS after everything else let go.
   */
  private async within(work: Promise<unknown>, ms: number): Promise<void> {
    let bound: NodeJS.Timeout | undefined;
    let end: (() => void) | undefined;
    await Promise.race([
      work,
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, ms);
        end = resolve;
        this.waits.add(end);
      }),
    ]);
    clearTimeout(bound);
    this.waits.delete(end!);
  }

  /**
   * Sends the plan's unmeasured warm requests on each of the run's own connections, one after
   * another, before its clock starts; bounded by WARM_MAX_MS (or the request timeout, if shorter).
   * A connection still in an exchange at the bound drops its socket, so the run starts on idle
   * connections only.
   */
  private async warm(): Promise<void> {
    const perConnection = this.plan.warmRequestsPerConnection;
    if (perConnection === 0 || this.stopped) return;
    const slots = [...this.slots];
    const warmed = slots.map(
      (slot) =>
        new Promise<void>((resolve) => {
          let left = perConnection;
          slot.warming = () => {
            this.warmRequests++;
            if (--left > 0 && !this.stopped) slot.connection.send();
            else {
              slot.warming = undefined;
              resolve();
            }
          };
          slot.connection.send();
        }),
    );
    await this.within(Promise.all(warmed), Math.min(WARM_MAX_MS, this.plan.timeoutMs));
    for (const slot of slots) {
      if (slot.warming === undefined) continue;
      slot.warming = undefined;
      slot.connection.abandon();
    }
  }

  /**
   * Passes the edges at 0 ms before the clock starts, after the warm requests: what an edge at 0
   * switches on (a scenario's fault from the start) meets every measured request and no warm one,
   * and the first requests do not wait for the switch. False when the run failed meanwhile.
   */
  private async passEdgesAtZero(): Promise<boolean> {
    while (!this.stopped && this.plan.edgesMs[this.nextEdge] === 0) {
      try {
        await this.hooks.onEdge?.(this.nextEdge++);
      } catch (error) {
        void this.fail(error);
        return false;
      }
    }
    return !this.stopped;
  }

  /** A new connection slot; its socket opens on its first request (or in preconnect). */
  private openSlot(): Slot {
    const slot: Slot = {
      request: -1,
      sentAtMs: 0,
      deadlineAtMs: 0,
      ttfbMs: NaN,
      index: this.slots.length,
      connecting: false,
      connection: this.connect!({
        onFirstByte: (ttfbMs) => {
          slot.ttfbMs = ttfbMs;
        },
        onConnected: () => this.connected(slot),
        onSocketOpened: () => {
          this.socketsOpened++;
        },
        onResponse: (status, atMs) => this.exchangeEnded(slot, atMs, status, null),
        onFailure: (failure, atMs) => this.exchangeEnded(slot, atMs, 0, failure),
      }),
    };
    this.slots.push(slot);
    this.live.openConnections = this.slots.length;
    return slot;
  }

  /** One more connection, when below maxConnections and fewer than MAX_CONNECTING are being set up. */
  private openOnDemand(): Slot | undefined {
    if (this.slots.length >= this.plan.maxConnections || this.connecting >= MAX_CONNECTING) return undefined;
    const slot = this.openSlot();
    slot.connecting = true;
    this.connecting++;
    if (this.connecting > this.peakConnecting) this.peakConnecting = this.connecting;
    return slot;
  }

  /** The slot's setup ended (connected, or its exchange failed first): room for another. */
  private connected(slot: Slot): void {
    if (!slot.connecting) return;
    slot.connecting = false;
    this.connecting--;
    // Requests that waited only for the setup limit may now get a connection of their own.
    if (this.plan.growth !== 'immediate') {
      if (this.waiting.length > 0) this.scheduleGrowth();
      return;
    }
    while (this.waiting.length > 0 && !this.stopped) {
      const extra = this.openOnDemand();
      if (extra === undefined) break;
      this.release(extra);
    }
  }

  /** Considers opening connections for the waiting requests once this loop turn has read its I/O. */
  private scheduleGrowth(): void {
    if (this.growth === undefined && !this.stopped) this.growth = setImmediate(this.grow);
  }

  /**
   * Opens on-demand connections for the requests still waiting — in the check phase, after the
   * poll phase has read every response already in: a connection whose response sat unread only
   * because the event loop was busy frees up there, so it is not mistaken for a server that needs
   * more connections. And none while the scheduler itself runs more than LATE_NO_GROWTH_MS late:
   * then the generator's own thread (which in a scenario also runs the in-process proxy) is what
   * is behind, and every connection it opens costs that thread more (measured: 950 connections
   * at 10,000 req/s through the in-process proxy, when the responses were waiting for the
   * generator, not the other way round) — nor while the loop is over BUSY_NO_GROWTH busy, which
   * catches the same overload when every tick is only a little late. Waiting requests keep
   * their intended start, so what the delay costs shows in the latency and the send lag.
   */
  private readonly grow = (): void => {
    this.growth = undefined;
    if (this.stopped) return;
    if (this.waiting.length > 0 && (this.lateMs > LATE_NO_GROWTH_MS || this.loopBusy())) {
      // Put off, not given up: try again in a moment, and a retry that itself runs late says the
      // loop is still behind. Meanwhile responses may free connections for the waiting requests.
      this.growthSkippedLate++;
      if (this.growthRetry === undefined) {
        const armedAt = performance.now();
        this.growthRetry = setTimeout(() => {
          this.growthRetry = undefined;
          this.lateMs = performance.now() - armedAt - GROWTH_RETRY_MS;
          this.scheduleGrowth(); // after this turn's poll phase, as always
        }, GROWTH_RETRY_MS);
      }
      return;
    }
    // Not yet: the open connections may free up first (GROWTH_PATIENCE_MS); put off as above, not counted. Only
    // while a connection could be opened: at the cap or the setup limit there is no growth to put off, and the wait
    // is what `queued` and `queuedAtCap` count.
    if (this.waiting.length > 0 && this.canGrow() && this.impatient()) return;
    while (this.waiting.length > 0) {
      const extra = this.openOnDemand();
      if (extra === undefined) break;
      this.release(extra);
    }
    // Requests still waiting that were put in the queue since the last growth now count as
    // queued: neither a response nor a new connection freed a connection for them (the cap or the
    // setup limit held them). The queue is FIFO, so they are its tail.
    const queued = Math.min(this.uncounted, this.waiting.length);
    this.uncounted = 0;
    this.queued += queued;
    if (this.slots.length >= this.plan.maxConnections) this.queuedAtCap += queued;
    this.maxQueueDepth = Math.max(this.maxQueueDepth, this.waiting.length);
  };

  /** Whether openOnDemand would open a connection now. */
  private canGrow(): boolean {
    return this.slots.length < this.plan.maxConnections && this.connecting < MAX_CONNECTING;
  }

  /** Whether the queue has waited less than GROWTH_PATIENCE_MS: then growth is tried again once it has. */
  private impatient(): boolean {
    const left = this.waitingSinceMs + GROWTH_PATIENCE_MS - performance.now();
    if (left <= 0) return false;
    this.growthPatience ??= setTimeout(() => {
      this.growthPatience = undefined;
      this.scheduleGrowth();
    }, left);
    return true;
  }

  /**
   * Whether the event loop ran callbacks more than BUSY_NO_GROWTH of the time lately: over the
   * current window (from the clock's start, then restarted each time it is asked after
   * BUSY_WINDOW_MS) once it is BUSY_MIN_SPAN_MS long, else over the last whole window.
   */
  private loopBusy(): boolean {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.utilizationMark);
    const spanMs = window.idle + window.active;
    // The window so far once it says something (the run's first milliseconds, when its code is
    // still cold, are when growth runs away), else the last whole one.
    const busy = spanMs >= BUSY_MIN_SPAN_MS ? window.utilization : this.lastUtilization;
    if (spanMs >= BUSY_WINDOW_MS) {
      this.lastUtilization = window.utilization;
      this.utilizationMark = now;
    }
    return busy > BUSY_NO_GROWTH || this.watched.some((gauge) => threadBusy(gauge, BUSY_NO_GROWTH, LATE_NO_GROWTH_MS));
  }

  private offsetMs(i: number): number {
    return (i * 1000) / this.plan.ratePerSecond;
  }

  /**
   * Dispatches every request now due, then sleeps until the next one. The wake-up service wakes it
   * about 0.05 ms late, and no more often than every MIN_WAKE_GAP_MS (clock/wake-ups.ts), so at high rates a
   * tick sends a few requests at once; their latency still counts from each one's own intended
   * start.
   */
  private readonly tick = (): void => {
    this.scheduler = undefined;
    if (this.atEdge || this.stopped) return;
    const elapsed = performance.now() - this.startMs;
    const { intendedStartMs } = this.samples;
    const edge = this.plan.edgesMs[this.nextEdge] ?? Infinity;
    if (this.nextDue < this.plan.requests) this.lateMs = elapsed - intendedStartMs[this.nextDue]!;
    if (this.lateMs > this.worstTickLateMs) this.worstTickLateMs = this.lateMs;
    // Requests due before the next edge go now; none due at or after it until it has been passed.
    while (
      this.nextDue < this.plan.requests &&
      intendedStartMs[this.nextDue]! <= elapsed &&
      intendedStartMs[this.nextDue]! < edge
    ) {
      if (elapsed - intendedStartMs[this.nextDue]! > SENT_LATE_MS) this.sentLate++;
      this.dispatch(this.nextDue++);
    }
    if (this.stopped) return;
    if (edge <= elapsed) {
      this.passEdge();
      return;
    }
    const next = Math.min(this.nextDue < this.plan.requests ? intendedStartMs[this.nextDue]! : Infinity, edge);
    // On the service's clock, a hair after the time on this one: rounding between the two must
    // never wake the tick before its request is due (it would find nothing to send).
    if (next !== Infinity)
      this.scheduler = threadWakeUps().after(this.startMs + next - performance.now() + CLOCK_MARGIN_MS, this.tick);
  };

  /**
   * Ends the schedule at `atMs` (ScheduleEnd): the requests due from then on, none of them sent yet, leave the plan,
   * the samples and the seconds, so the run settles with those already sent and reports [0, atMs) as its duration.
   */
  private endAt(atMs: number): void {
    if (this.stopped || atMs >= this.plan.durationMs) return;
    let cut = Math.max(this.nextDue, Math.ceil((atMs * this.plan.ratePerSecond) / 1000));
    while (cut > this.nextDue && this.offsetMs(cut - 1) >= atMs) cut--;
    while (cut < this.plan.requests && this.offsetMs(cut) < atMs) cut++;
    if (cut >= this.plan.requests) return;
    const edgesMs = this.plan.edgesMs.filter((edge) => edge < atMs);
    this.plan = { ...this.plan, requests: cut, durationMs: atMs, edgesMs };
    const trim = <T extends Float64Array | Uint16Array | Uint8Array>(array: T): T => array.subarray(0, cut) as T;
    const { samples } = this;
    this.samples = {
      count: cut,
      intendedStartMs: trim(samples.intendedStartMs),
      latencyMs: trim(samples.latencyMs),
      serviceMs: trim(samples.serviceMs),
      ttfbMs: trim(samples.ttfbMs),
      status: trim(samples.status),
      errorClass: trim(samples.errorClass),
    };
    const seconds = this.bucketStart.findIndex((first) => first >= cut);
    this.bucketStart.length = seconds;
    this.bucketStart.push(cut);
    this.bucketSettled.length = seconds;
    this.closeCompleteSeconds();
    if (this.settled === cut) void this.finish();
  }

  /** Calls onEdge for the edge reached, and goes on once it has returned (or its promise settled). */
  private passEdge(): void {
    const index = this.nextEdge++;
    let waiting: void | Promise<void>;
    try {
      waiting = this.hooks.onEdge?.(index);
    } catch (error) {
      void this.fail(error);
      return;
    }
    if (!(waiting instanceof Promise)) {
      this.tick();
      return;
    }
    this.atEdge = true;
    waiting.then(
      () => {
        this.atEdge = false;
        this.tick();
      },
      (error: unknown) => void this.fail(error),
    );
  }

  private dispatch(i: number): void {
    this.live.dispatched++;
    // Older requests already waiting go first: a new connection takes the oldest, not i.
    const immediate = this.plan.growth === 'immediate';
    const slot =
      this.waiting.length > 0 ? undefined : (this.idle.shift() ?? (immediate ? this.openOnDemand() : undefined));
    if (slot !== undefined) {
      if (!this.start(slot, i)) this.release(slot);
      return;
    }
    if (this.waiting.length === 0) this.waitingSinceMs = performance.now();
    this.waiting.push(i);
    // Here, where the queue grows: a queue that a response empties before `grow` runs (GROWTH_PATIENCE_MS) was
    // as deep all the same.
    if (this.waiting.length > this.maxQueueDepth) this.maxQueueDepth = this.waiting.length;
    if (immediate) {
      this.queued++;
      if (this.slots.length >= this.plan.maxConnections) this.queuedAtCap++;
      const extra = this.openOnDemand();
      if (extra !== undefined) this.release(extra);
      this.maxQueueDepth = Math.max(this.maxQueueDepth, this.waiting.length);
      return;
    }
    this.uncounted++;
    this.scheduleGrowth();
  }

  /**
   * Sends request i on the slot's connection; false (and a timeout recorded) when it is already
   * past its deadline. With one timeout for all and a FIFO queue, a connection frees up by the
   * deadline of the request it carried, which is never later than the waiting ones' — so this
   * happens only when the event loop ran late.
   */
  private start(slot: Slot, i: number): boolean {
    const now = performance.now();
    const deadlineAt = this.startMs + this.samples.intendedStartMs[i]! + this.plan.timeoutMs;
    if (now >= deadlineAt) {
      this.notSent++;
      this.record(i, this.plan.timeoutMs, NaN, NaN, 0, {
        errorClass: 'timeout',
        detail: 'timed out waiting for a free connection',
      });
      return false;
    }
    slot.request = i;
    slot.sentAtMs = now;
    slot.deadlineAtMs = deadlineAt;
    slot.ttfbMs = NaN;
    this.inFlight.push(i);
    this.inFlight.push(slot.index);
    if (this.deadlineTimer === undefined) this.deadlineTimer = setTimeout(this.onDeadline, deadlineAt - now);
    this.busy++;
    if (this.busy > this.peakBusy) this.peakBusy = this.busy;
    slot.connection.send();
    return true;
  }

  /** The slot's connection is free: it takes the oldest waiting request still worth sending. */
  private release(slot: Slot): void {
    if (this.stopped) return;
    for (let i = this.waiting.shift(); i !== undefined; i = this.waiting.shift()) {
      if (this.start(slot, i)) return;
    }
    this.idle.push(slot);
  }

  /** The in-flight entry at the front, or undefined; drops entries whose request already ended. */
  private oldestInFlight(): Slot | undefined {
    for (;;) {
      const i = this.inFlight.peek(0);
      if (i === undefined) return undefined;
      const slot = this.slots[this.inFlight.peek(1)!]!;
      if (slot.request === i) return slot;
      this.inFlight.shift();
      this.inFlight.shift();
    }
  }

  /** Times out every request in flight whose deadline has come, then waits for the next one's. */
  private readonly onDeadline = (): void => {
    this.deadlineTimer = undefined;
    if (this.stopped) return;
    for (let slot = this.oldestInFlight(); slot !== undefined; slot = this.oldestInFlight()) {
      const now = performance.now();
      // Node timers count from the event loop's cached, whole-millisecond clock, so they can
      // fire up to ~1 ms early: a response may still arrive in time.
      if (now < slot.deadlineAtMs) {
        // A queued request sent by an earlier iteration of this loop (a timeout freed its
        // connection) may have armed a timer for its own, later deadline: replace it, or it
        // would be left running, unowned, past the end of the run.
        clearTimeout(this.deadlineTimer);
        this.deadlineTimer = setTimeout(this.onDeadline, slot.deadlineAtMs - now);
        return;
      }
      slot.connection.abandon();
      this.exchangeEnded(slot, now, 0, { errorClass: 'timeout', detail: 'timed out waiting for the response' });
      if (this.stopped) return;
    }
  };

  private exchangeEnded(slot: Slot, atMs: number, status: number, failure: TransportFailure | null): void {
    if (slot.warming !== undefined) {
      slot.warming();
      return;
    }
    const i = slot.request;
    if (this.stopped || i < 0) return;
    this.connected(slot); // a failed or timed-out setup ends the attempt too
    slot.request = -1;
    this.oldestInFlight(); // drops the ended front entries, so the list stays as long as the requests in flight
    this.busy--;
    if (atMs >= slot.deadlineAtMs) {
      // Whatever ended it, the deadline came first (the event loop ran the timer late).
      const serviceMs = slot.deadlineAtMs - slot.sentAtMs;
      this.record(i, this.plan.timeoutMs, serviceMs, slot.ttfbMs, 0, {
        errorClass: 'timeout',
        detail: 'timed out waiting for the response',
      });
      this.release(slot);
      return;
    }
    const latencyMs = atMs - this.startMs - this.samples.intendedStartMs[i]!;
    const serviceMs = atMs - slot.sentAtMs;
    if (failure !== null) {
      this.record(i, latencyMs, serviceMs, slot.ttfbMs, 0, failure);
    } else if (!isExpectedStatus(this.plan.expectedStatus, status)) {
      const errorClass = status >= 500 && status <= 599 ? 'http_5xx' : 'http_status';
      this.record(i, latencyMs, serviceMs, slot.ttfbMs, status, { errorClass, detail: `HTTP ${status}` });
    } else {
      this.record(i, latencyMs, serviceMs, slot.ttfbMs, status, null);
    }
    this.release(slot);
  }

  /** Records request i's outcome; serviceMs is NaN when it was never sent. */
  private record(
    i: number,
    latencyMs: number,
    serviceMs: number,
    ttfbMs: number,
    status: number,
    failure: TransportFailure | null,
  ): void {
    const { samples } = this;
    samples.latencyMs[i] = latencyMs;
    samples.serviceMs[i] = serviceMs;
    samples.ttfbMs[i] = ttfbMs;
    samples.status[i] = status;
    samples.errorClass[i] = encodeErrorClass(failure?.errorClass ?? null);
    if (failure !== null) {
      this.errorDetails.set(failure.detail, (this.errorDetails.get(failure.detail) ?? 0) + 1);
      this.live.errors++;
    }
    this.lastSettledMs = Math.max(this.lastSettledMs, this.startMs + samples.intendedStartMs[i]! + latencyMs);
    this.settled++;
    this.live.settled = this.settled;
    const second = Math.floor(samples.intendedStartMs[i]! / 1000);
    this.bucketSettled[second]!++;
    this.closeCompleteSeconds();
    if (this.settled === this.plan.requests) void this.finish();
  }

  /** Emits, in order, each second whose requests have all settled. */
  private closeCompleteSeconds(): void {
    while (this.seconds.length < this.bucketSettled.length) {
      const k = this.seconds.length;
      const first = this.bucketStart[k]!;
      const end = this.bucketStart[k + 1]!;
      if (this.bucketSettled[k]! < end - first) return;
      // Selection, not a sort: this runs mid-run on the generator's own event loop.
      const [p50, p95] = selectPercentiles(this.samples.latencyMs.subarray(first, end), [50, 95]);
      let errors = 0;
      for (let i = first; i < end; i++) if (this.samples.errorClass[i] !== 0) errors++;
      const empty = end === first;
      const latencyCounts = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
      let latencySumMs = 0;
      for (let i = first; i < end; i++) {
        const ms = this.samples.latencyMs[i]!;
        latencySumMs += ms;
        const index = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound);
        latencyCounts[index === -1 ? LATENCY_BOUNDS_MS.length : index]!++;
      }
      const bucket: SecondBucket = {
        second: k,
        requests: end - first,
        errors,
        p50Ms: empty ? null : p50!,
        p95Ms: empty ? null : p95!,
        latencyCounts,
        latencySumMs,
      };
      this.seconds.push(bucket);
      if (this.hooks.onSecond !== undefined) {
        try {
          this.hooks.onSecond(bucket);
        } catch (error) {
          void this.fail(error);
          return;
        }
      }
    }
  }

  private readonly onAbort = (): void => {
    void this.fail(new CancelledError('load run cancelled'));
  };

  private async finish(): Promise<void> {
    if (this.stopped) return;
    await this.stop();
    this.settle?.resolve(this.result());
  }

  private async fail(error: unknown): Promise<void> {
    if (this.stopped) return;
    await this.stop();
    this.settle?.reject(error);
  }

  /** Stops scheduling, clears every timer and waits until every socket has closed. */
  private async stop(): Promise<void> {
    this.stopped = true;
    for (const end of this.waits) end();
    this.hooks.signal?.removeEventListener('abort', this.onAbort);
    this.stopEndWatch?.();
    threadWakeUps().cancel(this.scheduler);
    this.scheduler = undefined;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    clearImmediate(this.growth);
    this.growth = undefined;
    clearTimeout(this.growthRetry);
    this.growthRetry = undefined;
    clearTimeout(this.growthPatience);
    this.growthPatience = undefined;
    await Promise.all(this.slots.map((slot) => slot.connection.close()));
  }

  private result(): OpenLoopResult {
    const { samples, plan } = this;
    let sentDuringRun = 0;
    for (let i = 0; i < samples.count; i++) {
      const serviceMs = samples.serviceMs[i]!;
      // Sent at intended start + send lag, and send lag = latency − service time.
      if (!Number.isNaN(serviceMs) && samples.intendedStartMs[i]! + samples.latencyMs[i]! - serviceMs < plan.durationMs)
        sentDuringRun++;
    }
    return {
      mode: 'open-loop',
      requested: {
        ratePerSecond: plan.ratePerSecond,
        connections: plan.connections,
        maxConnections: plan.maxConnections,
        durationMs: plan.durationMs,
        timeoutMs: plan.timeoutMs,
        requests: plan.requests,
      },
      warmRequests: this.warmRequests,
      connectionsOpened: this.slots.length,
      connectionsReopened: Math.max(0, this.socketsOpened - this.slots.length - this.reopenedUnmeasured),
      peakBusyConnections: this.peakBusy,
      achievedRatePerSecond: sentDuringRun / (plan.durationMs / 1000),
      elapsedMs: this.lastSettledMs - this.startMs,
      queued: this.queued,
      queuedAtCap: this.queuedAtCap,
      peakConnecting: this.peakConnecting,
      growthSkippedLate: this.growthSkippedLate,
      sentLate: this.sentLate,
      worstTickLateMs: this.worstTickLateMs,
      maxQueueDepth: this.maxQueueDepth,
      notSent: this.notSent,
      errorDetails: Object.fromEntries(this.errorDetails),
      ...summarizeSamples(samples),
      seconds: this.seconds,
      samples,
    };
  }
}
