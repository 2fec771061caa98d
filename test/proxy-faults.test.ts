/**
 * Each fault on real loopback sockets. Timing enters only as bounds a busy machine cannot break
 * (a delay is never early, a rate never over its cap) and through the faults' own counters; how
 * close the timing comes to what was asked is held by bench/checks/proxy.ts.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { parseBandwidth, type FaultSpec } from '../src/proxy/index.js';
import { forEachPlacement, type TestProxy } from './helpers/proxy-under-test.js';
import {
  connect,
  destroyAndWait,
  echo,
  handleCounts,
  readBytes,
  readToEnd,
  settledHandles,
  startServer,
  type TestServer,
} from './fixtures/proxy/net.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

forEachPlacement((startProxy) => {
  /** Runs `body` against a proxy in front of a server, then stops both and checks nothing leaked. */
  async function withProxy(
    onSocket: (socket: net.Socket) => void,
    faults: FaultSpec[],
    body: (proxy: TestProxy, server: TestServer) => Promise<void>,
    seed = 1,
  ): Promise<void> {
    const baseline = handleCounts();
    const server = await startServer(onSocket);
    const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], faults, seed });
    try {
      await body(proxy, server);
    } finally {
      await proxy.stop();
      await server.close();
    }
    assert.deepEqual(await settledHandles(baseline), baseline);
  }

  /** Sends `message`, waits for the echo, returns the round trip in ms. */
  async function roundTrip(client: net.Socket, message: string): Promise<number> {
    const start = performance.now();
    client.write(message);
    await readBytes(client, message.length);
    return performance.now() - start;
  }

  /** Fixed-size messages carrying a sequence number; the server notes when each arrives. */
  function arrivalRecorder(): {
    onSocket: (socket: net.Socket) => void;
    arrivals: number[];
    all(count: number): Promise<void>;
  } {
    const arrivals: number[] = [];
    return {
      arrivals,
      /** Resolves once messages 0 … count − 1 have all arrived (throws after 20 s). */
      async all(count) {
        for (let waited = 0; arrivals.filter((at) => at !== undefined).length < count; waited += 10) {
          if (waited > 20_000)
            throw new Error(`${arrivals.filter((at) => at !== undefined).length} of ${count} messages arrived`);
          await sleep(10);
        }
      },
      onSocket(socket) {
        let buffered = Buffer.alloc(0);
        socket.on('data', (data: Buffer) => {
          const now = performance.now();
          buffered = Buffer.concat([buffered, data]);
          while (buffered.length >= 4) {
            arrivals[buffered.readUInt32BE(0)] = now;
            buffered = buffered.subarray(4);
          }
        });
      },
    };
  }

  function seq(n: number): Buffer {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  }

  describe('latency', () => {
    it('adds the delay to every exchange on a keep-alive connection, not only the first', async () => {
      await withProxy(echo, [{ type: 'latency', latencyMs: 100 }], async (proxy) => {
        const client = await connect(proxy.ports[0]!);
        const trips: number[] = [];
        for (let i = 0; i < 5; i++) trips.push(await roundTrip(client, `request ${i}`));
        for (const trip of trips) assert.ok(trip >= 99, `round trips ${trips.map((t) => t.toFixed(1))}`);
        const [counters] = (await proxy.counters()).faults;
        assert.equal(counters!.applications, 5, 'one delay per response');
        assert.equal(counters!.delayAddedMs, 500);
        await destroyAndWait(client);
      });
    });

    it('per-op mode delays every chunk; message mode only the first of a message', async () => {
      // Five chunks 40 ms apart, one direction: one message. A loaded machine may read two of them
      // in one go (one chunk to the proxy), so per-op counts the reads, and asks for more than one.
      for (const perOp of [true, false]) {
        const recorder = arrivalRecorder();
        await withProxy(
          recorder.onSocket,
          [{ type: 'latency', latencyMs: 100, perOp, side: 'client' }],
          async (proxy) => {
            const client = await connect(proxy.ports[0]!);
            const sent: number[] = [];
            for (let i = 0; i < 5; i++) {
              sent.push(performance.now());
              client.write(seq(i));
              await sleep(40);
            }
            await recorder.all(5);
            const oneWay = sent.map((t, i) => recorder.arrivals[i]! - t);
            const shown = oneWay.map((d) => d.toFixed(1)).join(', ');
            const [counters] = (await proxy.counters()).faults;
            if (perOp) {
              for (const d of oneWay) assert.ok(d >= 99, `per-op one-way delays ${shown}`);
              assert.ok(counters!.applications >= 2, `per-op: ${counters!.applications} delays for five chunks`);
              assert.equal(counters!.delayAddedMs, counters!.applications * 100);
            } else {
              assert.ok(oneWay[0]! >= 99, `message one-way delays ${shown}`);
              // Later chunks of the same message only wait for the first (≈ 100 − 40·i ms: bench/checks/proxy.ts).
              assert.equal(counters!.applications, 1, 'message mode: one delay for the message');
              assert.equal(counters!.delayAddedMs, 100);
            }
            await destroyAndWait(client);
          },
        );
      }
    });
  });

  describe('jitter', () => {
    it('delays each chunk by the current value in [0, amplitude]', async () => {
      const recorder = arrivalRecorder();
      await withProxy(
        recorder.onSocket,
        [{ type: 'jitter', amplitudeMs: 30, frequencyHz: 20, side: 'client' }],
        async (proxy) => {
          const client = await connect(proxy.ports[0]!);
          const sent: number[] = [];
          for (let i = 0; i < 60; i++) {
            sent.push(performance.now());
            client.write(seq(i));
            await sleep(10);
          }
          await recorder.all(60);
          const oneWay = sent.map((t, i) => recorder.arrivals[i]! - t);
          for (const d of oneWay) assert.ok(d >= 0, `one-way ${d}`);
          assert.ok(Math.max(...oneWay) - Math.min(...oneWay) > 5, 'the delay varies');
          // One delay per chunk read (a loaded machine may read two messages at once), each in
          // [0, 30]. How far over 30 ms a chunk may arrive is bench/checks/proxy.ts's (proxy.jitter-bound).
          const counters = (await proxy.counters()).faults[0]!;
          assert.ok(counters.applications >= 1 && counters.applications <= 60, `${counters.applications} delays`);
          assert.ok(counters.delayAddedMs > 0 && counters.delayAddedMs <= counters.applications * 30);
          await destroyAndWait(client);
        },
      );
    });
  });

  describe('packet loss', () => {
    it('loses about lossRate of the virtual segments, stalls after each, and never corrupts data', async () => {
      const payload = randomBytes(1024 * 1024);
      const results: Array<{ segments: number; segmentsLost: number }> = [];
      for (let run = 0; run < 2; run++) {
        await withProxy(
          (socket) => socket.end(payload),
          [{ type: 'packet_loss', lossRate: 0.05, rttMs: 5 }],
          async (proxy) => {
            const start = performance.now();
            const client = await connect(proxy.ports[0]!);
            const received = await readToEnd(client);
            const elapsed = performance.now() - start;
            assert.equal(sha(received), sha(payload));
            const counters = (await proxy.counters()).faults[0]!;
            assert.ok(counters.segments >= Math.ceil(payload.length / 1448), `segments ${counters.segments}`);
            const rate = counters.segmentsLost / counters.segments;
            const sigma = Math.sqrt((0.05 * 0.95) / counters.segments);
            assert.ok(Math.abs(rate - 0.05) < 4 * sigma, `measured loss ${rate}`);
            assert.ok(counters.applications > 0 && counters.stallMs >= counters.applications * 5);
            assert.ok(elapsed >= counters.stallMs * 0.9, `elapsed ${elapsed} ms vs stalls ${counters.stallMs} ms`);
            results.push({ segments: counters.segments, segmentsLost: counters.segmentsLost });
            await destroyAndWait(client);
          },
          99,
        );
      }
      assert.deepEqual(results[0], results[1], 'same seed, same losses');
    });

    it('each small message is its own segment: a 50% loss rate stalls about half of 24 small exchanges', async () => {
      // Keep-alive request/response traffic, 145 bytes each way: each request starts a segment of
      // its own (they were once packed into shared 1448-byte segments, and a 20% loss rate touched
      // 1% of the requests). Each loss of a lone segment stalls ~200 ms (a tail loss), hence few.
      await withProxy(
        echo,
        [{ type: 'packet_loss', lossRate: 0.5, rttMs: 1, direction: 'egress' }],
        async (proxy) => {
          const client = await connect(proxy.ports[0]!);
          const message = 'x'.repeat(145);
          for (let exchange = 0; exchange < 24; exchange++) {
            client.write(message);
            await readBytes(client, message.length);
          }
          const counters = (await proxy.counters()).faults[0]!;
          // One direction, 24 messages: at least 24 first transmissions (retransmissions add more).
          assert.ok(counters.segments >= 24, `segments ${counters.segments}`);
          // applications = first transmissions lost; Binomial(24, 0.5) lies in [3, 21] but for 1e-4.
          assert.ok(
            counters.applications >= 3 && counters.applications <= 21,
            `stalled exchanges ${counters.applications}`,
          );
          await destroyAndWait(client);
        },
        7,
      );
    });
  });

  describe('bandwidth', () => {
    /** The server sends `bytes` when asked; returns the measured rate in bytes/s. */
    async function measure(bytesPerSecond: number, bytes: number): Promise<number> {
      const payload = randomBytes(bytes);
      let rate = 0;
      await withProxy(
        (socket) => socket.once('data', () => socket.end(payload)),
        [{ type: 'bandwidth', bytesPerSecond }],
        async (proxy) => {
          const client = await connect(proxy.ports[0]!);
          const done = readToEnd(client);
          const start = performance.now();
          client.write('go');
          const received = await done;
          rate = received.length / ((performance.now() - start) / 1000);
          assert.equal(sha(received), sha(payload));
          assert.equal((await proxy.counters()).faults[0]!.bytesPaced, bytes);
          await destroyAndWait(client);
        },
      );
      return rate;
    }

    // Never more than 5% over the cap: a busy machine can only make it slower. How close under the
    // cap it stays is bench/checks/proxy.ts's (proxy.bandwidth-rate).
    const underCap = (rate: number, cap: number): boolean => rate / cap < 1.05;

    it('holds throughput to 64 KB/s, never 5% over ("64 kbps" means kilobytes)', async () => {
      const cap = parseBandwidth(64, 'kbps');
      assert.equal(cap, 64_000);
      const rate = await measure(cap, 2 * cap);
      assert.ok(underCap(rate, cap), `measured ${rate.toFixed(0)} B/s for a cap of ${cap}`);
    });

    it('holds throughput to 10 MB/s, never 5% over', async () => {
      const cap = parseBandwidth(10, 'mbps');
      const rate = await measure(cap, 2 * cap);
      assert.ok(underCap(rate, cap), `measured ${rate.toFixed(0)} B/s for a cap of ${cap}`);
    });

    it('a shared scope splits one rate between connections', async () => {
      const payload = randomBytes(64_000);
      await withProxy(
        (socket) => socket.once('data', () => socket.end(payload)),
        [{ type: 'bandwidth', bytesPerSecond: 128_000, scope: 'shared' }],
        async (proxy) => {
          const clients = await Promise.all([connect(proxy.ports[0]!), connect(proxy.ports[0]!)]);
          const start = performance.now();
          const done = clients.map(readToEnd);
          for (const client of clients) client.write('go');
          await Promise.all(done);
          const seconds = (performance.now() - start) / 1000;
          // Not faster than one 128 kB/s link would allow (two per-connection caps would take 0.5 s).
          assert.ok(seconds > 0.95, `two × 64 kB at a shared 128 kB/s took ${seconds.toFixed(3)} s`);
          await Promise.all(clients.map(destroyAndWait));
        },
      );
    });
  });

  describe('blackhole', () => {
    it('passes no byte while active, back-pressures the sender, and resumes intact', async () => {
      let received: Buffer[] = [];
      const payload = randomBytes(16 * 1024 * 1024);
      await withProxy(
        (socket) => socket.on('data', (d: Buffer) => received.push(d)),
        // One link (the requests): by default a blackhole holds both, and counts each link's hold.
        [{ type: 'blackhole', side: 'client', direction: 'ingress' }],
        async (proxy) => {
          const connected = performance.now();
          const client = await connect(proxy.ports[0]!);
          let backPressured = false;
          let offset = 0;
          const pump = (): void => {
            while (offset < payload.length) {
              const ok = client.write(payload.subarray(offset, offset + 256 * 1024));
              offset += 256 * 1024;
              if (!ok) {
                backPressured = true;
                client.once('drain', pump);
                return;
              }
            }
          };
          pump();
          await sleep(400);
          assert.equal(received.length, 0, 'no byte passes while the blackhole is on');
          assert.ok(backPressured, 'the sender saw backpressure');
          assert.ok(offset < payload.length, 'the sender could not push everything');
          const held = await proxy.counters();
          assert.ok(
            held.mappings[0]!.bytesQueued <= 2 * 1024 * 1024,
            `proxy holds ${held.mappings[0]!.bytesQueued} bytes`,
          );
          // Held from the first byte it stopped (when a busy machine got to it) until now.
          assert.ok(
            held.faults[0]!.timeHeldMs > 0 && held.faults[0]!.timeHeldMs <= performance.now() - connected,
            `held ${held.faults[0]!.timeHeldMs} ms`,
          );
          await proxy.setFaults([]);
          while (received.reduce((a, b) => a + b.length, 0) < payload.length) await sleep(20);
          assert.equal(sha(Buffer.concat(received)), sha(payload));
          const after = (await proxy.counters()).faults[0]!;
          assert.equal(after.active, false);
          assert.equal(after.applications, 1);
          received = [];
          await destroyAndWait(client);
        },
      );
    });
  });

  describe('blackhole from the first byte', () => {
    it('reads nothing from a target that pushes as soon as the connection opens, then delivers it all', async () => {
      const payload = randomBytes(16 * 1024 * 1024);
      await withProxy(
        (socket) => socket.end(payload),
        [{ type: 'blackhole' }],
        async (proxy) => {
          const client = await connect(proxy.ports[0]!);
          let received = 0;
          const all = readToEnd(client);
          client.on('data', (d: Buffer) => (received += d.length));
          await sleep(300);
          assert.equal(received, 0);
          const queued = (await proxy.counters()).mappings[0]!.bytesQueued;
          assert.ok(queued <= 2 * 1024 * 1024, `proxy holds ${queued} bytes`);
          await proxy.setFaults([]);
          assert.equal(sha(await all), sha(payload));
          await destroyAndWait(client);
        },
      );
    });
  });

  describe('side and direction', () => {
    it('each combination of side and direction delays the requests, the responses or both', async () => {
      // 1.5 s, so that a leg not meant to be delayed (a millisecond on loopback; 600 ms was once
      // exceeded on a loaded CI machine) can be told apart; how little it takes is
      // bench/checks/proxy.ts's (proxy.direction-timing).
      const replySent: number[] = [];
      const recorder = (socket: net.Socket): void => {
        socket.on('data', (data: Buffer) => {
          requestArrived.push(performance.now());
          // Stamped before the write: the proxy's thread may read the reply at once while this one is
          // preempted (a loaded machine), so a stamp after it could come up to a slice late.
          replySent.push(performance.now());
          socket.write(data);
        });
      };
      const requestArrived: number[] = [];
      await withProxy(recorder, [], async (proxy) => {
        const client = await connect(proxy.ports[0]!);
        const cases: Array<[FaultSpec['side'], FaultSpec['direction'], 'request' | 'response' | 'both']> = [
          ['server', 'ingress', 'response'],
          ['client', 'egress', 'response'],
          ['server', 'egress', 'request'],
          ['client', 'ingress', 'request'],
          ['server', 'both', 'both'],
          [undefined, undefined, 'response'],
        ];
        for (const [side, direction, expected] of cases) {
          await proxy.setFaults([{ type: 'latency', latencyMs: 1500, side, direction }]);
          const sent = performance.now();
          await roundTrip(client, 'ping');
          const received = performance.now();
          const request = requestArrived.at(-1)! - sent;
          const response = received - replySent.at(-1)!;
          const label = `${side}+${direction}: request ${request.toFixed(1)} ms, response ${response.toFixed(1)} ms`;
          assert.equal(request >= 1499, expected !== 'response', label);
          assert.equal(response >= 1499, expected !== 'request', label);
          assert.ok(request < 3000 && response < 3000, `${label}: delayed once, not twice`);
        }
        await destroyAndWait(client);
      });
    });
  });
});
