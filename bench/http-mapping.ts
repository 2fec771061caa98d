/**
 * HTTP mapping throughput against a bare node:http reverse proxy, side by side in one run:
 * small keep-alive exchanges per second through each, measured by wrk (10 connections, one
 * thread), rounds interleaved, medians compared. Every server runs in a process of its own.
 *
 *   direct            the upstream itself (node:http answering "ok")
 *   bare node proxy   node:http server + http.request with a keep-alive agent (the yardstick)
 *   http mapping      faultline's HTTP mapping, no fault
 *   nginx             nginx as a reverse proxy, one worker (for reference; installed when missing)
 *
 * Pass line: http mapping ≥ 1.0× the bare node proxy (the stretch goal, 1.5×, is printed).
 * Exits 1 on a miss, 2 when wrk is missing and cannot be installed.
 *
 *   npm run build && node dist/bench/http-mapping.js   (BENCH_ROUNDS=5, BENCH_SECONDS=3, BENCH_CONNECTIONS=10)
 */
import { measureHttpMapping } from './lib/http-mapping.js';
import { ensureCommand, median } from './servers.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
const TARGET = 1.0;
const STRETCH = 1.5;

async function main(): Promise<number> {
  if (!ensureCommand('wrk', 'wrk')) {
    process.stderr.write('wrk is needed and could not be installed\n');
    return 2;
  }
  const samples = await measureHttpMapping({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, nginx: true });
  const bare = median(samples['bare node proxy']!);
  process.stdout.write(
    `HTTP exchanges/s, wrk -c${CONNECTIONS} keep-alive, median of ${ROUNDS} interleaved rounds × ${SECONDS} s\n`,
  );
  process.stdout.write(`${'target'.padEnd(18)}${'req/s'.padStart(10)}  × bare node proxy   rounds\n`);
  for (const [name, values] of Object.entries(samples)) {
    const value = median(values);
    process.stdout.write(
      `${name.padEnd(18)}${value.toFixed(0).padStart(10)}  ` +
        `${(value / bare).toFixed(2).padStart(6)}×            ${values.map((v) => v.toFixed(0)).join(' ')}\n`,
    );
  }
  const ratio = median(samples['http mapping']!) / bare;
  const pass = ratio >= TARGET;
  process.stdout.write(
    `${pass ? 'PASS' : 'FAIL'} http mapping = ${ratio.toFixed(2)}× ` +
      `bare node proxy (target ≥ ${TARGET.toFixed(1)}×, stretch ` +
      `${STRETCH.toFixed(1)}×: ${ratio >= STRETCH ? 'met' : 'not met'})\n`,
  );
  return pass ? 0 : 1;
}

process.exitCode = await main();
