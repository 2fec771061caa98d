/**
 * Load-generator benchmark, all against one trivial HTTP server in its own process,
 * in one run. Every table interleaves its cases over ROUNDS rounds and prints the median, because
 * the 2-core machine is shared; the load average is printed at the start and the end.
 *
 * 1. idle round trip, straight to the server and through the in-process proxy: the open-loop
 *    generator at 200 req/s on one connection; its latency p99 is the reference the others are
 *    held to (what a lightly loaded generator and server give on this machine right now). The
 *    reference is the lowest of the rounds' p99s, not their median: a stall during an idle run
 *    (seen: 5.7 ms in two rounds of three, 1.7–3.3 ms otherwise) would raise the reference and so
 *    flatter every "p99 − idle" held to it;
 * 2. sharpness at 1k/5k/10k/20k req/s, no proxy and via the proxy: achieved ÷ requested, latency
 *    p50/p99 (from the intended start), p99 − idle p99, and the send lag p99 (intended start to
 *    the actual write: the part of the latency the generator alone adds, its timers and its
 *    event loop); connections open on demand (50 at the start, up to 1,000), and this process's
 *    CPU per request (the whole process: generator, and proxy when in the path). Two generators,
 *    interleaved in the same rounds: "same thread" runs on this process's main thread, with the
 *    proxy, as scenarios did before the generator thread; "own thread" (runOpenLoop's default)
 *    on the generator thread. ✓ = sustained (≥ 99% of the rate, no errors, p99 within 5 ms of
 *    the idle p99);
 * 2b. (headroom) the same against a raw-socket server with headroom (wrk's maximum on it shown;
 *    ~4× the node:http server's here), no proxy from 5k to 20k req/s and via the proxy at 5k and
 *    10k, each with its own idle reference, the p99 of the run's first 200 ms apart from the
 *    rest, both generators: tells the generator's own share (the bound on it) from the node:http
 *    server's saturation, which is what the sharpness table's 20k row mostly shows;
 * 3. on-demand connections against a fixed pool (maxConnections = connections = 10) at 1k/5k;
 * 4. the highest sustained open-loop rate, no proxy: achieved ≥ 99% of requested, no errors and
 *    latency p99 ≤ idle p99 + 5 ms, stepping up 2,500 req/s at a time until two steps in a row fail — then wrk's and
 *    autocannon's closed-loop maxima (50 connections) on the same server and the ratios;
 * 5. a 300 ms server at 50 req/s: on-demand connections open about rate × 0.3 s = 15, not 50;
 * 6. what a user runs: `faultline run latency --latency 0` as a spawned process at 1k and 5k
 *    req/s (the CLI's own process, proxy in the path), next to the module figure above.
 *
 * Run: npx tsc -p . && node dist/bench/load.js [--rounds N] [--sections sharpness,headroom,pool,sustained,slow,cli]
 * [--rates 1000,5000,10000,20000] (defaults shown: 3 rounds, every section, the sharpness rates;
 * the idle reference always runs).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runCapacity, runOpenLoop, type OpenLoopResult } from '../src/load/index.js';
import { planOpenLoop, runPlanned, type OpenLoopOptions } from '../src/load/open-loop.js';
import { startProxy } from '../src/proxy/index.js';

const ARGS = parseArgs(process.argv.slice(2));
const ROUNDS = ARGS.rounds;
const RUN_MS = 3000;
const RATES = ARGS.rates;
const CLOSED_LOOP_CONNECTIONS = 50;
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

const SERVER_SOURCE = `
const http = require('node:http');
const delay = Number(process.argv[1] || 0);
const server = http.createServer((request, response) => delay > 0 ? setTimeout(() => response.end('hello world'), delay) : response.end('hello world'));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/**
 * A server with headroom, for the generator's own figures: raw sockets, one canned response per
 * request head (no HTTP parsing beyond the blank line), so it answers several times faster than
 * the node:http server above on this machine (wrk's maximum is printed beside it).
 */
