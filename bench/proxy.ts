/**
 * Fault proxy benchmark, every figure measured side by side in one run on loopback:
 *
 * 1. Bulk throughput (BENCH_PROXY_BYTES, default 1 GiB, best of 3 interleaved rounds) and 64-byte
 *    round trips (p50/p99 over 20,000 after 2,000 warm-up): direct, a bare `net` pipe proxy in
 *    this process, faultline with no fault, faultline with a zero-delay per-chunk latency fault.
 *    Targets: no-fault throughput ≥ 90% of the bare pipe, p50 round trip ≤ 1.2× the bare pipe.
 * 2. Fault accuracy: requested vs measured latency, bandwidth and loss.
 * 3. Memory: resident-set growth while a sender pushes 512 MB into a blackhole (with backpressure),
 *    then the 512 MB delivered once it is switched off.
 *
 * Run: npx tsc -p . && node dist/bench/proxy.js
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startProxy, type FaultSpec, type RunningProxy } from '../src/proxy/index.js';
import {
  connect,
  destroyAndWait,
  drained,
  echo,
  readBytes,
  readToEnd,
  startServer,
  type TestServer,
} from '../test/fixtures/proxy/net.js';
import { bulkRate, roundTrips, sendBulk, startBarePipe } from './lib/net-paths.js';

const MB = 1024 * 1024;
const BULK_BYTES = Number(process.env['BENCH_PROXY_BYTES'] ?? 1024 * MB);
const CHUNK = randomBytes(64 * 1024);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

interface Path {
  name: string;
  port: number;
}

async function overhead(): Promise<void> {
  const bulkServer = await startServer((socket) => socket.once('data', () => void sendBulk(socket, BULK_BYTES)));
  const echoServer = await startServer(echo);
  const zeroLatency: FaultSpec[] = [{ type: 'latency', latencyMs: 0, perOp: true, direction: 'both' }];
  const closers: Array<() => Promise<void>> = [];
  const pathsFor = async (target: TestServer): Promise<Path[]> => {
    const pipe = await startBarePipe(target.port);
    const plain = await startProxy({ mappings: [`0=127.0.0.1:${target.port}`] });
    const faulted = await startProxy({ mappings: [`0=127.0.0.1:${target.port}`], faults: zeroLatency });
    closers.push(pipe.close, plain.stop, faulted.stop);
    return [
      { name: 'direct', port: target.port },
      { name: 'bare net pipe proxy', port: pipe.port },
      { name: 'faultline, no fault', port: plain.ports[0]! },
      { name: 'faultline, latency 0 ms per chunk', port: faulted.ports[0]! },
    ];
  };
  const bulkPaths = await pathsFor(bulkServer);
  const rttPaths = await pathsFor(echoServer);

  const best = new Map<string, number>();
  for (let round = 0; round < 3; round++) {
    for (const path of bulkPaths)
      best.set(path.name, Math.max(best.get(path.name) ?? 0, await bulkRate(path.port, BULK_BYTES)));
  }
  const rtt = new Map<string, { p50: number; p99: number }>();
  for (const path of rttPaths) rtt.set(path.name, await roundTrips(path.port, 20_000, 2000));

  const pipe = bulkPaths[1]!.name;
  out(`## Overhead (bulk ${(BULK_BYTES / MB).toFixed(0)} MiB, best of 3; 20,000 round trips of 64 B)`);
  out();
  out('| path | throughput MB/s | vs bare pipe | RTT p50 µs | p50 vs bare pipe | RTT p99 µs |');
  out('|---|---|---|---|---|---|');
  for (const path of bulkPaths) {
    const t = best.get(path.name)!;
    const r = rtt.get(path.name)!;
    out(
      `| ${path.name} | ${(t / 1e6).toFixed(0)} | ` +
        `${(t / best.get(pipe)!).toFixed(2)}× | ${r.p50.toFixed(1)} | ` +
        `${(r.p50 / rtt.get(pipe)!.p50).toFixed(2)}× | ${r.p99.toFixed(1)} ` +
        `|`,
    );
  }
  out();
  for (const close of closers) await close();
  await bulkServer.close();
  await echoServer.close();
}

/** Runs `body` with a proxy in front of `server` carrying `faults`. */
async function through<T>(
  server: TestServer,
  faults: FaultSpec[],
  body: (proxy: RunningProxy) => Promise<T>,
): Promise<T> {
  const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], faults, seed: 1 });
  try {
    return await body(proxy);
  } finally {
    await proxy.stop();
  }
}

