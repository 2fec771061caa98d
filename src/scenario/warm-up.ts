/**
 * Warms faultline's own load and proxy code once per process, before its first measured run.
 *
 * A fresh process runs the generator's and the proxy's JavaScript cold (interpreted, then
 * compiled as it gets hot), and at thousands of requests a second that shows in the report as
 * the target's latency: measured at 5,000 req/s through the in-process proxy, second 0's p95 was
 * 50–250 ms where the following seconds had 3–6 ms. So before the first phase of the first
 * scenario, a short open-loop run goes through a proxy (no fault) to a sink on loopback in this
 * process — never to the user's target, whose state and logs it must not touch. The same code
 * (connection, response parser, scheduler, proxy links) then runs warm when the clock starts
 * (`faultline run` at 5,000 req/s, three interleaved runs on a loaded machine: second 0's p95
 * 89–346 ms without the warm-up, 45–141 ms with it; cost ~0.6 s once per process, ~1 s with the
 * second pass below). Since the generator runs on a thread of its own, that thread's code starts
 * cold in a fresh isolate and needs the longer warm-up: `faultline run` at 5,000 req/s, 10
 * interleaved CLI runs each, second 0's p95 (median) was 11.6 ms with the generator on the
 * proxy's thread and a 250 ms warm-up, 19.9 on its own thread with 250 ms, and 9.4 on its own
 * thread with 600 ms. The proxy, too, runs on a kept thread of its own (proxy-host/): the
 * warm-up's proxy is hosted there, as a scenario's is, with a latency fault of 0 for the second
 * half (a faulted link runs other code).
 *
 * What it cannot warm is what each phase brings up: its own proxy, connections and the target's
 * side of them. A phase warms those itself (WARM_REQUESTS_PER_CONNECTION, experiment/runner.ts)
 * before its fault and its clock start. Measured with every process of the run under SCHED_FIFO
 * (the machine was at load 12-17, so that is the nearest to a quiet one), `faultline run latency
 * --latency 0 --baseline` at 4,000 req/s: the fault phase's first second went from p95 6-31 ms
 * to 0.6-1.8 ms. The first phase of a process still had 4-20 ms: V8 compiled 60-80 functions of
 * the hot path again in it (`--trace-opt`), whether the warm-up lasted 0.6 or 1.5 s or ran at
 * 10,000 req/s, and on 2 cores those compiles compete with the load; the second phase compiled
 * 16-20.
 *
 * Why "again": the warm-up's own edge and end (a tick that passes an edge, the schedule's last
 * request, the last exchanges, a fresh run's queues) run branches the hot functions had never
 * seen, and V8 throws their optimised code away there (`--trace-deopt`: tick, start,
 * exchangeEnded, oldestInFlight, closeCompleteSeconds...), after which nothing calls them until
 * the first phase, which pays for compiling them again in its first few hundred milliseconds:
 * `perf sched` showed V8's compiler threads taking 20-55 ms of each 100 ms of the machine there,
 * against 0-9 in the second phase. A second, shorter pass (WARM_UP_AGAIN_MS, fresh connections,
 * the fault cleared: what a first phase brings up) has that recompiled with the feedback of a
 * whole run. Measured under SCHED_FIFO at load ~11, `faultline run latency
 * --latency 0 --baseline` at 4,000 req/s, two runs each: the baseline phase compiled 70-71
 * functions with one pass and 30-35 with the second (the fault phase 12-18 either way), and
 * its first second's p95 went from 1.1 ms to 0.6-0.7 (the fault phase's), its p99 from 2.0-2.4
 * ms to 0.9-1.2. 0.6 s + 0.25 s or 0.4 s + 0.3 s compiled 38-44; a longer single pass does not
 * help, as said above.
 *
 * Sized to the run: it runs at five times the run's own rate (WARM_UP_RATE_FACTOR, why there), from 20 up to the
 * 4,000 req/s all the figures above were measured at, so a 10 req/s run pays ~50 requests, not 4,000 (a start of
 * `faultline run` at 10 req/s: ~0.9 s of CPU, against ~2.0 s warmed at 4,000). A later, faster run in the same
 * process (the MCP server's) is warmed again at its rate, unless another run measures; a slower one finds its path
 * warm. The report says the rate, the length and the requests it sent (`processWarmUp`).
 *
 * Best effort: a warm-up that fails only leaves the run cold, so its error is swallowed; it is
 * bounded (WARM_UP_MS + WARM_UP_AGAIN_MS of load, short drains) and stops everything it started
 * before resolving. Concurrent scenarios share one warm-up. It is cancelled when every scenario
 * waiting for it has been cancelled — then the last of them returns only once it has stopped, so
 * a cancelled call leaves no socket behind — and the next scenario warms up again.
 */