const LEAN_SERVER_SOURCE = `
const net = require('node:net');
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\\r\\nContent-Length: 11\\r\\n\\r\\nhello world');
const server = net.createServer({ noDelay: true }, (socket) => {
  let tail = '';
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    const text = tail + chunk.latin1Slice(0, chunk.length);
    let heads = 0, at = 0;
    for (let end; (end = text.indexOf('\\r\\n\\r\\n', at)) >= 0; at = end + 4) heads++;
    tail = text.slice(at);
    for (let k = 0; k < heads; k++) socket.write(RESPONSE);
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function startServer(
  delayMs = 0,
  source = SERVER_SOURCE,
): Promise<{ child: ChildProcess; url: string; port: number }> {
  const child = spawn(process.execPath, ['-e', source, String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const [port] = (await once(lines, 'line')) as [string];
  lines.close();
  return { child, url: `http://127.0.0.1:${port}/`, port: Number(port) };
}

function parseArgs(argv: string[]): { rounds: number; sections: Set<string>; rates: number[] } {
  const all = ['sharpness', 'headroom', 'pool', 'sustained', 'slow', 'cli'];
  let rounds = 3;
  let rates = [1000, 5000, 10_000, 20_000];
  let sections = new Set(all);
  for (let k = 0; k < argv.length; k++) {
    const arg = argv[k];
    if (arg === '--rounds') rounds = Number(argv[++k]);
    else if (arg === '--sections') sections = new Set((argv[++k] ?? '').split(','));
    else if (arg === '--rates') rates = (argv[++k] ?? '').split(',').map(Number);
    else {
      console.error(
        `usage: node dist/bench/load.js [--rounds N] [--sections ${all.join(',')}] [--rates 1000,5000,10000,20000]`,
      );
      process.exit(arg === '--help' ? 0 : 2);
    }
  }
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  if (rates.some((rate) => !(rate > 0))) throw new Error('--rates must be positive numbers, comma-separated');
  for (const section of sections)
    if (!all.includes(section)) throw new Error(`unknown section ${section}; known: ${all.join(', ')}`);
  return { rounds, sections, rates };
}

/**
 * Which thread the generator runs on: this process's main thread, shared with the in-process
 * proxy as in a scenario before the generator thread, or its own thread (runOpenLoop's default).
 * (The older before/after, on-demand growth at once vs deferred, is tested in load-open-loop.)
 */
interface Variant {
  name: string;
  thread: 'caller' | 'worker';
}
const VARIANTS: Variant[] = [
  { name: 'same thread', thread: 'caller' },
  { name: 'own thread', thread: 'worker' },
];

/** One run of a variant, after the same pause as openLoop(), with this process's CPU time. */
async function openLoopAs(
  variant: Variant,
  url: string,
  ratePerSecond: number,
  connections: number,
  maxConnections: number,
  durationMs = RUN_MS,
): Promise<OpenLoopResult & { cpuMs: number }> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  const options: OpenLoopOptions = { url, ratePerSecond, connections, maxConnections, durationMs, timeoutMs: 5000 };
  const before = process.cpuUsage(); // the whole process's: every thread
  // Through the proxy, the generator thread watches this thread's load as a scenario does.
  const result = await runPlanned(planOpenLoop(options), {
    ...options,
    thread: variant.thread,
    watchCallerThread: true,
  });
  const used = process.cpuUsage(before);
  return { ...result, cpuMs: (used.user + used.system) / 1000 };
}

const ms = (value: number | undefined): string => (value === undefined ? '—' : value.toFixed(2));
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** The 99th percentile (nearest rank) of unsorted values. */
function p99Of(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * One run, after a pause: an overloaded run leaves the server draining and hundreds of sockets
 * closing, and the next run must not pay for it.
 */
async function openLoop(
  url: string,
  ratePerSecond: number,
  connections: number,
  maxConnections: number,
  durationMs = RUN_MS,
): Promise<OpenLoopResult> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return runOpenLoop({ url, ratePerSecond, connections, maxConnections, durationMs, timeoutMs: 5000 });
}

/** Kept up: ≥ 99% of the requested rate, no errors, and latency p99 within 5 ms of the idle p99. */
function sustained(result: OpenLoopResult, idleP99: number): boolean {
  return (
    result.achievedRatePerSecond >= 0.99 * result.requested.ratePerSecond &&
    result.errors === 0 &&
    result.latency!.p99 <= idleP99 + 5
  );
}

/** The figures a table row shows, medians over rounds. */
interface Row {
  cpu: number[];
  ratio: number[];
  p50: number[];
  p99: number[];
  lag99: number[];
  service99: number[];
  peak: number[];
  queued: number[];
  errors: number[];
}

