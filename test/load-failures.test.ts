/**
 * Failures, cancellation and TLS in the open-loop generator and the capacity mode: each error
 * class is classified and counted, timeouts enter the latency distribution, an abort or a
 * throwing callback stops everything, and no socket or timer outlives a run.
 */
import assert from 'node:assert/strict';
import type { LookupFunction, Socket } from 'node:net';
import { describe, test } from 'node:test';
import { CancelledError, OperationalError } from '../src/kernel/errors.js';
import { resolveThroughPolicy } from '../src/load/capacity.js';
import { runCapacity, runOpenLoop } from '../src/load/index.js';
import { closedPort, heldResources, serverPool, TLS_CERT, type TestServer } from './fixtures/load/servers.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

const { servers, server } = serverPool();

/** A server that reads requests and never answers. */
const blackhole = (): Promise<TestServer> => server(() => {});

describe('error classes', () => {
  test('timeouts: classified, counted, and in the latency distribution at exactly the timeout', async () => {
    const target = await blackhole();
    const before = await heldResources(servers);
    const started = performance.now();
    const result = await runOpenLoop({
      url: `${target.origin}/`,
      ratePerSecond: 50,
      connections: 5,
      durationMs: 1000,
      timeoutMs: 300,
    });
    const elapsed = performance.now() - started;
    assert.deepEqual(await heldResources(servers), before);

    assert.equal(result.requests, 50);
    assert.equal(result.errors, 50);
    assert.equal(result.errorsByClass.timeout, 50);
    assert.equal(result.latency!.count, 50);
    assert.equal(result.latency!.min, 300);
    assert.equal(result.latency!.max, 300);
    assert.equal(result.responses, 0);
    // 5 connections each held their first request for 300 ms while 15 more came due: those
    // waited in the queue, and their latency still counts from their intended start. A request that
    // left the scheduler on time (within SENT_LATE_MS) and went straight onto a connection holds it
    // ~290 ms or more: at most 4 such per connection in the second, 20 of 50; the other 30 or more waited
    // in the queue or left late (a loaded machine's late ticks meet connections its late timeouts freed).
    assert.ok(result.queued + result.sentLate >= 30, `queued ${result.queued}, sent late ${result.sentLate}`);
    assert.ok(result.sendLag!.max >= 150, `send lag max ${result.sendLag!.max}`);
    assert.equal(result.serviceTime!.count, 50 - result.notSent);
    assert.equal(
      (result.errorDetails['timed out waiting for a free connection'] ?? 0) +
        result.errorDetails['timed out waiting for the response']!,
      50,
    );
    // The run ends one timeout after the last request was due: not before, and not waiting on
    // the server (which never answers). How soon after is bench/checks/load.ts's (load.run-ends).
    assert.ok(elapsed >= 1000 - 20 + 300, `run took ${elapsed} ms`);
    // A hang guard (the server never answers): a starved machine stretches the 1.3 s run, never to 30 s.
    assert.ok(elapsed < 30_000, `run took ${elapsed} ms`);
    assert.ok(result.seconds.every((bucket) => bucket.errors === bucket.requests && bucket.p50Ms === 300));
  });

  test('some requests time out: the others keep their own latency', async () => {
    let n = 0;
    const target = await server((_request, response, self) => {
      if (n++ % 2 === 0) response.end('fast');
      else self.later(60_000, () => response.end('slow'));
    });
    // A timeout the fast answers cannot reach however busy the machine; the slow never answer in time.
    const result = await runOpenLoop({
      url: `${target.origin}/`,
      ratePerSecond: 20,
      connections: 10,
      durationMs: 500,
      timeoutMs: 3000,
    });
    assert.equal(result.errorsByClass.timeout, 5);
    assert.equal(result.statusCodes['200'], 5);
    const timedOut = result.samples.latencyMs.filter((_ms, i) => result.samples.errorClass[i] !== 0);
    assert.deepEqual([...timedOut], [3000, 3000, 3000, 3000, 3000]);
    // The answered ones keep their own latency, under the timeout's.
    const answered = result.samples.latencyMs.filter((_ms, i) => result.samples.errorClass[i] === 0);
    assert.equal(answered.length, 5);
    assert.ok(
      answered.every((ms) => ms < 3000),
      `answered in ${[...answered].join(', ')} ms`,
    );
  });

  test('refused', async () => {
    const port = await closedPort();
    const before = await heldResources(servers);
    const result = await runOpenLoop({
      url: `http://127.0.0.1:${port}/`,
      ratePerSecond: 50,
      connections: 3,
      durationMs: 200,
      timeoutMs: 1000,
    });
    assert.deepEqual(await heldResources(servers), before);
    assert.equal(result.errorsByClass.refused, 10);
    assert.equal(result.errors, 10);
    assert.equal(result.errorDetails['ECONNREFUSED'], 10);
    assert.equal(result.ttfb, null);
  });

  test('reset: an RST, or a close before the response is complete', async () => {
    let n = 0;
    const target = await server((request, response) => {
      const socket = request.socket as Socket;
      if (n++ % 2 === 0) socket.resetAndDestroy();
      else {
        // Promise 100 bytes, send 2, close.
        response.writeHead(200, { 'content-length': '100' });
        response.write('ok', () => socket.destroy());
      }
    });
    const before = await heldResources(servers);
    const result = await runOpenLoop({
      url: `${target.origin}/`,
      ratePerSecond: 40,
      connections: 2,
      durationMs: 500,
      timeoutMs: 1000,
    });
    assert.deepEqual(await heldResources(servers), before);
    assert.equal(result.errorsByClass.reset, 20, JSON.stringify(result.errorDetails));
    assert.equal(result.errorDetails['ECONNRESET'], 10);
    assert.equal(result.errorDetails['connection closed before the response was complete'], 10);
    // The truncated responses did send their first bytes.
    assert.equal(result.ttfb!.count, 10);
  });
});

