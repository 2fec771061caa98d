/**
 * Load-generator benchmark, all against one trivial HTTP server in its own process, in one run:
 *
 * 1. idle round trip: the open-loop generator at 200 req/s on one connection; its service time
 *    (from the actual send, so free of the generator's scheduling) is the true latency of this
 *    server on this machine, the reference for the error figures below;
 * 2. accuracy: open loop at 1,000 and 5,000 req/s — requested vs achieved rate, and p50/p99
 *    latency (from the intended start) minus the idle round trip: what the generator adds,
 *    mostly Node's timer granularity (the send lag column);
 * 3. the highest open-loop rate sustained here: stepping the rate up until the generator falls
 *    behind (achieved < 98% of requested, or a growing queue: latency p99 > 50 ms, or errors);
 * 4. closed-loop maxima for comparison: autocannon 9 (through runCapacity) and wrk, when
 *    installed (`apt-get install wrk`); wrk is skipped with a note otherwise.
 *
 * Run: npx tsc -p . && node dist/bench/load.js
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { runCapacity, runOpenLoop, type OpenLoopResult } from '../src/load/index.js';

const CONNECTIONS = 50;
const RUN_MS = 5000;
const STEP_MS = 3000;

const SERVER_SOURCE = `
const http = require('node:http');
const server = http.createServer((request, response) => response.end('hello world'));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-e', SERVER_SOURCE], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const [port] = (await once(lines, 'line')) as [string];
  lines.close();
  return { child, url: `http://127.0.0.1:${port}/` };
}

const ms = (value: number | undefined): string => (value === undefined ? '—' : value.toFixed(3));
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(3)}`;

function openLoop(url: string, ratePerSecond: number, connections: number, durationMs: number): Promise<OpenLoopResult> {
  return runOpenLoop({ url, ratePerSecond, connections, durationMs, timeoutMs: 5000 });
}

function sustained(result: OpenLoopResult): boolean {
  return result.achievedRatePerSecond >= 0.98 * result.requested.ratePerSecond && result.errors === 0 && result.latency!.p99 <= 50;
}

interface WrkFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

function runWrk(url: string): WrkFigures | string {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error) return 'wrk not installed (apt-get install wrk); skipped';
  const run = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${RUN_MS / 1000}s`, '--latency', url], { encoding: 'utf8' });
  const requestsPerSecond = /Requests\/sec:\s+([\d.]+)/.exec(run.stdout);
  const p50 = /^\s+50%\s+(\S+)/m.exec(run.stdout);
  const p99 = /^\s+99%\s+(\S+)/m.exec(run.stdout);
  if (!requestsPerSecond || !p50 || !p99) return `wrk output not understood: ${run.stdout}${run.stderr}`;
  return { requestsPerSecond: Number(requestsPerSecond[1]), p50Ms: toMs(p50[1]!), p99Ms: toMs(p99[1]!) };
}

async function main(): Promise<void> {
  const { child, url } = await startServer();
  try {
    console.log(`Trivial Node server in its own process at ${url}; ${CONNECTIONS} connections unless noted. Times in ms.\n`);

    const idle = await openLoop(url, 200, 1, 3000);
    const idleP50 = idle.serviceTime!.p50;
    const idleP99 = idle.serviceTime!.p99;
    console.log(`Idle round trip (200 req/s, 1 connection, service time): p50 ${ms(idleP50)}  p99 ${ms(idleP99)}`);
    console.log(`  (its latency from the intended start: p50 ${ms(idle.latency!.p50)}  p99 ${ms(idle.latency!.p99)})\n`);

    console.log('Open-loop accuracy');
    console.log('requested/s  achieved/s  achieved÷requested  latency p50 (−idle)   latency p99 (−idle)   service p50/p99    send lag p50/p99');
    for (const rate of [1000, 5000]) {
      const result = await openLoop(url, rate, CONNECTIONS, RUN_MS);
      const latency = result.latency!;
      console.log(
        [
          String(rate).padStart(11),
          result.achievedRatePerSecond.toFixed(1).padStart(10),
          (result.achievedRatePerSecond / rate).toFixed(4).padStart(18),
          `${ms(latency.p50)} (${signed(latency.p50 - idleP50)})`.padStart(20),
          `${ms(latency.p99)} (${signed(latency.p99 - idleP99)})`.padStart(21),
          `${ms(result.serviceTime!.p50)}/${ms(result.serviceTime!.p99)}`.padStart(18),
          `${ms(result.sendLag!.p50)}/${ms(result.sendLag!.p99)}`.padStart(18),
          result.errors > 0 ? `  errors ${result.errors}` : '',
        ].join('  '),
      );
    }

    console.log('\nHighest sustained open-loop rate (achieved ≥ 98% of requested, no errors, latency p99 ≤ 50 ms)');
    let best = 0;
    for (let rate = 5000; rate <= 40_000; rate += 2500) {
      const result = await openLoop(url, rate, CONNECTIONS, STEP_MS);
      const ok = sustained(result);
      console.log(
        `  ${String(rate).padStart(6)}/s → achieved ${result.achievedRatePerSecond.toFixed(0).padStart(6)}/s, ` +
          `p50 ${ms(result.latency!.p50)}, p99 ${ms(result.latency!.p99)}, errors ${result.errors}${ok ? '' : '  ✗'}`,
      );
      if (!ok) break;
      best = rate;
    }

    const autocannon = await runCapacity({ url, connections: CONNECTIONS, durationMs: RUN_MS, timeoutMs: 5000 });
    const wrk = runWrk(url);

    console.log('\nSide by side (same server, same run)');
    console.log(`  open loop (ours), highest sustained rate     ${String(best).padStart(8)} req/s`);
    console.log(
      `  autocannon 9 closed loop, maximum            ${autocannon.requestsPerSecond.toFixed(0).padStart(8)} req/s` +
        `  (p50 ${autocannon.latencyWholeMs.p50} ms, p99 ${autocannon.latencyWholeMs.p99} ms, whole ms)`,
    );
    if (typeof wrk === 'string') console.log(`  wrk: ${wrk}`);
    else {
      console.log(
        `  wrk -t1 closed loop, maximum                 ${wrk.requestsPerSecond.toFixed(0).padStart(8)} req/s  (p50 ${ms(wrk.p50Ms)} ms, p99 ${ms(wrk.p99Ms)} ms)`,
      );
    }
    console.log(`  ours ÷ autocannon: ${(best / autocannon.requestsPerSecond).toFixed(2)}`);
    if (typeof wrk !== 'string') console.log(`  ours ÷ wrk: ${(best / wrk.requestsPerSecond).toFixed(2)}   autocannon ÷ wrk: ${(autocannon.requestsPerSecond / wrk.requestsPerSecond).toFixed(2)}`);
    console.log('\nOpen loop holds a fixed rate and measures from each request\'s intended start; the closed-loop tools send as fast as responses return.');
  } finally {
    child.kill();
  }
}

await main();