const emptyRow = (): Row => ({
  cpu: [],
  ratio: [],
  p50: [],
  p99: [],
  lag99: [],
  service99: [],
  peak: [],
  queued: [],
  errors: [],
});

function add(row: Row, result: OpenLoopResult & { cpuMs?: number }): void {
  if (result.cpuMs !== undefined) row.cpu.push((result.cpuMs * 1000) / result.requests); // µs per request
  row.ratio.push(result.achievedRatePerSecond / result.requested.ratePerSecond);
  row.p50.push(result.latency!.p50);
  row.p99.push(result.latency!.p99);
  row.lag99.push(result.sendLag!.p99);
  row.service99.push(result.serviceTime!.p99);
  row.peak.push(result.connectionsOpened);
  row.queued.push(result.queued);
  row.errors.push(result.errors);
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
  const run = spawnSync('wrk', ['-t1', `-c${CLOSED_LOOP_CONNECTIONS}`, `-d${RUN_MS / 1000}s`, '--latency', url], {
    encoding: 'utf8',
  });
  const requestsPerSecond = /Requests\/sec:\s+([\d.]+)/.exec(run.stdout);
  const p50 = /^\s+50%\s+(\S+)/m.exec(run.stdout);
  const p99 = /^\s+99%\s+(\S+)/m.exec(run.stdout);
  if (!requestsPerSecond || !p50 || !p99) return `wrk output not understood: ${run.stdout}${run.stderr}`;
  return { requestsPerSecond: Number(requestsPerSecond[1]), p50Ms: toMs(p50[1]!), p99Ms: toMs(p99[1]!) };
}

interface CliFigures {
  achieved: number;
  p50: number;
  p99: number;
  lag99: number;
}

