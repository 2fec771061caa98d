/**
 * The open-loop generator in a worker thread (issue 18): the same accounting as on the caller's
 * thread against a real loopback server, callbacks and live counters on the caller's side, host
 * names resolved by the caller's lookup, and no worker, thread, socket or timer left behind
 * after a run returns, fails or is cancelled. Counts and ratios only, never absolute times.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { LookupFunction, Socket } from 'node:net';
import { describe, test } from 'node:test';
import { CancelledError } from '../src/errors.js';
import { runOpenLoop, type LiveCounters, type OpenLoopResult, type SecondBucket } from '../src/load/index.js';
import { liveLoadWorkers } from '../src/load/worker-host.js';
import { heldResources, serverPool } from './fixtures/load/servers.js';

const { servers, server } = serverPool();

/** This process's threads (Linux); undefined elsewhere. */
function threadCount(): number | undefined {
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return undefined;
  }
}

/**
 * What a run leaves behind, once the worker's thread has had a moment to be joined: the 'exit'
 * event comes as the thread ends, the kernel may list it a little longer.
 */
async function leftBehind(): Promise<{ workers: number; threads: number | undefined; sockets: number; timers: number }> {
  const expected = baselineThreads;
  for (let k = 0; k < 50 && expected !== undefined && threadCount()! > expected; k++) await new Promise((resolve) => setTimeout(resolve, 20));
  return { workers: liveLoadWorkers(), threads: threadCount(), ...heldResources(servers) };
}

let baselineThreads: number | undefined;

/**
 * A server whose answer depends only on the request's arrival number n (per run): n % 10 = 5 is
 * a 503, 7 is a reset, 9 is never answered (a timeout); the rest are 200. Every request is its
 * own fate, so both threads must count exactly the same.
 */
async function scriptedServer() {
  let n = 0;
  const target = await server((request, response) => {
    const k = n++ % 10;
    if (k === 5) response.writeHead(503).end('busy');
    else if (k === 7) (request.socket as Socket).resetAndDestroy();
    else if (k !== 9) response.end('ok');
  });
  return { target, reset: () => (n = 0) };
}

function accounting(result: OpenLoopResult) {
  return {
    requests: result.requests,
    responses: result.responses,
    errors: result.errors,
    errorsByClass: result.errorsByClass,
    statusCodes: result.statusCodes,
    sent: result.serviceTime!.count,
    latencies: result.latency!.count,
  };
}

