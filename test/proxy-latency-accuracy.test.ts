/**
 * The latency fault is exact on keep-alive exchanges: never early, and on average within a
 * fraction of a millisecond of the requested delay (issue: whole-millisecond timers rounded up
 * added +0.8 to +1.5 ms). Measured as round trips through the proxy minus the no-fault median
 * round trip of the same path, in the same run; the bound on the mean is loose enough for a busy
 * machine and still fails the old rounding-up scheduler, whose every delay was late.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startProxy, type FaultSpec } from '../src/proxy/index.js';
import { connect, destroyAndWait, echo, readBytes, startServer } from './fixtures/proxy/net.js';

async function roundTrips(targetPort: number, faults: FaultSpec[], count: number): Promise<number[]> {
  const proxy = await startProxy({ mappings: [`127.0.0.1:0=tcp://127.0.0.1:${targetPort}`], faults, seed: 1 });
  try {
    const client = await connect(proxy.ports[0]!);
    const trips: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      client.write('ping');
      await readBytes(client, 4);
      trips.push(performance.now() - started);
    }
    await destroyAndWait(client);
    return trips;
  } finally {
    await proxy.stop();
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

test('latency: never early, and the median added delay within 0.75 ms of the request', async (t) => {
  const server = await startServer(echo);
  try {
    const base = median(await roundTrips(server.port, [], 40));
    for (const latencyMs of [7, 23]) {
      const trips = await roundTrips(server.port, [{ type: 'latency', latencyMs }], 40);
      assert.ok(Math.min(...trips) >= latencyMs, `a ${latencyMs} ms delay came early: ${Math.min(...trips).toFixed(3)} ms`);
      const error = median(trips) - base - latencyMs;
      t.diagnostic(`latency ${latencyMs} ms: median added ${(median(trips) - base).toFixed(3)} ms (error ${error.toFixed(3)} ms)`);
      assert.ok(Math.abs(error) < 0.75, `median error ${error.toFixed(3)} ms at ${latencyMs} ms (base ${base.toFixed(3)} ms)`);
    }
  } finally {
    await server.close();
  }
});
