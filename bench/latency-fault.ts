/**
 * Latency fault accuracy against the simplest proxy that could do it, side by side in one run:
 * keep-alive HTTP round trips through faultline's latency fault (a TCP mapping, responses delayed
 * BENCH_DELAY_MS, default 10) and through a 12-line setTimeout proxy delaying every response
 * chunk as much. Each proxy and the upstream run in processes of their own; BENCH_CONNECTIONS
 * (default 10) connections each make round trips one after another, rounds interleaved.
 *
 * The error of a round trip is its time minus the delay minus the median direct round trip.
 * Pass line: faultline's median error within 0.2 ms and its p99 error within 1 ms of the simple
 * proxy's (or better), and no round trip early (shorter than the delay). Exits 1 on a miss.
 *
 *   npm run build && node dist/bench/latency-fault.js   (BENCH_ROUNDS=5, BENCH_TRIPS=100 per connection per round)
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { median, quantile, serve, type Served } from './servers.js';

const DELAY = Number(process.env['BENCH_DELAY_MS'] ?? 10);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const TRIPS = Number(process.env['BENCH_TRIPS'] ?? 100);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
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

async function load(port: number): Promise<number[]> {
  const all = await Promise.all(Array.from({ length: CONNECTIONS }, () => roundTrips(port, TRIPS)));
  return all.flat();
}

async function main(): Promise<number> {
  const started: Served[] = [];
  try {
    const upstream = await serve('upstream');
    started.push(upstream);
    const faultline = await serve('tcp-latency', upstream.port, DELAY);
    const simple = await serve('simple-latency', upstream.port, DELAY);
    started.push(faultline, simple);
    const samples: Record<'direct' | 'faultline' | 'simple', number[]> = { direct: [], faultline: [], simple: [] };
    const ports = { direct: upstream.port, faultline: faultline.port, simple: simple.port };
    for (const port of Object.values(ports)) await load(port); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, port] of Object.entries(ports) as Array<[keyof typeof samples, number]>) samples[name].push(...(await load(port)));
    }
    const base = median(samples.direct);
    const errors = (values: number[]) => values.map((v) => v - DELAY - base);
    const ours = errors(samples.faultline);
    const theirs = errors(samples.simple);
    const row = (name: string, values: number[], raw: number[]) =>
      `${name.padEnd(26)}${median(values).toFixed(3).padStart(9)}${quantile(values, 0.99).toFixed(3).padStart(9)}${Math.max(...values).toFixed(3).padStart(10)}${Math.min(...raw).toFixed(3).padStart(10)}\n`;
    process.stdout.write(`Latency ${DELAY} ms on responses, ${CONNECTIONS} keep-alive connections × ${TRIPS} round trips × ${ROUNDS} interleaved rounds; direct median ${base.toFixed(3)} ms\n`);
    process.stdout.write(`${'error vs requested (ms)'.padEnd(26)}${'median'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(10)}${'min trip'.padStart(10)}\n`);
    process.stdout.write(row('faultline latency fault', ours, samples.faultline));
    process.stdout.write(row('12-line setTimeout proxy', theirs, samples.simple));
    const medianGap = median(ours) - median(theirs);
    const p99Gap = quantile(ours, 0.99) - quantile(theirs, 0.99);
    const early = samples.faultline.filter((trip) => trip < DELAY).length;
    const pass = medianGap <= 0.2 && p99Gap <= 1 && early === 0;
    process.stdout.write(
      `${pass ? 'PASS' : 'FAIL'} median error ${medianGap >= 0 ? '+' : ''}${medianGap.toFixed(3)} ms vs the simple proxy (target ≤ +0.2), ` +
        `p99 ${p99Gap >= 0 ? '+' : ''}${p99Gap.toFixed(3)} ms (target ≤ +1), early round trips ${early} (target 0)\n`,
    );
    return pass ? 0 : 1;
  } finally {
    await Promise.all(started.map((served) => served.stop()));
  }
}

process.exitCode = await main();
