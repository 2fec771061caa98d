/**
 * Latency fault accuracy against the simplest proxy that could do it, side by side in one run
 * (bench/lib/latency-vs-simple.ts): keep-alive HTTP round trips through faultline's latency fault
 * (responses delayed BENCH_DELAY_MS, default 10) and through a 12-line setTimeout proxy, each in a
 * process of its own, BENCH_CONNECTIONS (default 10) connections, rounds interleaved.
 *
 * Pass line: faultline's median error within 0.2 ms and its p99 error within 1 ms of the simple
 * proxy's (or better), and no round trip early (shorter than the delay). Exits 1 on a miss.
 * `npm run bench:check -- proxy.latency-accuracy` holds the same target.
 *
 *   npm run build && node dist/bench/latency-fault.js   (BENCH_ROUNDS=5, BENCH_TRIPS=100 per connection per round)
 */
import { measureLatencyAgainstSimple, type ProxyErrors } from './lib/latency-vs-simple.js';

const delayMs = Number(process.env['BENCH_DELAY_MS'] ?? 10);
const options = {
  delayMs,
  rounds: Number(process.env['BENCH_ROUNDS'] ?? 5),
  trips: Number(process.env['BENCH_TRIPS'] ?? 100),
  connections: Number(process.env['BENCH_CONNECTIONS'] ?? 10),
};
const run = await measureLatencyAgainstSimple(options);
const row = (name: string, side: ProxyErrors) =>
  `${name.padEnd(26)}${side.median.toFixed(3).padStart(9)}${side.p99.toFixed(3).padStart(9)}${side.max.toFixed(3).padStart(10)}${String(side.early).padStart(7)}\n`;
process.stdout.write(
  `Latency ${delayMs} ms on responses, ${options.connections} ` +
    `keep-alive connections × ${options.trips} round trips × ${options.rounds} ` +
    `interleaved rounds; direct median ${run.directMedianMs.toFixed(3)} ` +
    `ms\n`,
);
process.stdout.write(
  `${'error vs requested (ms)'.padEnd(26)}${'median'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(10)}${'early'.padStart(7)}\n`,
);
process.stdout.write(row('faultline latency fault', run.faultline));
process.stdout.write(row('12-line setTimeout proxy', run.simple));
const medianGap = run.faultline.median - run.simple.median;
const p99Gap = run.faultline.p99 - run.simple.p99;
const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(3)}`;
const pass = medianGap <= 0.2 && p99Gap <= 1 && run.faultline.early === 0;
process.stdout.write(
  `${pass ? 'PASS' : 'FAIL'} median error ${signed(medianGap)} ms vs the simple proxy (target ≤ +0.2), ` +
    `p99 ${signed(p99Gap)} ms (target ≤ +1), early round trips ${run.faultline.early} (target 0)\n`,
);
process.exitCode = pass ? 0 : 1;