describe('cancellation and cleanup', () => {
  test(
    'an abort mid-run rejects long before the run or its requests ' + 'would end, and frees every socket and timer',
    async () => {
      const target = await server((_request, response, self) => self.later(30_000, () => response.end('late')));
      const before = await heldResources(servers);
      const controller = new AbortController();
      const run = runOpenLoop({
        url: `${target.origin}/`,
        ratePerSecond: 200,
        connections: 20,
        durationMs: 10_000,
        timeoutMs: 20_000,
        signal: controller.signal,
      });
      // Until the run has connections open (a fixed 300 ms assumed a machine that starts them in time).
      const opening = Date.now();
      while (target.openSockets.size === 0 && Date.now() - opening < HANG_GUARD_MS)
        await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(target.openSockets.size > 0, 'connections were open when the abort came');
      const abortedAt = performance.now();
      controller.abort();
      await assert.rejects(run, CancelledError);
      // Long before the 10 s run, a 30 s answer or a 20 s timeout (within 500 ms: bench/checks/load.ts, load.run-ends).
      const took = performance.now() - abortedAt;
      assert.ok(took < 5000, `rejected ${took} ms after the abort`);
      assert.deepEqual(await heldResources(servers), before);
    },
  );

  test('an already aborted signal rejects before anything is opened', async () => {
    const before = await heldResources(servers);
    await assert.rejects(
      runOpenLoop({
        url: 'http://127.0.0.1:9/',
        ratePerSecond: 1,
        connections: 1,
        durationMs: 1000,
        timeoutMs: 100,
        signal: AbortSignal.abort(),
      }),
      CancelledError,
    );
    assert.deepEqual(await heldResources(servers), before);
  });

  test('an onSecond callback that throws ends the run with its error, leaving nothing behind', async () => {
    const target = await server();
    const before = await heldResources(servers);
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
    assert.deepEqual(await heldResources(servers), before);
  });
});

describe('https', () => {
  test('TLS to connectTo with the URL host as server name; verification on by default', async () => {
    const target = await server(undefined, { tls: true });
    const url = `https://localhost:${target.port}/secure`;
    const connectTo = { host: '127.0.0.1', port: target.port };
    const common = { url, connectTo, ratePerSecond: 20, connections: 2, durationMs: 200, timeoutMs: 2000 };

    const unverified = await runOpenLoop({ ...common, tls: { rejectUnauthorized: false } });
    assert.equal(unverified.statusCodes['200'], 4);
    assert.equal(target.arrivals[0]!.servername, 'localhost');
    assert.equal(target.arrivals[0]!.headers.host, `localhost:${target.port}`);

    const selfSigned = await runOpenLoop(common);
    assert.equal(selfSigned.errorsByClass.other, 4);
    assert.equal(selfSigned.errorDetails['DEPTH_ZERO_SELF_SIGNED_CERT'], 4);

    const trusted = await runOpenLoop({ ...common, tls: { ca: TLS_CERT } });
    assert.equal(trusted.statusCodes['200'], 4);

    // The certificate names localhost and 127.0.0.1, not other.test: checked against the URL's host.
    const before = await heldResources(servers);
    const wrongName = await runOpenLoop({
      ...common,
      url: `https://other.test:${target.port}/`,
      tls: { ca: TLS_CERT },
    });
    assert.equal(wrongName.errorDetails['ERR_TLS_CERT_ALTNAME_INVALID'], 4);
    assert.deepEqual(await heldResources(servers), before);
  });
});

