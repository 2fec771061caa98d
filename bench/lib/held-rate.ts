/**
 * The highest rate a load path holds: the open-loop generator straight to an upstream; through a
 * fault proxy hosted on its own thread, with the mapping a scenario puts in front of an http url
 * (http://, read as HTTP: `scenario`) and with a plain TCP mapping (`proxy`); and hey (a
 * closed-loop peer, Debian's `hey`) straight to the same upstream. The upstream runs in a process
 * of its own (bench/servers.ts), so only the path under test shares this process.
 *
 * "Held" means: every request answered without error, the rate achieved within 2% of the rate
 * asked, and p99 latency at most the path's own idle p99 (at IDLE_RATE, median of IDLE_RUNS) +
 * HELD_MARGIN_MS. Rates climb the ladder, each path in turn at each rung (interleaved, so machine
 * load falls on all alike); a rung missed is measured once more (for every path alike, so that
 * one stall of this shared machine does not end a climb), and a path stops climbing at a rung
 * missed twice. Above 5,000 req/s the rungs are 15% apart, so that a ratio of two paths' held
 * rates is known to within a rung (the ladder 1k, 2k, 5k, 7.5k, 10k, 15k, 20k, 30k put 15k
 * against 30k, 0.5, for any truth from 15k to 19.9k against 30k or more), and they go past where
 * a direct path stopped (30k, the old top), so that its figure is its own and not the ladder's.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { HELPER_NAME } from '../../src/clock/index.js';
import { runOpenLoop } from '../../src/load/index.js';
import { mappingInFrontOf } from '../../src/proxy/mapping.js';
import { startHostedProxy, type HostedProxy } from '../../src/proxy-host/index.js';
import { serve, type Served } from '../servers.js';
import { median } from './check.js';

export const IDLE_RATE = 200;
export const HELD_MARGIN_MS = 5;
const IDLE_RUNS = 3;
/** 1k, 2k, 3.5k, then 5k × 1.15^k up to 53.7k. */
export const LADDER = [
  1_000,
  2_000,
  3_500,
  ...Array.from({ length: 18 }, (_, k) => Math.round((5_000 * 1.15 ** k) / 50) * 50),
];
const RUN_MS = 2_000;
const CONNECTIONS = 50;

export type PathName = 'direct' | 'proxy' | 'scenario' | 'hey';

export interface PathResult {
  idleP99Ms: number;
  /** The highest rung held (0 when not even the first). */
  heldRate: number;
  /** What each rung measured, for the row's label. */
  rungs: Array<{ rate: number; p99Ms: number; achieved: number; errors: number; held: boolean; cpu?: Cpu }>;
}

/**
 * CPU per 1,000 requests of a run (user + system, ms), what bounds a path on a small machine:
 * this process (the generator's thread, the wake-up helper and, on a proxy path, the proxy's
 * thread) and the upstream's process. Not for hey (a process of its own).
 */
export interface Cpu {
  selfMsPer1k: number;
  /** Of selfMsPer1k: the wake-up services' helper threads (src/clock/wake-thread.ts). */
  clockMsPer1k: number;
  upstreamMsPer1k: number;
}

interface Measured {
  p99Ms: number;
  achieved: number;
  errors: number;
  cpu?: Cpu;
}

let clockTicks: number | undefined;

