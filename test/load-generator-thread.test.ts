/**
 * The generator thread (src/load/generator-thread.ts): open-loop runs happen on a thread of their
 * own, so a busy caller's thread (the in-process proxy, an MCP server) does not hold requests
 * back; progress is shared memory; and a run that crosses the caller's thread still holds back
 * connections while that thread is saturated (thread-load.ts). Counts and order only: how much
 * later a busy caller thread makes requests, and how few connections a watching run opens, are
 * held by bench/checks/load.ts (load.generator-thread-lag, load.growth-when-busy).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CancelledError } from '../src/kernel/errors.js';
import { LiveCounters, runOpenLoop } from '../src/load/index.js';
import { LATE_NO_GROWTH_MS, planOpenLoop, runPlanned } from '../src/load/open-loop.js';
import { threadBusy, watchThisThread } from '../src/load/thread-load.js';
import { serverPool } from './fixtures/load/servers.js';
import { busyInSlices, busyWait } from './helpers/busy-loop.js';

const { server } = serverPool();

test(
  'requests keep leaving the scheduler while the caller thread is ' +
    "blocked: on the generator thread, not on the caller's",
  async () => {
    // Once the run has dispatched a few requests, this thread blocks for 600 ms (100 req/s on 80
    // connections, the server on this thread too, so nothing is answered meanwhile). On the
    // generator thread the ~60 requests due in that time are dispatched during it; on the caller's
    // thread none can be.
    const target = await server();
    for (const thread of ['worker', 'caller'] as const) {
      const live = new LiveCounters();
      let during = -1;
      const watch = setInterval(() => {
        if (live.dispatched < 5 || during >= 0) return;
        const before = live.dispatched;
        busyWait(600);
        during = live.dispatched - before;
      }, 5);
      const result = await runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 100,
        connections: 80,
        maxConnections: 80,
        durationMs: 1500,
        timeoutMs: 10_000,
        thread,
        live,
      });
      clearInterval(watch);
      assert.equal(result.requests, 150, thread);
      assert.ok(during >= 0, `${thread}: the run was over before it dispatched 5 requests`);
      if (thread === 'caller') assert.equal(during, 0, 'the caller thread dispatched nothing while it was blocked');
      else assert.ok(during > 0, 'the generator thread dispatched nothing while the caller thread was blocked');
    }
  },
);

test("live counters are readable from the caller thread while the run goes, and end at the run's totals", async () => {
  const target = await server();
  const live = new LiveCounters();
  const seen: number[] = [];
  const watch = setInterval(() => seen.push(live.settled), 50);
  const result = await runOpenLoop({
    url: `${target.origin}/`,
    ratePerSecond: 200,
    connections: 4,
    durationMs: 1000,
    timeoutMs: 2000,
    live,
  });
  clearInterval(watch);
  assert.equal(live.dispatched, result.requests);
  assert.equal(live.settled, result.requests);
  assert.equal(live.openConnections, result.connectionsOpened);
  assert.ok(
    seen.some((settled) => settled > 0 && settled < result.requests),
    `settled as seen mid-run: ${seen.join(' ')}`,
  );
});

test(
  'on the generator thread, a run that watches a saturated caller ' + 'thread puts its on-demand growth off',
  async () => {
    // A 20 ms server at 500 req/s needs ~10 connections; runs start with 2. This thread is ~100%
    // busy in 1 ms slices: the generator thread itself is idle, so only the gauge of this thread
    // (watchCallerThread, as a scenario sets it for its in-process proxy) tells it to hold back.
    const target = await server((_request, response, self) => self.later(20, () => response.end('ok')));
    const options = {
      url: `${target.origin}/`,
      ratePerSecond: 500,
      connections: 2,
      maxConnections: 200,
      durationMs: 1000,
      timeoutMs: 10_000,
    };
    const stopBusy = busyInSlices(1);
    try {
      const watching = await runOpenLoop({ ...options, watchCallerThread: true });
      assert.equal(watching.requests, 500);
      assert.ok(watching.growthSkippedLate > 0, 'growth was put off');
      // How few it opens (2 + MAX_CONNECTING at most: the run's first milliseconds come before the
      // gauge's first sample), and that a run not watching opens more, depend on the CPU each thread
      // gets: bench/checks/load.ts, load.growth-when-busy.
    } finally {
      stopBusy();
    }
  },
);

test('a watched thread whose sampler runs late counts as busy, however idle its last sample was', () => {
  // A gauge as the proxy's thread keeps it (10 ms samples), read at an injected moment: a thread that waits for a CPU
  // is not busy by its utilisation, yet its sampler (a timer) runs late, and so would its responses.
  const { gauge, stop } = watchThisThread();
  try {
    const sampledAt = gauge[1]!;
    gauge[0] = 0.2;
    assert.equal(
      threadBusy(gauge, 0.9, LATE_NO_GROWTH_MS, sampledAt + 10),
      false,
      'a sample one period old is on time',
    );
    assert.equal(threadBusy(gauge, 0.9, LATE_NO_GROWTH_MS, sampledAt + 10 + LATE_NO_GROWTH_MS + 1), true, 'late');
    // Well short of the 5 periods (50 ms) that once counted, so this fails with that rule.
    assert.equal(threadBusy(gauge, 0.9, LATE_NO_GROWTH_MS, sampledAt + 30), true);
    gauge[0] = 0.95;
    assert.equal(threadBusy(gauge, 0.9, LATE_NO_GROWTH_MS, sampledAt), true, 'over the threshold busy');
  } finally {
    stop();
  }
  assert.equal(threadBusy(gauge, 0.9, LATE_NO_GROWTH_MS, Number.MAX_VALUE), false, 'an unwatched thread is never busy');
});

test('a refused argument is refused on the caller thread, before any run starts', async () => {
  await assert.rejects(
    runOpenLoop({
      url: 'http://127.0.0.1:9/',
      ratePerSecond: 10,
      connections: 1,
      durationMs: 1000,
      timeoutMs: 100,
      thread: 'other' as never,
    }),
    /thread must be "worker" or "caller"/,
  );
  await assert.rejects(
    runOpenLoop({
      url: 'http://127.0.0.1:9/',
      ratePerSecond: 10,
      connections: 1,
      durationMs: 1000,
      timeoutMs: 100,
      live: { dispatched: 0 } as never,
    }),
    /live must be a LiveCounters/,
  );
});

for (const thread of ['caller', 'worker'] as const) {
  test(
    `schedule edges (${thread} thread): no request due at or after an ` + `edge is sent before its onEdge has returned`,
    async () => {
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
            busyWait(40);
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
      assert.ok(
        beforeFirstReturned <= 60,
        `${beforeFirstReturned} requests reached the server before the first onEdge returned`,
      );
      // The wait shows in the latency of the requests due during it, counted from their intended start.
      assert.ok(result.sendLag!.max >= 30, `send lag max ${result.sendLag!.max} ms`);
    },
  );
}

test(
  'an edge past the last request is still reached by time while the ' +
    'run drains; a throwing onEdge ends the run with its error',
  async () => {
    // Requests due at 0, 50, 100 and 150 ms, each answered 100 ms later: the run lasts past 190.
    const slow = await server((_request, response, self) => self.later(100, () => response.end('ok')));
    const reached: number[] = [];
    await runOpenLoop({
      url: `${slow.origin}/`,
      ratePerSecond: 20,
      connections: 4,
      durationMs: 200,
      timeoutMs: 2000,
      edgesMs: [190],
      onEdge: (index) => void reached.push(index),
    });
    assert.deepEqual(reached, [0]);
    const target = await server();
    await assert.rejects(
      runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 50,
        connections: 1,
        durationMs: 500,
        timeoutMs: 2000,
        edgesMs: [100],
        onEdge: () => {
          throw new Error('switch failed');
        },
      }),
      /switch failed/,
    );
    await assert.rejects(
      runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 50,
        connections: 1,
        durationMs: 500,
        timeoutMs: 2000,
        edgesMs: [200, 100],
        onEdge: () => {},
      }),
      /edgesMs must be ascending/,
    );
  },
);

test('a signal that aborts between planning and running cancels the run on either thread', async () => {
  const target = await server();
  for (const thread of ['caller', 'worker'] as const) {
    const controller = new AbortController();
    const options = {
      url: `${target.origin}/`,
      ratePerSecond: 50,
      connections: 1,
      durationMs: 500,
      timeoutMs: 1000,
      thread,
      signal: controller.signal,
    };
    const plan = planOpenLoop(options);
    controller.abort();
    await assert.rejects(runPlanned(plan, options), CancelledError);
  }
  assert.equal(target.arrivals.length, 0);
});
