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

const WARM_UP_RATE_PER_SECOND = 4_000;
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

let warmedUp = false;

/** The warm-up under way, and how many callers wait for it. */
interface Running {
  readonly done: Promise<void>;
  readonly controller: AbortController;
  waiting: number;
}
let running: Running | undefined;

/**
 * Resolves once this process's load and proxy code have been warmed (the first call does it, later
 * ones share it), or at once when `signal` aborts: never rejects. A caller whose signal aborts stops
 * the warm-up if no other caller still waits for it, and then resolves after it has stopped.
 */
export async function warmUpOnce(signal?: AbortSignal): Promise<void> {
  if (warmedUp || signal?.aborted) return;
  running ??= startWarmUp();
  const run = running;
  run.waiting++;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    if ((await Promise.race([run.done, aborted])) !== 'aborted') return;
    if (run.waiting > 1) return; // another scenario still needs it: it goes on, that one's to stop
    run.controller.abort();
    await run.done;
  } finally {
    signal?.removeEventListener('abort', onAbort!);
    run.waiting--;
  }
}

function startWarmUp(): Running {
  const controller = new AbortController();
  const done = warmUp(controller.signal).then(
    () => void (warmedUp = true),
    // A failure leaves runs cold and is not retried; a cancelled warm-up is, by the next scenario.
    () => void (warmedUp = !controller.signal.aborted),
  );
  const run: Running = { done, controller, waiting: 0 };
  void done.finally(() => {
    if (running === run) running = undefined;
  });
  return run;
}

async function warmUp(signal: AbortSignal): Promise<void> {
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
      await warmPass(sink.port, proxy, WARM_UP_MS, [WARM_UP_MS / 2], signal);
      await proxy.setFaults([]);
      await warmPass(sink.port, proxy, WARM_UP_AGAIN_MS, [], signal);
    } finally {
      await proxy.stop();
    }
  } finally {
    await sink.close();
  }
}

/** One open-loop run of `durationMs` through `proxy` to the sink, on connections of its own; the fault goes on at
 * each edge. */
async function warmPass(
  sinkPort: number,
  proxy: HostedProxy,
  durationMs: number,
  edgesMs: number[],
  signal: AbortSignal,
): Promise<void> {
  signal.throwIfAborted();
  await runOpenLoop({
    url: `http://127.0.0.1:${sinkPort}/`,
    method: 'GET',
    body: '',
    headers: {},
    tls: { rejectUnauthorized: true },
    targets: SINK_TARGETS,
    connectTo: { host: '127.0.0.1', port: proxy.ports[0]! },
    ratePerSecond: WARM_UP_RATE_PER_SECOND,
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