async function accuracy(): Promise<void> {
  const rows: string[] = [];
  const echoServer = await startServer(echo);
  const measureRtt = async (port: number, count: number): Promise<number[]> => {
    const client = await connect(port);
    const trips: number[] = [];
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      client.write('ping');
      await readBytes(client, 4);
      trips.push(performance.now() - start);
    }
    await destroyAndWait(client);
    return trips.sort((a, b) => a - b);
  };
  const base = await through(echoServer, [], async (proxy) => measureRtt(proxy.ports[0]!, 50));
  const baseMedian = base[25]!;
  for (const latencyMs of [10, 100, 500]) {
    const trips = await through(echoServer, [{ type: 'latency', latencyMs }], async (proxy) =>
      measureRtt(proxy.ports[0]!, latencyMs === 500 ? 6 : 20),
    );
    const added = trips.map((t) => t - baseMedian);
    rows.push(
      `| latency | ${latencyMs} ms per response | median ${added[added.length >> 1]!.toFixed(2)} ` +
        `ms, max ${added.at(-1)!.toFixed(2)} ms (${trips.length} round ` +
        `trips) | ${(added[added.length >> 1]! / latencyMs).toFixed(3)} |`,
    );
  }
  await echoServer.close();

  for (const [label, rate] of [
    ['64 KB/s', 64_000],
    ['1 MB/s', 1e6],
    ['10 MB/s', 10e6],
  ] as const) {
    const payload = randomBytes(rate * 2);
    const server = await startServer((socket) => socket.once('data', () => socket.end(payload)));
    const measured = await through(server, [{ type: 'bandwidth', bytesPerSecond: rate }], async (proxy) => {
      const client = await connect(proxy.ports[0]!);
      const done = readToEnd(client);
      const start = performance.now();
      client.write('go');
      const got = await done;
      const seconds = (performance.now() - start) / 1000;
      await destroyAndWait(client);
      return got.length / seconds;
    });
    await server.close();
    rows.push(
      `| bandwidth | ${label} | ${(measured / 1e3).toFixed(1)} kB/s over 2 s | ${(measured / rate).toFixed(3)} |`,
    );
  }

  // 20% loss stalls so often (tail losses, lost retransmissions) that 1 MiB already takes seconds.
  for (const [lossRate, size] of [
    [0.01, 4 * MB],
    [0.05, 4 * MB],
    [0.2, MB],
  ] as const) {
    const lossPayload = randomBytes(size);
    const lossServer = await startServer((socket) => socket.end(lossPayload));
    const figures = await through(lossServer, [{ type: 'packet_loss', lossRate, rttMs: 5 }], async (proxy) => {
      const start = performance.now();
      const client = await connect(proxy.ports[0]!);
      const got = await readToEnd(client);
      const elapsed = performance.now() - start;
      await destroyAndWait(client);
      if (!got.equals(lossPayload)) throw new Error('loss corrupted the stream');
      const counters = proxy.counters().faults[0]!;
      return { ...counters, elapsed };
    });
    await lossServer.close();
    const measured = figures.segmentsLost / figures.segments;
    rows.push(
      `| packet_loss (rtt 5 ms) | ${(lossRate * 100).toFixed(0)}% of ` +
        `segments | ${(measured * 100).toFixed(2)}% ` +
        `(${figures.segmentsLost}/${figures.segments}); ${figures.applications} ` +
        `stalls, ${(figures.stallMs / 1000).toFixed(2)} s stalled of ${(figures.elapsed / 1000).toFixed(2)} ` +
        `s for ${size / MB} MiB | ${(measured / lossRate).toFixed(3)} |`,
    );
  }

  out(`## Fault accuracy (latency: added round trip over the no-fault median ${(baseMedian * 1000).toFixed(0)} µs)`);
  out();
  out('| fault | requested | measured | measured / requested |');
  out('|---|---|---|---|');
  for (const row of rows) out(row);
  out();
}

async function memory(): Promise<void> {
  const total = 512 * MB;
  let received = 0;
  const server = await startServer((socket) => socket.on('data', (d: Buffer) => (received += d.length)));
  const proxy = await startProxy({
    mappings: [`0=127.0.0.1:${server.port}`],
    faults: [{ type: 'blackhole', side: 'client' }],
  });
  global.gc?.();
  await sleep(100);
  const before = process.memoryUsage().rss;
  const client = await connect(proxy.ports[0]!);
  let sent = 0;
  const sending = (async () => {
    while (sent < total) {
      sent += CHUNK.length;
      if (!client.write(CHUNK)) await drained(client);
    }
    client.end();
  })();
  let peak = before;
  let queuedPeak = 0;
  for (let i = 0; i < 40; i++) {
    await sleep(50);
    peak = Math.max(peak, process.memoryUsage().rss);
    queuedPeak = Math.max(queuedPeak, proxy.counters().mappings[0]!.bytesQueued);
  }
  const pushedWhileHeld = sent;
  const receivedWhileHeld = received;
  proxy.setFaults([]);
  await sending;
  while (received < total) await sleep(20);
  out('## Memory: 512 MB pushed into a blackhole');
  out();
  out('| measure | value |');
  out('|---|---|');
  out(
    `| bytes the sender got into the socket during a 2 s hold | ${(pushedWhileHeld / MB).toFixed(1)} ` +
      `MiB (backpressure stopped it) |`,
  );
  out(`| bytes that reached the target during the hold | ${receivedWhileHeld} |`);
  out(`| peak bytes queued inside the proxy | ${(queuedPeak / MB).toFixed(2)} MiB |`);
  out(
    `| resident-set growth during the hold (whole process) | ${((peak - before) / MB).toFixed(1)} ` +
      `MiB (target < 64 MiB) |`,
  );
  out(
    `| bytes delivered after the blackhole was switched off | ${(received / MB).toFixed(0)} ` +
      `MiB of ${(total / MB).toFixed(0)} MiB |`,
  );
  out();
  await destroyAndWait(client);
  await proxy.stop();
  await server.close();
}

out(`# faultline proxy benchmark (Node ${process.version}, ${(await import('node:os')).cpus().length} CPUs)`);
out();
await overhead();
await accuracy();
await memory();
