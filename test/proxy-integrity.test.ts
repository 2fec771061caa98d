/**
 * Byte integrity: 50 MB each way through every fault at once, on both links, while the faults are
 * switched on and off mid-stream, arrives identical.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type net from 'node:net';
import { describe, it } from 'node:test';
import type { FaultSpec } from '../src/proxy/index.js';
import { forEachPlacement } from './helpers/proxy-under-test.js';
import { connect, handleCounts, settledHandles, startServer, waitClose, writeAll } from './fixtures/proxy/net.js';

const MB = 1024 * 1024;
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Hashes what a socket reads until its end, without keeping it. */
function hashToEnd(socket: net.Socket): Promise<{ bytes: number; sha: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (data: Buffer) => {
      bytes += data.length;
      hash.update(data);
    });
    socket.once('end', () => resolve({ bytes, sha: hash.digest('hex') }));
    socket.once('error', reject);
  });
}

// Every fault on both links. Rates are set so the test stays within a few seconds on 2 cores:
// the bandwidth cap is above what the loss stalls leave, and losses are rare enough to be cheap.
const ALL_FAULTS: FaultSpec[] = [
  { type: 'latency', latencyMs: 5, deviationMs: 2, direction: 'both' },
  { type: 'latency', name: 'per-op latency', latencyMs: 1, perOp: true, direction: 'both' },
  { type: 'jitter', amplitudeMs: 3, frequencyHz: 50, direction: 'both' },
  { type: 'packet_loss', lossRate: 0.002, rttMs: 2, direction: 'both' },
  { type: 'packet_loss', name: 'bursty loss', model: 'gilbert_elliott', lossRate: 0.001, rttMs: 1, direction: 'both' },
  { type: 'bandwidth', bytesPerSecond: 200 * 1e6, direction: 'both' },
];

forEachPlacement((startProxy) => {
  describe('byte integrity', () => {
    it('50 MB each way through every fault at once, switched mid-stream, arrives identical', async () => {
      const baseline = handleCounts();
      const toServer = randomBytes(50 * MB);
      const toClient = randomBytes(50 * MB);
      let serverResult: Promise<{ bytes: number; sha: string }> | undefined;
      let serverWrite: Promise<void> | undefined;
      const server = await startServer((socket) => {
        serverResult = hashToEnd(socket).catch((error: Error) => {
          throw new Error(`the server's read: ${error.message}`);
        });
        serverResult.catch(() => {});
        serverWrite = writeAll(socket, toClient).catch((error: Error) => {
          throw new Error(`the server's write: ${error.message}`);
        });
        serverWrite.catch(() => {}); // awaited below
      });
      const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], faults: ALL_FAULTS, seed: 5 });
      // Half-open: the 50 MB coming back may end before ours is sent (a loaded machine, a blackhole
      // on our egress), and the client must go on sending.
      const client = await connect(proxy.ports[0]!, '127.0.0.1', { allowHalfOpen: true });
      // A failure stops everything, so that the file ends at once rather than at the runner's timeout.
      try {
        const clientResult = hashToEnd(client).catch((error: Error) => {
          throw new Error(`the client's read: ${error.message}`);
        });
        const sending = writeAll(client, toServer).catch((error: Error) => {
          throw new Error(`the client's write: ${error.message}`);
        });
        clientResult.catch(() => {}); // awaited below; a rejection before then is not unhandled
        sending.catch(() => {});

        // Switch faults while bytes flow: a blackhole on and off, everything off, everything back on.
        const schedule: FaultSpec[][] = [
          [...ALL_FAULTS, { type: 'blackhole', direction: 'both' }],
          ALL_FAULTS,
          [],
          ALL_FAULTS,
          [{ type: 'blackhole', side: 'client', direction: 'egress' }, ...ALL_FAULTS],
          ALL_FAULTS,
        ];
        for (const faults of schedule) {
          await new Promise((resolve) => setTimeout(resolve, 150));
          await proxy.setFaults(faults);
        }

        const [fromServer, fromClient] = await Promise.all([
          clientResult,
          sending.then(() => serverResult!),
          sending.then(() => serverWrite),
        ]);
        assert.equal(fromServer.bytes, toClient.length);
        assert.equal(fromServer.sha, sha(toClient));
        assert.equal(fromClient.bytes, toServer.length);
        assert.equal(fromClient.sha, sha(toServer));

        const faults = (await proxy.counters()).faults;
        for (const name of ['latency', 'per-op latency', 'jitter', 'packet_loss', 'bandwidth']) {
          const counters = faults.find((f) => f.name === name)!;
          assert.ok(counters.applications > 0, `${name} acted`);
          assert.ok(counters.bytesUpstream > 0 && counters.bytesDownstream > 0, `${name} saw both directions`);
        }
        assert.ok(faults.find((f) => f.name === 'packet_loss')!.segmentsLost > 0);
        assert.ok(faults.find((f) => f.name === 'blackhole')!.timeHeldMs > 0);
        await waitClose(client);
      } finally {
        client.destroy();
        await proxy.stop();
        await server.close();
      }
      assert.deepEqual(await settledHandles(baseline), baseline);
    });
  });
});