describe('worker thread', () => {
  test('counts requests, responses and each error class exactly as the caller-thread run does', async () => {
    baselineThreads = threadCount();
    const { target, reset } = await scriptedServer();
    const before = await leftBehind();
    const results: Record<string, OpenLoopResult> = {};
    const seconds: Record<string, SecondBucket[]> = { main: [], worker: [] };
    const live: Record<string, LiveCounters> = {};
    for (const thread of ['main', 'worker'] as const) {
      reset();
      live[thread] = { dispatched: 0, settled: 0, openConnections: 0 };
      results[thread] = await runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 100,
        connections: 5,
        maxConnections: 50,
        durationMs: 1500,
        timeoutMs: 300,
        thread,
        live: live[thread],
        onSecond: (bucket) => seconds[thread]!.push(bucket),
      });
    }
    const main = results.main!;
    const worker = results.worker!;
    assert.deepEqual(accounting(worker), accounting(main));
    assert.deepEqual(worker.errorsByClass, { refused: 0, reset: 15, timeout: 15, http_5xx: 15, http_status: 0, other: 0 });
    assert.equal(worker.statusCodes['200'], 105);
    // Every sample is there, on the same intended schedule, with a latency from it.
    assert.equal(worker.samples.count, 150);
    assert.deepEqual([...worker.samples.intendedStartMs], [...main.samples.intendedStartMs]);
    assert.ok(worker.samples.latencyMs.every((ms) => ms > 0 && ms <= 300));
    // onSecond ran on this thread, in order, with what the result reports.
    assert.deepEqual(seconds.worker, worker.seconds);
    assert.deepEqual(
      seconds.worker!.map((bucket) => [bucket.second, bucket.requests, bucket.errors]),
      seconds.main!.map((bucket) => [bucket.second, bucket.requests, bucket.errors]),
    );
    // The live counters end as plain numbers with the run's final values.
    assert.deepEqual(live.worker, { dispatched: 150, settled: 150, openConnections: worker.connectionsOpened });
    assert.deepEqual(live.main, { dispatched: 150, settled: 150, openConnections: main.connectionsOpened });
    assert.deepEqual(await leftBehind(), before);
  });

  test('live counters move while the run lasts', async () => {
    const target = await server();
    const live: LiveCounters = { dispatched: 0, settled: 0, openConnections: 0 };
    const run = runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 200, connections: 2, durationMs: 1000, timeoutMs: 1000, live });
    const seen: number[] = [];
    for (let k = 0; k < 3; k++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen.push(live.settled);
    }
    await run;
    assert.ok(seen[0]! > 0 && seen[2]! > seen[0]! && seen[2]! < 200, `settled at 250/500/750 ms: ${seen.join(', ')}`);
    assert.equal(live.settled, 200);
  });

  test('host names go through the caller’s lookup, refusals included', async () => {
    const target = await server();
    const asked: string[] = [];
    const lookup: LookupFunction = (hostname, options, callback) => {
      asked.push(hostname);
      const done = callback as (...args: unknown[]) => void;
      if (hostname !== 'service.test') return done(Object.assign(new Error(`${hostname}: not local`), { code: 'ENOTLOCAL' }), options.all ? [] : '', 0);
      if (options.all) return done(null, [{ address: '127.0.0.1', family: 4 }]);
      return done(null, '127.0.0.1', 4);
    };
    const common = { ratePerSecond: 20, connections: 2, durationMs: 250, timeoutMs: 1000, lookup };
    const ok = await runOpenLoop({ ...common, url: `http://service.test:${target.port}/` });
    assert.equal(ok.errors, 0, JSON.stringify(ok.errorDetails));
    assert.equal(ok.statusCodes['200'], 5);
    assert.ok(asked.length >= 1 && asked.every((name) => name === 'service.test'), asked.join(', '));
    assert.equal(target.arrivals[0]!.headers.host, `service.test:${target.port}`);

    const refusedMain = await runOpenLoop({ ...common, url: `http://elsewhere.test:${target.port}/`, thread: 'main' });
    const refused = await runOpenLoop({ ...common, url: `http://elsewhere.test:${target.port}/` });
    assert.deepEqual(refused.errorDetails, { ENOTLOCAL: 5 });
    assert.deepEqual(refused.errorDetails, refusedMain.errorDetails);
    assert.equal(refused.errorsByClass.other, 5);
  });

  test('a cancelled run ends its worker and closes every socket before it rejects', async () => {
    baselineThreads ??= threadCount();
    const target = await server((_request, response, self) => self.later(2000, () => response.end('late')));
    const before = await leftBehind();
    const controller = new AbortController();
    const live: LiveCounters = { dispatched: 0, settled: 0, openConnections: 0 };
    const run = runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 200, connections: 20, durationMs: 10_000, timeoutMs: 5000, signal: controller.signal, live });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(liveLoadWorkers(), 1);
    assert.ok(target.openSockets.size > 0, 'connections were open when the abort came');
    assert.ok(live.dispatched > 0, 'the worker reported its progress');
    controller.abort();
    await assert.rejects(run, CancelledError);
    // Settled only after the worker exited: its sockets are closed as the server sees them.
    assert.equal(liveLoadWorkers(), 0);
    assert.deepEqual(await leftBehind(), before);
  });

  test('a signal aborted before the worker starts rejects, and no worker is left', async () => {
    const target = await server();
    const controller = new AbortController();
    const run = runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 10, connections: 1, durationMs: 1000, timeoutMs: 1000, signal: controller.signal });
    controller.abort(); // while runOpenLoop awaits the worker host's module
    await assert.rejects(run, CancelledError);
    assert.equal(liveLoadWorkers(), 0);
  });

  test('an onSecond that throws stops the worker; the run rejects with that error and leaves nothing', async () => {
    const target = await server();
    const before = await leftBehind();
    await assert.rejects(
      runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 100,
        connections: 5,
        durationMs: 3000,
        timeoutMs: 1000,
        onSecond: () => {
          throw new Error('listener broke');
        },
      }),
      /listener broke/,
    );
    assert.deepEqual(await leftBehind(), before);
  });

  test("while the caller's thread (the in-process proxy's) is stalled, the worker opens no on-demand connection", async () => {
    // A 20 ms server at 500 req/s needs ~10 connections. 300 ms in, this thread busy-waits 200 ms:
    // the worker's own scheduler stays punctual, but every response waits for this thread (the
    // server runs here, as the proxy does in a scenario), so every connection looks busy. The
    // caller's heartbeat is then stale, and the worker must not take that for a slow target.
    const target = await server((_request, response, self) => self.later(20, () => response.end('ok')));
    const stall = setTimeout(() => {
      const until = performance.now() + 200;
      while (performance.now() < until);
    }, 300);
    const result = await runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 500, connections: 1, maxConnections: 500, durationMs: 1000, timeoutMs: 5000 });
    clearTimeout(stall);
    assert.equal(result.errors, 0, JSON.stringify(result.errorDetails));
    assert.ok(result.growthSkippedLate > 0, 'growth was held back while this thread was behind');
    // ~100 requests came due during the stall; without the rule each finds every connection busy.
    assert.ok(result.connectionsOpened < 100, `opened ${result.connectionsOpened}`);
  });

  test('thread must be worker or main', async () => {
    await assert.rejects(
      runOpenLoop({ url: 'http://127.0.0.1:9/', ratePerSecond: 1, connections: 1, durationMs: 100, timeoutMs: 100, thread: 'other' as never }),
      /thread must be "worker" or "main"/,
    );
  });
});