import net from 'node:net';
import { DEFAULT_EXPECTED_STATUS, LiveCounters, parseExpectedStatus, runOpenLoop } from '../load/index.js';
import { startHostedProxy, type HostedProxy } from '../proxy-host/index.js';
import type { TargetAllowance } from '../target-policy.js';

/**
 * A run is warmed at five times its own rate, so the warm-up's 1 s carries as many requests as the run's first 5 s:
 * V8 compiles a function once it has run so many times, and what those seconds would have compiled (mid-run, where
 * each compile competes with the load on 2 cores), the warm-up compiled. `faultline run latency --latency 0
 * --baseline`, 20 clients, interleaved with a 4,000 req/s warm-up, under SCHED_FIFO at load ~10: second 0's p95 was
 * the same in every variant tried, at 200 and at 500 req/s (1.0–1.3 ms), but the phases' p99 rose with less warm-up.
 * At 500 req/s warmed at 500 (5 pairs), the fault phase's median p99 was 4.3 ms against 2.2, and warmed at 1,000,
 * 2.0. At 200 req/s (4 pairs each), warmed at 400: 8.0 / 8.3 ms (baseline / fault phase) against 3.2 / 3.2; warmed
 * at 1,000: 2.6 / 4.5 against 2.3 / 2.9 (stalls of 15–30 ms in some seconds of either side make these loose).
 */
const WARM_UP_RATE_FACTOR = 5;
/** The fastest warm-up: a run's load above half of it is warmed at this rate (the figures above were measured so). */
export const WARM_UP_MAX_RATE = 4_000;
/**
 * The slowest: each pass schedules at least a few requests beyond the warm ones, so a 1 req/s run still warms
 * the paths its own requests take (a scheduler tick, a measured exchange, a second's bucket).
 */
const WARM_UP_MIN_RATE = 20;
const WARM_UP_MS = 600;
/** The second pass, on fresh connections through the same proxy with no fault (why: above). */
const WARM_UP_AGAIN_MS = 400;
const WARM_UP_CONNECTIONS = 8;
/** Room to grow, as a scenario's load has: the on-demand path is warmed too when requests wait. */
const WARM_UP_MAX_CONNECTIONS = 16;
/** The sink is on loopback, which the default policy allows; a scenario passes its policy the same way. */
const SINK_TARGETS: TargetAllowance = { allowRemoteTargets: false, allowTargets: [] };

/**
 * Unmeasured requests per connection before an open-loop phase's clock starts (experiment/runner.ts): each of the
 * phase's first connections then has carried an exchange through every hop the phase brought up (the
 * proxy's client and upstream sockets, the target's side), so the first measured requests do not pay
 * for setting them up. They pass before the fault from the start is switched on (an edge at 0), so no
 * fault meets them and no fault counter counts them; they reach the target, and the report says how
 * many there were (`warmRequests`). The warm-up sends them too.
 */
export const WARM_REQUESTS_PER_CONNECTION = 2;
const RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
/** A fault that changes nothing, so the faults' path runs (warmUp). */
const WARM_UP_FAULT = { type: 'latency', latencyMs: 0 } as const;

/** A warm-up's load: its rate and its length (both passes), to a sink of its own. */
export interface WarmUpPlan {
  readonly ratePerSecond: number;
  readonly durationMs: number;
}

