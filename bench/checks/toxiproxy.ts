/**
 * `faultline toxiproxy` beside the real toxiproxy-server, each a process of its own on the same
 * machine, each with one proxy in front of the same loopback servers: bulk throughput with no
 * toxic, the keep-alive round trip's p50, and how far a `latency` toxic's added delay is from
 * what it asked. Rounds interleaved so load falls on both alike.
 */
import net from 'node:net';
import { echo, startServer } from '../../test/fixtures/proxy/net.js';
import {
  call,
  realToxiproxyPath,
  startFaultlineToxiproxy,
  startRealToxiproxy,
  type ApiProcess,
} from '../../test/fixtures/toxiproxy.js';
import { interleaved, median, type BenchCheck, type Row } from '../lib/check.js';
import { bulkRate, roundTrips, sendBulk } from '../lib/net-paths.js';

const BULK_BYTES = 64 * 1024 * 1024;
const LATENCY_MS = 50;

/** Creates proxy `name` to `upstreamPort` on `api`; returns its port. */
async function proxyOn(api: ApiProcess, name: string, upstreamPort: number): Promise<number> {
  const answer = await call(api.url, 'POST', '/proxies', {
    name,
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${upstreamPort}`,
  });
  if (answer.status !== 201) throw new Error(`${api.name}: POST /proxies answered ${answer.status}`);
  return Number((answer.body as { listen: string }).listen.split(':')[1]);
}

export const checks: BenchCheck[] = [
  {
    name: 'toxiproxy.vs-toxiproxy',
    measures:
      "faultline toxiproxy's proxies beside toxiproxy-server's (each " +
      'its own process): 64 MiB bulk throughput with no toxic, the ' +
      "keep-alive round trip's p50 (64 bytes, 400 trips), and the error " +
      "of a 50 ms latency toxic's added delay (p50 with it minus p50 " +
      'without)',
    peer:
      'the real toxiproxy-server (built by ' +
      '../shared/tools/build-toxiproxy.sh), same upstreams, one ' +
      'unmeasured warm-up transfer each, rounds interleaved (medians of ' +
      '5)',
    target: "throughput at least 1.0× Toxiproxy's; round trip at most 1.0× Toxiproxy's; latency error within ±2 ms",
    tests: ['test/toxiproxy.test.ts', 'test/toxiproxy-compare.test.ts'],
    timeoutMs: 300_000,
    async run(context) {
      const real = realToxiproxyPath();
      if (!real)
        throw new Error(
          'toxiproxy-server is not built here: bash ../shared/tools/build-toxiproxy.sh /tmp/toxiproxy-build',
        );
      const bulk = await startServer((socket: net.Socket) =>
        socket.once('data', () => void sendBulk(socket, BULK_BYTES)),
      );
      const echoServer = await startServer(echo);
      const apis = { faultline: await startFaultlineToxiproxy(), toxiproxy: await startRealToxiproxy(real) };
      try {
        const ports = {
          faultline: {
            bulk: await proxyOn(apis.faultline, 'bulk', bulk.port),
            echo: await proxyOn(apis.faultline, 'echo', echoServer.port),
          },
          toxiproxy: {
            bulk: await proxyOn(apis.toxiproxy, 'bulk', bulk.port),
            echo: await proxyOn(apis.toxiproxy, 'echo', echoServer.port),
          },
        };
        // One unmeasured transfer through each side first: whichever side went first otherwise paid
        // for this process's own cold start (its bulk sender and reader), 30-50 MB/s whoever it was.
        context.log('warm-up (1 round, not counted)');
        await interleaved(1, {
          faultline: () => bulkRate(ports.faultline.bulk, BULK_BYTES),
          toxiproxy: () => bulkRate(ports.toxiproxy.bulk, BULK_BYTES),
        });
        context.log('throughput (5 rounds)');
        const rates = await interleaved(5, {
          faultline: () => bulkRate(ports.faultline.bulk, BULK_BYTES),
          toxiproxy: () => bulkRate(ports.toxiproxy.bulk, BULK_BYTES),
        });
        context.log('round trips (5 rounds)');
        const trips = await interleaved(5, {
          faultline: async () => (await roundTrips(ports.faultline.echo, 400, 50)).p50,
          toxiproxy: async () => (await roundTrips(ports.toxiproxy.echo, 400, 50)).p50,
        });
        for (const api of Object.values(apis)) {
          const added = await call(api.url, 'POST', '/proxies/echo/toxics', {
            type: 'latency',
            attributes: { latency: LATENCY_MS },
          });
          if (added.status !== 200) throw new Error(`${api.name}: adding the latency toxic answered ${added.status}`);
        }
        context.log('latency toxic (5 rounds)');
        const delayed = await interleaved(5, {
          faultline: async () => (await roundTrips(ports.faultline.echo, 20, 3)).p50,
          toxiproxy: async () => (await roundTrips(ports.toxiproxy.echo, 20, 3)).p50,
        });
        // roundTrips gives microseconds.
        const error = (side: 'faultline' | 'toxiproxy'): number =>
          (median(delayed[side]) - median(trips[side])) / 1000 - LATENCY_MS;
        const rows: Row[] = [
          {
            label: 'throughput, no toxic',
            ours: { label: 'faultline', value: median(rates.faultline) / 1e6, unit: 'MB/s' },
            peer: { label: 'toxiproxy', value: median(rates.toxiproxy) / 1e6, unit: 'MB/s' },
            target: { on: 'ratio', atLeast: 1.0 },
          },
          {
            label: 'round trip p50, no toxic',
            ours: { label: 'faultline', value: median(trips.faultline), unit: 'µs' },
            peer: { label: 'toxiproxy', value: median(trips.toxiproxy), unit: 'µs' },
            target: { on: 'ratio', atMost: 1.0 },
          },
          {
            label: `latency toxic ${LATENCY_MS} ms, error of the added delay`,
            ours: { label: 'faultline', value: error('faultline'), unit: 'ms' },
            peer: { label: 'toxiproxy', value: error('toxiproxy'), unit: 'ms' },
            target: { on: 'value', atLeast: -2, atMost: 2 },
          },
        ];
        return rows;
      } finally {
        await Promise.all([apis.faultline.stop(), apis.toxiproxy.stop()]);
        await bulk.close();
        await echoServer.close();
      }
    },
  },
];
