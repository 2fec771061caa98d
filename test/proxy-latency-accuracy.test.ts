/**
 * The latency fault on keep-alive exchanges is never early: every round trip through it lasts at
 * least the delay asked for, and each response is delayed exactly once by exactly that much.
 * How close to the delay it comes (the median within a fraction of a millisecond; whole-
 * millisecond timers rounded up once added +0.8 to +1.5 ms) is a timing property a busy machine
 * blurs: bench/checks/proxy.ts (proxy.latency-accuracy) holds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { forEachPlacement } from './helpers/proxy-under-test.js';
import { connect, destroyAndWait, echo, readBytes, startServer } from './fixtures/proxy/net.js';

forEachPlacement((startProxy) => {
  test('latency: never early, once per response, by exactly the delay asked for', async () => {
    const server = await startServer(echo);
    try {
      for (const latencyMs of [7, 23]) {
        const proxy = await startProxy({
          mappings: [`127.0.0.1:0=tcp://127.0.0.1:${server.port}`],
          faults: [{ type: 'latency', latencyMs }],
          seed: 1,
        });
        try {
          const client = await connect(proxy.ports[0]!);
          const trips: number[] = [];
          for (let i = 0; i < 40; i++) {
            const started = performance.now();
            client.write('ping');
            await readBytes(client, 4);
            trips.push(performance.now() - started);
          }
          await destroyAndWait(client);
          assert.ok(
            Math.min(...trips) >= latencyMs,
            `a ${latencyMs} ms delay came early: ${Math.min(...trips).toFixed(3)} ms`,
          );
          const [counters] = (await proxy.counters()).faults;
          assert.equal(counters!.applications, 40);
          assert.equal(counters!.delayAddedMs, 40 * latencyMs);
        } finally {
          await proxy.stop();
        }
      }
    } finally {
      await server.close();
    }
  });
});