/**
 * What a warm-up ran: its plan, the paced requests it sent that ended, and the warm ones each of its connections sent
 * as it opened, before each pass's clock started (WARM_REQUESTS_PER_CONNECTION).
 */
export interface WarmUp extends WarmUpPlan {
  readonly requests: number;
  readonly connectionRequests: number;
}

/** The requests of one pass or of the whole warm-up, as WarmUp counts them. */
type WarmCount = Pick<WarmUp, 'requests' | 'connectionRequests'>;

/** The warm-up a run at `ratePerSecond` (all clients together) gets: at five times its rate, within the bounds above. */
export function warmUpFor(ratePerSecond: number): WarmUpPlan {
  const rate = Math.min(WARM_UP_MAX_RATE, Math.max(WARM_UP_MIN_RATE, Math.ceil(ratePerSecond * WARM_UP_RATE_FACTOR)));
  return { ratePerSecond: Number.isFinite(rate) ? rate : WARM_UP_MAX_RATE, durationMs: WARM_UP_MS + WARM_UP_AGAIN_MS };
}

/** The fastest warm-up this process finished: a run at its rate or below finds its path warm. */
let warmed: WarmUp | undefined;
/** A warm-up failed: runs stay cold (best effort), and none is tried again. */
let failed = false;

/** The warm-up under way, and how many callers wait for it. */
interface Running {
  readonly warmUp: WarmUpPlan;
  readonly done: Promise<void>;
  readonly controller: AbortController;
  waiting: number;
}
let running: Running | undefined;

/**
 * Resolves once this process's load and proxy code have been warmed at the rate of a run at `ratePerSecond`
 * (warmUpFor; a warm-up at that rate or faster, done or under way, is shared), with the warm-up that did it; or
 * at once when `signal` aborts, with undefined (as when a warm-up failed): never rejects. A caller whose signal
 * aborts stops the warm-up if no other caller still waits for it, and then resolves after it has stopped.
 *
 * `othersMeasuring`: another run of this process is measuring (src/measuring.ts). A warm-up already done, at any
 * rate, is then taken as it is: a faster one (up to 4,000 req/s for 1 s on 2 cores) would land in that run's
 * figures. The caller's report says the rate it got.
 */
export async function warmUpOnce(
  signal?: AbortSignal,
  ratePerSecond: number = WARM_UP_MAX_RATE,
  othersMeasuring: () => boolean = () => false,
): Promise<WarmUp | undefined> {
  const wanted = warmUpFor(ratePerSecond);
  // A slower warm-up under way is waited for, then a faster one runs: what is warmed is what this run will meet.
  for (;;) {
    if (warmed !== undefined && (warmed.ratePerSecond >= wanted.ratePerSecond || othersMeasuring())) return warmed;
    if (failed || signal?.aborted) return undefined;
    if (running !== undefined && running.warmUp.ratePerSecond < wanted.ratePerSecond) {
      if (!(await join(running, signal))) return undefined;
      continue;
    }
    running ??= startWarmUp(wanted);
    if (!(await join(running, signal))) return undefined;
  }
}

/** Waits for `run`: true once it ended, false when `signal` aborted first (stopping it if no one else waits). */
async function join(run: Running, signal: AbortSignal | undefined): Promise<boolean> {
  run.waiting++;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    if ((await Promise.race([run.done, aborted])) !== 'aborted') return true;
    if (run.waiting > 1) return false; // another scenario still needs it: it goes on, that one's to stop
    run.controller.abort();
    await run.done;
    return false;
  } finally {
    signal?.removeEventListener('abort', onAbort!);
    run.waiting--;
  }
}

function startWarmUp(warmUp: WarmUpPlan): Running {
  const controller = new AbortController();
  const done = runWarmUp(warmUp, controller.signal).then(
    (count) => {
      if (warmed === undefined || warmed.ratePerSecond < warmUp.ratePerSecond) warmed = { ...warmUp, ...count };
    },
    // A failure leaves runs cold and is not retried; a cancelled warm-up is, by the next scenario.
    () => void (failed ||= !controller.signal.aborted),
  );
  const run: Running = { warmUp, done, controller, waiting: 0 };
  void done.finally(() => {
    if (running === run) running = undefined;
  });
  return run;
}