describe('capacity (closed loop)', () => {
  test(
    'targets: the name is resolved through the target policy and ' + 'autocannon connects to that address, Host kept',
    async () => {
      const target = await server();
      const result = await runCapacity({
        url: `http://localhost:${target.port}/`,
        targets: { allowRemoteTargets: false },
        connections: 1,
        durationMs: 300,
        timeoutMs: 1000,
      });
      assert.ok(result.responses > 0);
      assert.equal(result.errors, 0);
      assert.equal(target.arrivals[0]!.headers.host, `localhost:${target.port}`);
    },
  );

  test(
    'resolveThroughPolicy: a refused name is an error that says why; ' +
      'an unresolvable one is left to the connections; an IP is kept',
    async () => {
      const refusing: LookupFunction = (hostname, _options, callback) =>
        (callback as (...args: unknown[]) => void)(
          Object.assign(new Error(`${hostname}: 203.0.113.9 is not a loopback address`), {
            code: 'ENOTLOCAL',
          }),
          '',
          0,
        );
      const unknown: LookupFunction = (_hostname, _options, callback) =>
        (callback as (...args: unknown[]) => void)(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }), '', 0);
      const local: LookupFunction = (_hostname, _options, callback) =>
        (callback as (...args: unknown[]) => void)(null, '127.0.0.1', 4);
      await assert.rejects(
        resolveThroughPolicy(refusing, 'rebound.test'),
        (error: Error) => error instanceof OperationalError && /not a loopback address/.test(error.message),
      );
      assert.equal(await resolveThroughPolicy(unknown, 'missing.test'), 'missing.test');
      assert.equal(await resolveThroughPolicy(local, 'app.test'), '127.0.0.1');
      assert.equal(await resolveThroughPolicy(refusing, '::1'), '::1');
    },
  );

  test('sustained rate follows connections ÷ service time (Little), Host kept through connectTo', async () => {
    const target = await server((_request, response, self) => self.later(20, () => response.end('ok')));
    const before = await heldResources(servers);
    const result = await runCapacity({
      url: 'http://service.test/',
      connectTo: { host: '127.0.0.1', port: target.port },
      connections: 4,
      durationMs: 1000,
      timeoutMs: 2000,
    });
    assert.deepEqual(await heldResources(servers), before);
    // 4 connections × 1 / 20 ms = 200 req/s at most, however fast the machine (how close it comes
    // is bench/checks/load.ts's, load.capacity-little).
    assert.ok(result.requestsPerSecond > 0 && result.requestsPerSecond <= 200, `${result.requestsPerSecond} req/s`);
    assert.equal(result.statusCodes['200'], result.responses);
    assert.ok(Math.abs(result.requestsPerSecond * (result.elapsedMs / 1000) - result.responses) < 1e-6);
    assert.ok(result.latencyWholeMs.p50 >= 19, `p50 ${result.latencyWholeMs.p50}`);
    assert.equal(target.arrivals[0]!.headers.host, 'service.test');
    assert.equal(result.errors, 0);
  });

  test(
    'with a rate cap the latencies are the measured ones: ' +
      "autocannon's coordinated-omission correction does not fill them " +
      'with made-up values',
    async () => {
      // Every scenario caps a capacity run at --max-rate. With a rate, autocannon records each
      // latency "with an expected interval" of ceil(1 / per-connection rate) = 1 ms, which adds
      // synthetic samples at latency − 1, − 2, … down to 1 ms: a 50 ms fault showed p50 26 ms, min 1.
      const target = await server((_request, response, self) => self.later(20, () => response.end('ok')));
      const result = await runCapacity({
        url: `${target.origin}/`,
        connections: 4,
        durationMs: 1000,
        timeoutMs: 2000,
        maxRatePerSecond: 1000,
      });
      assert.equal(result.errors, 0);
      assert.ok(result.responses > 20, `${result.responses} responses`);
      // Whole milliseconds, truncated: a response held 20 ms on the server takes at least 19.
      assert.ok(result.latencyWholeMs.min >= 19, `min ${result.latencyWholeMs.min} ms, below the server's 20 ms`);
      assert.ok(result.latencyWholeMs.p50 >= 20, `p50 ${result.latencyWholeMs.p50} ms`);
    },
  );

  test('5xx count as errors; an abort stops the run long before it would end, leaving nothing behind', async () => {
    const target = await server((_request, response, self) => self.later(5, () => response.writeHead(500).end()));
    const before = await heldResources(servers);
    const controller = new AbortController();
    const run = runCapacity({
      url: `${target.origin}/`,
      connections: 2,
      durationMs: 60_000,
      timeoutMs: 2000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    await assert.rejects(run, CancelledError);
    // Long before the 60 s run would end: half of it is a margin no starved machine needs (how soon: within 1 s,
    // bench/checks/load.ts, load.run-ends).
    assert.ok(performance.now() - started < 30_000);
    assert.deepEqual(await heldResources(servers), before);

    const result = await runCapacity({ url: `${target.origin}/`, connections: 2, durationMs: 300, timeoutMs: 2000 });
    assert.ok(result.http5xx > 0);
    assert.equal(result.errors, result.http5xx);
    assert.equal(result.statusCodes['500'], result.http5xx);
  });
});
