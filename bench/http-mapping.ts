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
import { execFile } from 'node:child_process';
import { ensureCommand, median, serve, serveNginx, type Served } from './servers.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 3);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 10);
const TARGET = 1.0;
const STRETCH = 1.5;

function wrk(port: number, seconds: number): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, `http://127.0.0.1:${port}/`], { timeout: (seconds + 30) * 1000 }, (error, stdout) => {
      const rate = /Requests\/sec:\s+([\d.]+)/.exec(String(stdout));
      if (error || !rate) reject(new Error(`wrk failed: ${error?.message ?? stdout}`));
      else resolve(Number(rate[1]));
    });
  });
}

async function main(): Promise<number> {
  if (!ensureCommand('wrk', 'wrk')) {
    process.stderr.write('wrk is needed and could not be installed\n');
    return 2;
  }
  const started: Served[] = [];
  try {
    const upstream = await serve('upstream');
    started.push(upstream);
    const targets: Record<string, Served> = {
      'direct': upstream,
      'bare node proxy': await serve('bare-http-proxy', upstream.port),
      'http mapping': await serve('http-mapping', upstream.port),
    };
    started.push(targets['bare node proxy']!, targets['http mapping']!);
    const nginx = await serveNginx(upstream.port);
    if (nginx) {
      targets['nginx'] = nginx;
      started.push(nginx);
    }
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
    for (const served of Object.values(targets)) await wrk(served.port, 1); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, served] of Object.entries(targets)) samples[name]!.push(await wrk(served.port, SECONDS));
    }
    const bare = median(samples['bare node proxy']!);
    process.stdout.write(`HTTP exchanges/s, wrk -c${CONNECTIONS} keep-alive, median of ${ROUNDS} interleaved rounds × ${SECONDS} s\n`);
    process.stdout.write(`${'target'.padEnd(18)}${'req/s'.padStart(10)}  × bare node proxy   rounds\n`);
    for (const [name, values] of Object.entries(samples)) {
      const value = median(values);
      process.stdout.write(`${name.padEnd(18)}${value.toFixed(0).padStart(10)}  ${(value / bare).toFixed(2).padStart(6)}×            ${values.map((v) => v.toFixed(0)).join(' ')}\n`);
    }
    const ratio = median(samples['http mapping']!) / bare;
    const pass = ratio >= TARGET;
    process.stdout.write(`${pass ? 'PASS' : 'FAIL'} http mapping = ${ratio.toFixed(2)}× bare node proxy (target ≥ ${TARGET.toFixed(1)}×, stretch ${STRETCH.toFixed(1)}×: ${ratio >= STRETCH ? 'met' : 'not met'})\n`);
    return pass ? 0 : 1;
  } finally {
    await Promise.all(started.map((served) => served.stop()));
  }
}

process.exitCode = await main();