/** `faultline run latency --latency 0` as a user runs it; the figures from its --json file. */
async function runCli(url: string, ratePerSecond: number): Promise<CliFigures | string> {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-'));
  try {
    const json = join(dir, 'run.json');
    const clients = 50;
    const args = [
      CLI,
      'run',
      'latency',
      '--url',
      url,
      '--latency',
      '0',
      '--duration',
      `${RUN_MS / 1000}s`,
      '--num-clients',
      String(clients),
      '--rps',
      String(ratePerSecond / clients),
      '--json',
      json,
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    // 3 (an SLO failed) and 4 (inconclusive) are verdicts: the figures are in the file all the same.
    if (code !== 0 && code !== 3 && code !== 4) return `exit ${code}: ${stderr.slice(0, 300)}`;
    const figures = JSON.parse(readFileSync(json, 'utf8')).run.load;
    return {
      achieved: figures.achievedRatePerSecond / ratePerSecond,
      p50: figures.latency.p50,
      p99: figures.latency.p99,
      lag99: figures.sendLag.p99,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const server = await startServer();
  const proxy = await startProxy({ mappings: [`0=127.0.0.1:${server.port}`], faults: [] });
  const paths = [
    ['no proxy', server.url],
    ['via proxy', `http://127.0.0.1:${proxy.ports[0]}/`],
  ] as const;
  try {
    console.log(
      `Trivial Node server in its own process at ${server.url}; the ` +
        `proxy in this process. Times in ms; medians of ${ROUNDS} ` +
        `interleaved rounds (the idle reference: the lowest).`,
    );
    console.log(`load average at the start: ${load()}\n`);
    // Warm both processes' JIT, the proxy and the generator on either thread before anything is measured.
    for (const variant of VARIANTS) {
      await openLoopAs(variant, server.url, 5000, 50, 1000, 1000);
      await openLoopAs(variant, paths[1][1], 2000, 50, 1000, 1000);
    }

    const idle = new Map<string, number[]>(paths.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, url] of paths) idle.get(name)!.push((await openLoop(url, 200, 1, 1, 2000)).latency!.p99);
    }
    // The lowest, not the median: a stall in the reference would flatter every row held to it.
    const idleP99 = new Map([...idle].map(([name, values]) => [name, Math.min(...values)]));
    for (const [name] of paths) {
      console.log(
        `Idle (200 req/s, 1 connection) ${name}: latency p99 ${ms(idleP99.get(name))} ` +
          `(the lowest of the rounds: ` +
          `${idle.get(name)!.map(ms).join(', ')})`,
      );
    }

    const rows = new Map<string, Row>();
    if (ARGS.sections.has('sharpness')) {
      console.log(
        '\nSharpness (50 connections at the start, up to 1,000 on ' +
          "demand); the generator on the proxy's thread and on its own, " +
          'side by side',
      );
      console.log(
        'path        requested/s  generator            achieved÷req  p50  ' +
          '    p99      p99−idle     send lag p99  service p99  opened  ' +
          'errors  CPU µs/req',
      );
      for (let round = 0; round < ROUNDS; round++) {
        for (const rate of RATES) {
          for (const [name, url] of paths) {
            for (const variant of VARIANTS) {
              const key = `${name}|${rate}|${variant.name}`;
              if (!rows.has(key)) rows.set(key, emptyRow());
              add(rows.get(key)!, await openLoopAs(variant, url, rate, 50, 1000));
            }
          }
        }
      }
      for (const [name] of paths) {
        for (const rate of RATES) {
          for (const variant of VARIANTS) {
            const row = rows.get(`${name}|${rate}|${variant.name}`)!;
            const overIdle = median(row.p99) - idleP99.get(name)!;
            const kept = median(row.ratio) >= 0.99 && median(row.errors) === 0 && overIdle <= 5;
            console.log(
              `${name.padEnd(10)}  ${String(rate).padStart(11)}  ${variant.name.padEnd(19)} ` +
                ` ${median(row.ratio).toFixed(4).padStart(12)}  ${ms(median(row.p50)).padStart(7)} ` +
                ` ${ms(median(row.p99)).padStart(7)}` +
                `  ${signed(overIdle).padStart(9)}${kept ? ' ✓' : '  '}  ${ms(median(row.lag99)).padStart(10)} ` +
                ` ${ms(median(row.service99)).padStart(11)}` +
                `  ${String(median(row.peak)).padStart(6)}  ${String(median(row.errors)).padStart(6)} ` +
                ` ${median(row.cpu).toFixed(0).padStart(10)}`,
            );
          }
        }
      }
    }

    if (ARGS.sections.has('headroom')) {
      // Is a miss at high rates the generator or the server? The same runs against a server with
      // headroom, the run's first 200 ms apart from the rest. The bounds: no proxy up to
      // 20k req/s, through the proxy (in this process, as in a scenario) up to 10k.
      const lean = await startServer(0, LEAN_SERVER_SOURCE);
      const leanProxy = await startProxy({ mappings: [`0=127.0.0.1:${lean.port}`], faults: [] });
      try {
        const wrk = runWrk(lean.url);
        console.log(
          `\nThe generator against a server with headroom (raw sockets, a ` +
            `canned response per request, its own process; ` +
            `wrk -t1 -c${CLOSED_LOOP_CONNECTIONS}: ` +
            `${typeof wrk === 'string' ? wrk : `${wrk.requestsPerSecond.toFixed(0)} req/s`}); ` +
            `one line per round, rounds interleaved`,
        );
        const leanPaths = [
          { name: 'no proxy', url: lean.url, rates: RATES.filter((rate) => rate >= 5000) },
          {
            name: 'via proxy',
            url: `http://127.0.0.1:${leanProxy.ports[0]}/`,
            rates: RATES.filter((rate) => rate >= 5000 && rate <= 10_000),
          },
        ];
        for (const path of leanPaths)
          for (const variant of VARIANTS) await openLoopAs(variant, path.url, 5000, 50, 1000, 1000);
        // Their own idle references, as above (the lowest of the rounds).
        const idleOf = new Map<string, number>();
        for (const path of leanPaths) {
          const rounds: number[] = [];
          for (let round = 0; round < ROUNDS; round++)
            rounds.push((await openLoop(path.url, 200, 1, 1, 2000)).latency!.p99);
          idleOf.set(path.name, Math.min(...rounds));
          console.log(
            `Idle (200 req/s, 1 connection) ${path.name}: latency p99 ${ms(Math.min(...rounds))} ` +
              `(the lowest of the rounds: ${rounds.map(ms).join(', ')})`,
          );
        }
        console.log(
          'path        requested/s  generator    achieved÷req  p99      p99 ' +
            'of the first 200 ms  p99 after them  send lag p99  opened  CPU ' +
            'µs/req',
        );
        const leanRows = new Map<string, Row>();
        for (let round = 0; round < ROUNDS; round++) {
          for (const path of leanPaths) {
            for (const rate of path.rates) {
              for (const variant of VARIANTS) {
                const key = `${path.name}|${rate}|${variant.name}`;
                if (!leanRows.has(key)) leanRows.set(key, emptyRow());
                const result = await openLoopAs(variant, path.url, rate, 50, 1000);
                add(leanRows.get(key)!, result);
                const early: number[] = [];
                const rest: number[] = [];
                const { intendedStartMs, latencyMs, count } = result.samples;
                for (let i = 0; i < count; i++) (intendedStartMs[i]! < 200 ? early : rest).push(latencyMs[i]!);
                console.log(
                  `${path.name.padEnd(10)}  ${String(rate).padStart(11)}  ${variant.name.padEnd(11)} ` +
                    ` ${(result.achievedRatePerSecond / rate).toFixed(4).padStart(12)} ` +
                    ` ${ms(result.latency!.p99).padStart(7)}` +
                    `  ${ms(p99Of(early)).padStart(23)}  ${ms(p99Of(rest)).padStart(14)} ` +
                    ` ${ms(result.sendLag!.p99).padStart(12)}` +
                    `  ${String(result.connectionsOpened).padStart(6)}  ${((result.cpuMs * 1000) / result.requests).toFixed(0).padStart(10)}`,
                );
              }
            }
          }
        }
        console.log('Medians of the rounds (✓: ≥ 99% of the rate, no errors, p99 within 5 ms of the idle p99):');
        for (const path of leanPaths) {
          for (const rate of path.rates) {
            for (const variant of VARIANTS) {
              const row = leanRows.get(`${path.name}|${rate}|${variant.name}`)!;
              const overIdle = median(row.p99) - idleOf.get(path.name)!;
              const kept = median(row.ratio) >= 0.99 && median(row.errors) === 0 && overIdle <= 5;
              console.log(
                `${path.name.padEnd(10)}  ${String(rate).padStart(11)}  ${variant.name.padEnd(11)} ` +
                  ` p99 ${ms(median(row.p99))}, p99 − idle ${signed(overIdle)}, ` +
                  `send lag p99 ${ms(median(row.lag99))}${kept ? ' ✓' : ''}`,
              );
            }
          }
        }
      } finally {
        await leanProxy.stop();
        lean.child.kill();
      }
    }

    if (ARGS.sections.has('pool')) {
      console.log('\nOn-demand connections vs a fixed pool (10 connections at the start), no proxy');
      console.log('requested/s  mode                 achieved÷req  p99      opened  queued');
      const pool = new Map<string, Row>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const rate of [1000, 5000]) {
          for (const [mode, max] of [
            ['fixed pool of 10', 10],
            ['on demand to 500', 500],
          ] as const) {
            const key = `${rate}|${mode}`;
            if (!pool.has(key)) pool.set(key, emptyRow());
            add(pool.get(key)!, await openLoop(server.url, rate, 10, max));
          }
        }
      }
      for (const [key, row] of pool) {
        const [rate, mode] = key.split('|');
        console.log(
          `${rate!.padStart(11)}  ${mode!.padEnd(19)}  ${median(row.ratio).toFixed(4).padStart(12)} ` +
            ` ${ms(median(row.p99)).padStart(7)}  ${String(median(row.peak)).padStart(6)} ` +
            ` ${median(row.queued)}`,
        );
      }
    }

    if (ARGS.sections.has('sustained')) {
      const noProxyIdle = idleP99.get('no proxy')!;
      const bound = noProxyIdle + 5;
      console.log(
        `\nHighest sustained open-loop rate, no proxy (achieved ≥ 99% of ` +
          `requested, no errors, latency p99 ≤ idle p99 + 5 ms = ` +
          `${ms(bound)}; ` +
          'best of 2 tries per step; the search ends after two failed steps ' +
          'in a row, since one stall on this shared machine can fail a ' +
          'step)',
      );
      let best = 0;
      let failedInARow = 0;
      for (let rate = 2500; rate <= 40_000 && failedInARow < 2; rate += 2500) {
        let ok = false;
        for (let attempt = 0; attempt < 2 && !ok; attempt++) {
          const result = await openLoop(server.url, rate, 50, 1000);
          ok = sustained(result, noProxyIdle);
          console.log(
            `  ${String(rate).padStart(6)}/s → achieved ` +
              `${result.achievedRatePerSecond.toFixed(0).padStart(6)}/s, p50 ` +
              `${ms(result.latency!.p50)}, ` +
              `p99 ${ms(result.latency!.p99)}, send lag p99 ` +
              `${ms(result.sendLag!.p99)}, errors ${result.errors}${ok ? '' : '  ✗'}`,
          );
        }
        failedInARow = ok ? 0 : failedInARow + 1;
        if (ok) best = rate;
      }

      const autocannon = await runCapacity({
        url: server.url,
        connections: CLOSED_LOOP_CONNECTIONS,
        durationMs: RUN_MS,
        timeoutMs: 5000,
      });
      const wrk = runWrk(server.url);
      console.log(`\nSide by side (same server, same run; closed loop with ${CLOSED_LOOP_CONNECTIONS} connections)`);
      console.log(`  open loop (ours), highest sustained rate     ${String(best).padStart(8)} req/s`);
      console.log(
        `  autocannon 9 closed loop, maximum            ${autocannon.requestsPerSecond.toFixed(0).padStart(8)} req/s` +
          `  (p50 ${autocannon.latencyWholeMs.p50} ms, p99 ${autocannon.latencyWholeMs.p99} ms, whole ms)`,
      );
      if (typeof wrk === 'string') console.log(`  wrk: ${wrk}`);
      else
        console.log(
          `  wrk -t1 closed loop, maximum                 ${wrk.requestsPerSecond.toFixed(0).padStart(8)} ` +
            `req/s  (p50 ${ms(wrk.p50Ms)} ms, p99 ${ms(wrk.p99Ms)} ms)`,
        );
      console.log(`  ours ÷ autocannon: ${(best / autocannon.requestsPerSecond).toFixed(2)}`);
      if (typeof wrk !== 'string') console.log(`  ours ÷ wrk: ${(best / wrk.requestsPerSecond).toFixed(2)}`);
    }

    if (ARGS.sections.has('slow')) {
      const slow = await startServer(300);
      try {
        const result = await runOpenLoop({
          url: slow.url,
          ratePerSecond: 50,
          connections: 1,
          maxConnections: 50,
          durationMs: RUN_MS,
          timeoutMs: 5000,
        });
        console.log(
          `\n300 ms server at 50 req/s, 1 connection at the start, up to ` +
            `50: connections opened ${result.connectionsOpened} ` +
            `(rate × 0.3 s = 15), queued ${result.queued} (at the cap ` +
            `${result.queuedAtCap}), latency p50 ${ms(result.latency!.p50)} ` +
            `p99 ${ms(result.latency!.p99)}`,
        );
      } finally {
        slow.child.kill();
      }
    }

    if (ARGS.sections.has('cli')) {
      console.log(
        '\nWhat a user runs: `faultline run latency --latency 0 ' +
          '--num-clients 50` (its own process, its proxy in the path), one ' +
          'run each',
      );
      for (const rate of [1000, 5000]) {
        const cli = await runCli(server.url, rate);
        const module = rows.get(`via proxy|${rate}|${VARIANTS[1]!.name}`);
        if (typeof cli === 'string') console.log(`  ${rate}/s: ${cli}`);
        else {
          console.log(
            `  ${String(rate).padStart(5)}/s  CLI: achieved÷req ` +
              `${cli.achieved.toFixed(4)}, p50 ${ms(cli.p50)}, p99 ` +
              `${ms(cli.p99)}, send lag p99 ${ms(cli.lag99)}` +
              (module ? `   module via proxy: p50 ${ms(median(module.p50))}, p99 ${ms(median(module.p99))}` : ''),
          );
        }
      }
    }
    console.log(`\nload average at the end: ${load()}`);
    console.log(
      "Open loop holds a fixed rate and measures from each request's " +
        'intended start; the closed-loop tools send as fast as responses ' +
        'return.',
    );
  } finally {
    await proxy.stop();
    server.child.kill();
  }
}

await main();