/** Runs the warm-up's two passes; resolves with the requests they sent that ended. */
async function runWarmUp({ ratePerSecond }: WarmUpPlan, signal: AbortSignal): Promise<WarmCount> {
  const sink = await startSink();
  try {
    signal.throwIfAborted();
    // On the proxy thread, as a scenario's proxy: that thread's code is what must be warm. Every option
    // below is one a scenario's phase gives (run.ts), so the warm code was compiled for objects of
    // the phase's shapes: V8 throws optimised code away when it meets an object of another shape, and
    // that had the first phase of a process run its first few hundred milliseconds on slow code.
    const proxy = await startHostedProxy({
      mappings: [`0=http://127.0.0.1:${sink.port}`],
      seed: 0,
      onEvent: () => {},
      tls: { rejectUnauthorized: true },
      targets: SINK_TARGETS,
      // Its only fault is a latency of 0 toward its own sink: the production guard has nothing to refuse.
      allowProduction: true,
    });
    try {
      // The second half of the first pass through a latency fault of 0, switched on at an edge as a
      // scenario's fault is: a link with a fault runs other code than a bare one (each chunk queued,
      // shaped by its stages and timed, and the thread's wake-up helper started), and a scenario's
      // fault phase runs it from its first request. The second pass, on fresh connections with no
      // fault, is a first phase's path again (why: above).
      const first = await warmPass(sink.port, proxy, ratePerSecond, WARM_UP_MS, [WARM_UP_MS / 2], signal);
      await proxy.setFaults([]);
      const again = await warmPass(sink.port, proxy, ratePerSecond, WARM_UP_AGAIN_MS, [], signal);
      return {
        requests: first.requests + again.requests,
        connectionRequests: first.connectionRequests + again.connectionRequests,
      };
    } finally {
      await proxy.stop();
    }
  } finally {
    await sink.close();
  }
}

/** One open-loop run of `durationMs` through `proxy` to the sink, on connections of its own; the fault goes on at
 * each edge. Resolves with the requests it sent that ended, paced and opening its connections. */
async function warmPass(
  sinkPort: number,
  proxy: HostedProxy,
  ratePerSecond: number,
  durationMs: number,
  edgesMs: number[],
  signal: AbortSignal,
): Promise<WarmCount> {
  signal.throwIfAborted();
  const result = await runOpenLoop({
    url: `http://127.0.0.1:${sinkPort}/`,
    method: 'GET',
    body: '',
    headers: {},
    tls: { rejectUnauthorized: true },
    targets: SINK_TARGETS,
    connectTo: { host: '127.0.0.1', port: proxy.ports[0]! },
    ratePerSecond,
    connections: WARM_UP_CONNECTIONS,
    maxConnections: WARM_UP_MAX_CONNECTIONS,
    expectedStatus: parseExpectedStatus(DEFAULT_EXPECTED_STATUS),
    durationMs,
    timeoutMs: 1_000,
    signal,
    live: new LiveCounters(),
    watchLoadOf: proxy.load,
    warmRequestsPerConnection: WARM_REQUESTS_PER_CONNECTION,
    edgesMs,
    onEdge: () => proxy.setFaults([WARM_UP_FAULT]),
    onSecond: () => {},
  });
  return { requests: result.requests, connectionRequests: result.warmRequests };
}

/** A loopback server that answers every request head it reads with a tiny 200 (GET, no body). */
async function startSink(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      const text = pending + chunk.toString('latin1');
      let requests = 0;
      let consumed = 0;
      for (let end = text.indexOf('\r\n\r\n'); end >= 0; end = text.indexOf('\r\n\r\n', consumed)) {
        requests++;
        consumed = end + 4;
      }
      pending = text.slice(consumed);
      if (requests > 0) socket.write(RESPONSE.repeat(requests));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    // server.close waits for open connections: end any the proxy left.
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
