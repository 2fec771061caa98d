/**
 * Loopback paths for proxy benchmarks: a bulk sender, a bare `net` pipe proxy (the yardstick a
 * fault proxy is held to), and the two measurements taken through any path: bulk throughput and
 * small round trips. Shared by bench/proxy.ts and bench/checks/proxy.ts.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { connect, destroyAndWait, drained, readBytes } from '../../test/fixtures/proxy/net.js';

const CHUNK = randomBytes(64 * 1024);

/** Writes `total` bytes of a 64 KiB random chunk repeated, with backpressure, then ends. */
export async function sendBulk(socket: net.Socket, total: number): Promise<void> {
  for (let sent = 0; sent < total; sent += CHUNK.length) {
    if (!socket.write(sent + CHUNK.length <= total ? CHUNK : CHUNK.subarray(0, total - sent))) await drained(socket);
  }
  socket.end();
}

/** A bare pipe proxy, the yardstick: net.createServer + pipe both ways, noDelay. */
export async function startBarePipe(targetPort: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ port: targetPort, host: '127.0.0.1', noDelay: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.once('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      await Promise.all([...sockets].map(destroyAndWait));
      await closed;
    },
  };
}

/** Bytes per second of one bulk transfer through `port` from a server that sends `bytes` when asked. */
export async function bulkRate(port: number, bytes: number): Promise<number> {
  const client = await connect(port);
  let received = 0;
  const start = performance.now();
  client.on('data', (d: Buffer) => (received += d.length));
  client.write('go');
  await new Promise((resolve) => client.once('end', resolve));
  const seconds = (performance.now() - start) / 1000;
  await destroyAndWait(client);
  if (received !== bytes) throw new Error(`received ${received} of ${bytes} bytes`);
  return received / seconds;
}

/** p50 and p99, in µs, of `count` 64-byte round trips through `port` to an echo server, after `warmUp` more. */
export async function roundTrips(port: number, count: number, warmUp: number): Promise<{ p50: number; p99: number }> {
  const client = await connect(port);
  const message = Buffer.alloc(64, 7);
  const samples: number[] = [];
  for (let i = 0; i < warmUp + count; i++) {
    const start = performance.now();
    client.write(message);
    await readBytes(client, 64);
    if (i >= warmUp) samples.push(performance.now() - start);
  }
  await destroyAndWait(client);
  samples.sort((a, b) => a - b);
  return {
    p50: samples[Math.floor(samples.length * 0.5)]! * 1000,
    p99: samples[Math.floor(samples.length * 0.99)]! * 1000,
  };
}
