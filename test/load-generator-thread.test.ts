/**
 * The generator thread (src/load/generator-thread.ts): open-loop runs happen on a thread of their
 * own, so a busy caller's thread (the in-process proxy, an MCP server) does not make requests
 * late; progress is shared memory; and a run that crosses the caller's thread still holds back
 * connections while that thread is saturated (thread-load.ts). Ratios and counts, no absolute times.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CancelledError } from '../src/errors.js';
import { LiveCounters, MAX_CONNECTING, runOpenLoop } from '../src/load/index.js';
import { planOpenLoop, runPlanned } from '../src/load/open-loop.js';
import { serverPool } from './fixtures/load/servers.js';
import { busyInSlices, busyShare } from './helpers/busy-loop.js';

const { server } = serverPool();

test('a busy caller thread makes requests late on its own thread, not on the generator thread', async () => {
  // 8 ms busy of every ~10 on this thread. The server is on this thread too, so its answers
  // wait; with enough connections that a request seldom waits for a free one, the send lag
  // (intended start to the write) is mostly the generator's own timing. Compared at the median:
  // the busy thread delays about half its requests by most of a slice, every time, while the
  // tail of either side also carries whatever else the machine runs (a loaded run's p99s were
  // 52.7 against 77.8 ms, once).
  const target = await server();
  const options = { url: `${target.origin}/`, ratePerSecond: 1000, connections: 60, maxConnections: 60, durationMs: 1500, timeoutMs: 5000 };
  const stop = busyShare(8, 0.8);
  try {
    const caller = await runOpenLoop({ ...options, thread: 'caller' });
    const worker = await runOpenLoop({ ...options, thread: 'worker' });
    assert.equal(caller.errors + worker.errors, 0);
    assert.ok(
      worker.sendLag!.p50 * 2 < caller.sendLag!.p50,
      `send lag p50: ${worker.sendLag!.p50.toFixed(2)} ms on the generator thread, ${caller.sendLag!.p50.toFixed(2)} ms on the busy caller's`,
    );
  } finally {
    stop();
  }
});

test('live counters are readable from the caller thread while the run goes, and end at the run\'s totals', async () => {
  const target = await server();
  const live = new LiveCounters();
  const seen: number[] = [];
  const watch = setInterval(() => seen.push(live.settled), 50);
  const result = await runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 200, connections: 4, durationMs: 1000, timeoutMs: 2000, live });
  clearInterval(watch);
  assert.equal(live.dispatched, result.requests);
  assert.equal(live.settled, result.requests);
  assert.equal(live.openConnections, result.connectionsOpened);
  assert.ok(seen.some((settled) => settled > 0 && settled < result.requests), `settled as seen mid-run: ${seen.join(' ')}`);
});

test('on the generator thread, a run that watches a saturated caller thread opens no on-demand connection; one that does not watch it does', async () => {
  // A 20 ms server at 500 req/s needs ~10 connections; runs start with 2. This thread is ~100%
  // busy in 1 ms slices: the generator thread itself is idle, so only the gauge of this thread
  // (watchCallerThread, as a scenario sets it for its in-process proxy) tells it to hold back.
  const target = await server((_request, response, self) => self.later(20, () => response.end('ok')));
  const options = { url: `${target.origin}/`, ratePerSecond: 500, connections: 2, maxConnections: 200, durationMs: 1000, timeoutMs: 5000 };
  const stopBusy = busyInSlices(1);
  try {
    const watching = await runOpenLoop({ ...options, watchCallerThread: true });
    const blind = await runOpenLoop(options);
    assert.equal(watching.errors + blind.errors, 0, JSON.stringify([watching.errorDetails, blind.errorDetails]));
    assert.ok(watching.growthSkippedLate > 0, 'growth was put off');
    // The run's first milliseconds come before the gauge's first sample: a few may open then.
    assert.ok(watching.connectionsOpened <= 2 + MAX_CONNECTING, `watching: opened ${watching.connectionsOpened}`);
    assert.ok(blind.connectionsOpened > 2 + MAX_CONNECTING, `not watching: opened ${blind.connectionsOpened}`);
  } finally {
    stopBusy();
  }
});

test('a refused argument is refused on the caller thread, before any run starts', async () => {
  await assert.rejects(runOpenLoop({ url: 'http://127.0.0.1:9/', ratePerSecond: 10, connections: 1, durationMs: 1000, timeoutMs: 100, thread: 'other' as never }), /thread must be "worker" or "caller"/);
  await assert.rejects(runOpenLoop({ url: 'http://127.0.0.1:9/', ratePerSecond: 10, connections: 1, durationMs: 1000, timeoutMs: 100, live: { dispatched: 0 } as never }), /live must be a LiveCounters/);
});

for (const thread of ['caller', 'worker'] as const) {
  test(`schedule edges (${thread} thread): no request due at or after an edge is sent before its onEdge has returned`, async () => {
    // 200 req/s for 1 s, edges at 300 and 700 ms: exactly 60 and 140 requests are due before them.
    // The first onEdge busy-waits 40 ms on this thread (a busy proxy's thread, say): requests due
    // meanwhile must wait for it, and no more than the 60 due before it may reach the server first.
    // The second returns a promise that settles 30 ms later: nothing more is sent until then.
    const target = await server();
    const live = new LiveCounters();
    const seen: Array<{ index: number; dispatched: number; returnedAtMs: number }> = [];
    const result = await runOpenLoop({
      url: `${target.origin}/`,
      ratePerSecond: 200,
      connections: 4,
      durationMs: 1000,
      timeoutMs: 2000,
      thread,
      live,
      edgesMs: [300, 700],
      onEdge: (index) => {
        const dispatched = live.dispatched;
        if (index === 0) {
          const until = performance.now() + 40;
          while (performance.now() < until);
          seen.push({ index, dispatched, returnedAtMs: performance.now() });
          return;
        }
        // The second switch is asynchronous: the run waits for its promise too.
        return new Promise<void>((resolve) =>
          setTimeout(() => {
            seen.push({ index, dispatched: live.dispatched, returnedAtMs: performance.now() });
            resolve();
          }, 30),
        );
      },
    });
    assert.equal(result.errors, 0);
    assert.deepEqual(
      seen.map(({ index, dispatched }) => [index, dispatched]),
      [
        [0, 60],
        [1, 140],
      ],
    );
    const beforeFirstReturned = target.arrivals.filter((arrival) => arrival.atMs < seen[0]!.returnedAtMs).length;
    assert.ok(beforeFirstReturned <= 60, `${beforeFirstReturned} requests reached the server before the first onEdge returned`);
    // The wait shows in the latency of the requests due during it, counted from their intended start.
    assert.ok(result.sendLag!.max >= 30, `send lag max ${result.sendLag!.max} ms`);
  });
}

test('an edge past the last request is still reached by time while the run drains; a throwing onEdge ends the run with its error', async () => {
  // Requests due at 0, 50, 100 and 150 ms, each answered 100 ms later: the run lasts past 190.
  const slow = await server((_request, response, self) => self.later(100, () => response.end('ok')));
  const reached: number[] = [];
  await runOpenLoop({ url: `${slow.origin}/`, ratePerSecond: 20, connections: 4, durationMs: 200, timeoutMs: 2000, edgesMs: [190], onEdge: (index) => void reached.push(index) });
  assert.deepEqual(reached, [0]);
  const target = await server();
  await assert.rejects(
    runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 50, connections: 1, durationMs: 500, timeoutMs: 2000, edgesMs: [100], onEdge: () => { throw new Error('switch failed'); } }),
    /switch failed/,
  );
  await assert.rejects(runOpenLoop({ url: `${target.origin}/`, ratePerSecond: 50, connections: 1, durationMs: 500, timeoutMs: 2000, edgesMs: [200, 100], onEdge: () => {} }), /edgesMs must be ascending/);
});

test('a signal that aborts between planning and running cancels the run on either thread', async () => {
  const target = await server();
  for (const thread of ['caller', 'worker'] as const) {
    const controller = new AbortController();
    const options = { url: `${target.origin}/`, ratePerSecond: 50, connections: 1, durationMs: 500, timeoutMs: 1000, thread, signal: controller.signal };
    const plan = planOpenLoop(options);
    controller.abort();
    await assert.rejects(runPlanned(plan, options), CancelledError);
  }
  assert.equal(target.arrivals.length, 0);
});