/** CPU ms of process `pid` so far, every thread (Linux /proc; NaN where it cannot be read). */
function processCpuMs(pid: number): number {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU ms so far of this process's wake-up helpers (src/clock/wake-thread.ts: the generator thread's, which paces,
 * and any other thread's), found by their thread name; scheduler run time, ns resolution; NaN where not Linux.
 */
function clockThreadsCpuMs(): number {
  try {
    let ms = 0;
    let found = 0;
    for (const id of readdirSync('/proc/self/task')) {
      try {
        if (readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim() !== HELPER_NAME) continue;
        ms += Number(readFileSync(`/proc/self/task/${id}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
        found++;
      } catch {
        // The thread ended while read.
      }
    }
    return found > 0 ? ms : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Open-loop run of RUN_MS at `rate` to `port` (p99 from each request's intended start). */
async function ours(port: number, rate: number, upstreamPid: number, proxy?: HostedProxy): Promise<Measured> {
  const self = process.cpuUsage();
  const clock = clockThreadsCpuMs();
  const upstream = processCpuMs(upstreamPid);
  const result = await runOpenLoop({
    url: `http://127.0.0.1:${port}/`,
    ratePerSecond: rate,
    connections: CONNECTIONS,
    durationMs: RUN_MS,
    timeoutMs: 5_000,
    ...(proxy ? { watchLoadOf: proxy.load } : {}),
  });
  const used = process.cpuUsage(self);
  const thousands = Math.max(1, result.requests) / 1000;
  return {
    p99Ms: result.latency?.p99 ?? Number.POSITIVE_INFINITY,
    achieved: result.achievedRatePerSecond,
    errors: result.errors,
    cpu: {
      selfMsPer1k: (used.user + used.system) / 1000 / thousands,
      clockMsPer1k: (clockThreadsCpuMs() - clock) / thousands,
      upstreamMsPer1k: (processCpuMs(upstreamPid) - upstream) / thousands,
    },
  };
}

/** hey for RUN_MS at `rate` over CONNECTIONS workers (its -q is per worker). */
function hey(port: number, rate: number): Promise<Measured> {
  const perWorker = rate / CONNECTIONS;
  const args = [
    '-z',
    `${RUN_MS / 1000}s`,
    '-c',
    String(CONNECTIONS),
    '-q',
    perWorker.toFixed(3),
    `http://127.0.0.1:${port}/`,
  ];
  return new Promise((resolve, reject) => {
    execFile('hey', args, { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) return reject(new Error(`hey: ${error.message}`));
      const p99 = /99%\s+in\s+([\d.]+)\s+secs/.exec(stdout);
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
      const ok = /\[200\]\s+(\d+)\s+responses/.exec(stdout);
      const total = /Total:\s+[\d.]+\s+secs/.test(stdout);
      if (!p99 || !rps || !total) return reject(new Error(`hey: unexpected output:\n${stdout.slice(0, 400)}`));
      const errorsSection = /Error distribution:([\s\S]*)$/.exec(stdout)?.[1] ?? '';
      const errors = [...errorsSection.matchAll(/\[(\d+)\]/g)].reduce((sum, match) => sum + Number(match[1]), 0);
      resolve({ p99Ms: Number(p99[1]) * 1000, achieved: Number(rps[1]), errors: errors + (ok ? 0 : 1) });
    });
  });
}

/** Whether `hey` is on the PATH. */
export function heyAvailable(): Promise<boolean> {
  return new Promise((resolve) =>
    execFile('hey', ['-n', '1', '-c', '1', 'http://127.0.0.1:1/'], (error) =>
      resolve(!(error && 'code' in error && error.code === 'ENOENT')),
    ),
  );
}

/** Climbs the ladder for every path at once (interleaved); resolves with each path's figures. */
export async function measureHeldRates(paths: readonly PathName[]): Promise<Record<PathName, PathResult>> {
  const upstream: Served = await serve('upstream');
  const proxy = await startHostedProxy({ mappings: [`0=127.0.0.1:${upstream.port}`], faults: [] });
  // As scenario/run.ts's startPhaseProxy starts it for a scenario without `proxies`.
  const scenario = await startHostedProxy({
    mappings: [mappingInFrontOf(new URL(`http://127.0.0.1:${upstream.port}/`))],
    faults: [],
    http: true,
  });
  const pid = upstream.child.pid ?? -1;
  try {
    const measure = (path: PathName, rate: number): Promise<Measured> =>
      path === 'hey'
        ? hey(upstream.port, rate)
        : path === 'proxy'
          ? ours(proxy.ports[0]!, rate, pid, proxy)
          : path === 'scenario'
            ? ours(scenario.ports[0]!, rate, pid, scenario)
            : ours(upstream.port, rate, pid);
    // Warm every path's code before the idle figure that every rung is judged against.
    for (const path of paths) await measure(path, 2_000);
    // The idle p99 of 400 requests is their 4th worst: one stall of a shared machine moves it, so
    // each path's idle figure is the median of IDLE_RUNS runs, interleaved.
    const idle = Object.fromEntries(paths.map((path) => [path, [] as number[]])) as Record<PathName, number[]>;
    for (let run = 0; run < IDLE_RUNS; run += 1)
      for (const path of paths) idle[path].push((await measure(path, IDLE_RATE)).p99Ms);
    const results = {} as Record<PathName, PathResult>;
    for (const path of paths) results[path] = { idleP99Ms: median(idle[path]), heldRate: 0, rungs: [] };
    const climbing = new Set(paths);
    for (const rate of LADDER) {
      for (const path of paths) {
        if (!climbing.has(path)) continue;
        const holds = (m: Measured): boolean =>
          m.errors === 0 && m.achieved >= 0.98 * rate && m.p99Ms <= results[path].idleP99Ms + HELD_MARGIN_MS;
        let m = await measure(path, rate);
        if (!holds(m)) m = await measure(path, rate);
        const held = holds(m);
        results[path].rungs.push({ rate, ...m, held });
        if (held) results[path].heldRate = rate;
        else climbing.delete(path);
      }
      if (climbing.size === 0) break;
    }
    return results;
  } finally {
    await scenario.stop();
    await proxy.stop();
    await upstream.stop();
  }
}
