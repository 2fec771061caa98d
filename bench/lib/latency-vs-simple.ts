/**
 * The latency fault against the simplest proxy that could do it, side by side in one run:
 * keep-alive HTTP round trips through faultline's latency fault (a TCP mapping, responses delayed
 * `delayMs`) and through a 12-line setTimeout proxy delaying every response chunk as much
 * (bench/servers.ts). Each proxy and the upstream run in processes of their own; `connections`
 * connections each make round trips one after another, rounds interleaved (direct, faultline,
 * simple), after one warm-up round.
 *
 * The error of a round trip is its time minus the delay minus the median direct round trip; a
 * round trip shorter than the delay was released early.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { median, quantile, serve, type Served } from '../servers.js';

export interface LatencyRunOptions {
  delayMs: number;
  rounds: number;
  /** Round trips per connection per round. */
  trips: number;
  connections: number;
}

export interface ProxyErrors {
  /** Round-trip time − delay − direct median, ms, every round trip. */
  errors: number[];
  median: number;
  p99: number;
  max: number;
  /** Round trips shorter than the delay. */
  early: number;
}

export interface LatencyRun {
  directMedianMs: number;
  faultline: ProxyErrors;
  simple: ProxyErrors;
}

const REQUEST = Buffer.from('GET / HTTP/1.1\r\nhost: bench\r\n\r\n');

/** One keep-alive connection making `count` round trips; resolves with their times (ms). */
async function roundTrips(port: number, count: number): Promise<number[]> {
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const times: number[] = [];
  let received = '';
  let started = 0;
  let done: (() => void) | undefined;
  socket.on('data', (data: Buffer) => {
    received += data.toString('latin1');
    // The upstream answers "ok" with a content-length: the response is whole once it ends with it.
    if (received.includes('\r\n\r\n') && received.endsWith('ok')) {
      times.push(performance.now() - started);
      received = '';
      done?.();
    }
  });
  for (let i = 0; i < count; i++) {
    const answered = new Promise<void>((resolve) => (done = resolve));
    started = performance.now();
    socket.write(REQUEST);
    await answered;
  }
  socket.destroy();
  return times;
}

async function load(port: number, options: LatencyRunOptions): Promise<number[]> {
  const all = await Promise.all(Array.from({ length: options.connections }, () => roundTrips(port, options.trips)));
  return all.flat();
}

function errorsOf(trips: number[], delayMs: number, directMedianMs: number): ProxyErrors {
  const errors = trips.map((trip) => trip - delayMs - directMedianMs);
  return {
    errors,
    median: median(errors),
    p99: quantile(errors, 0.99),
    max: Math.max(...errors),
    early: trips.filter((trip) => trip < delayMs).length,
  };
}

export async function measureLatencyAgainstSimple(options: LatencyRunOptions): Promise<LatencyRun> {
  const started: Served[] = [];
  try {
    const upstream = await serve('upstream');
    started.push(upstream);
    const faultline = await serve('tcp-latency', upstream.port, options.delayMs);
    started.push(faultline);
    const simple = await serve('simple-latency', upstream.port, options.delayMs);
    started.push(simple);
    const trips: Record<'direct' | 'faultline' | 'simple', number[]> = { direct: [], faultline: [], simple: [] };
    const ports = { direct: upstream.port, faultline: faultline.port, simple: simple.port };
    for (const port of Object.values(ports)) await load(port, options); // warm-up
    for (let round = 0; round < options.rounds; round++) {
      for (const [name, port] of Object.entries(ports) as Array<[keyof typeof trips, number]>)
        trips[name].push(...(await load(port, options)));
    }
    const directMedianMs = median(trips.direct);
    return {
      directMedianMs,
      faultline: errorsOf(trips.faultline, options.delayMs, directMedianMs),
      simple: errorsOf(trips.simple, options.delayMs, directMedianMs),
    };
  } finally {
    await Promise.all(started.map((served) => served.stop()));
  }
}
