/**
 * Experiment runner overhead, side by side in one run: the same open-loop load against the same
 * fast local server (a child process answering 200 at once), through the same in-process proxy
 * with a no-op fault (latency 0 ms), run by `faultline run` and by `faultline experiment run`
 * (one fault step from 0 to the end). Fresh CLI processes, interleaved A/B, medians compared.
 *
 * Goal: the experiment's achieved rate ≥ 0.98 × run's, and its p99 within 1 ms of run's.
 *
 * Run: npx tsc -p . && node dist/bench/experiment.js
 *   BENCH_EXPERIMENT_RATE (total req/s, default 1000), BENCH_EXPERIMENT_SECONDS (default 5),
 *   BENCH_EXPERIMENT_ROUNDS (pairs, default 5)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cliPath } from '../test/helpers/repo.js';

const RATE = Number(process.env['BENCH_EXPERIMENT_RATE'] ?? 1000);
const SECONDS = Number(process.env['BENCH_EXPERIMENT_SECONDS'] ?? 5);
const ROUNDS = Number(process.env['BENCH_EXPERIMENT_ROUNDS'] ?? 5);
const CLIENTS = 10;
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

const SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => { res.writeHead(200, { 'content-length': '2' }); res.end('ok'); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function startServer(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  );
  return { port, stop: () => child.kill('SIGKILL') };
}

interface Figures {
  rate: number;
  p99: number;
}

async function viaRun(url: string, json: string): Promise<Figures> {
  await promisify(execFile)(
    process.execPath,
    [
      cliPath,
      'run',
      'latency',
      '--url',
      url,
      '--latency',
      '0',
      '--num-clients',
      String(CLIENTS),
      '--rps',
      String(RATE / CLIENTS),
      '--duration',
      `${SECONDS}s`,
      '--slo',
      'errors < 1%',
      '--json',
      json,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { code?: number }) => {
    if (error.code !== 3 && error.code !== 4) throw error;
  });
  const record = JSON.parse(readFileSync(json, 'utf8')) as {
    run: { load: { achievedRatePerSecond: number; latency: { p99: number } } };
  };
  return { rate: record.run.load.achievedRatePerSecond, p99: record.run.load.latency.p99 };
}

async function viaExperiment(file: string, json: string): Promise<Figures> {
  await promisify(execFile)(process.execPath, [cliPath, 'experiment', 'run', file, '--json', json], {
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { code?: number }) => {
    if (error.code !== 3 && error.code !== 4) throw error;
  });
  const record = JSON.parse(readFileSync(json, 'utf8')) as {
    load: { achievedRatePerSecond: number; latency: { p99: number } };
  };
  return { rate: record.load.achievedRatePerSecond, p99: record.load.latency.p99 };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'faultline-bench-experiment-'));
  const server = await startServer();
  try {
    const url = `http://127.0.0.1:${server.port}/`;
    const file = join(work, 'noop.yaml');
    writeFileSync(
      file,
      [
        'title: no-op fault',
        `load: {url: "${url}", num_clients: ${CLIENTS}, rps: ${RATE / CLIENTS}, duration: ${SECONDS}s}`,
        `method: [{at: 0s, for: ${SECONDS}s, fault: {type: latency, latency_ms: 0}}]`,
        'expect: ["errors < 1%"]',
      ].join('\n'),
    );
    out(
      `runner overhead: ${RATE} req/s over ${CLIENTS} connections for ${SECONDS} ` +
        `s through the in-process proxy, latency 0 ms fault; ${ROUNDS} ` +
        `interleaved pairs of fresh CLI runs`,
    );
    const run: Figures[] = [];
    const experiment: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so a drifting machine favours neither.
      const pair =
        round % 2 === 0
          ? ([
              ['run', () => viaRun(url, join(work, 'run.json'))],
              ['experiment', () => viaExperiment(file, join(work, 'experiment.json'))],
            ] as const)
          : ([
              ['experiment', () => viaExperiment(file, join(work, 'experiment.json'))],
              ['run', () => viaRun(url, join(work, 'run.json'))],
            ] as const);
      for (const [name, go] of pair) {
        const figures = await go();
        (name === 'run' ? run : experiment).push(figures);
        out(
          `  round ${round + 1} ${name.padEnd(10)} rate ${figures.rate.toFixed(1)} ` +
            `req/s  p99 ${figures.p99.toFixed(3)} ms`,
        );
      }
    }
    const rateRatio = median(experiment.map((f) => f.rate)) / median(run.map((f) => f.rate));
    const p99Delta = median(experiment.map((f) => f.p99)) - median(run.map((f) => f.p99));
    out();
    out(`| | faultline run | faultline experiment run | experiment / run |`);
    out(`|---|---|---|---|`);
    out(
      `| achieved rate (median) | ${median(run.map((f) => f.rate)).toFixed(1)} ` +
        `req/s | ${median(experiment.map((f) => f.rate)).toFixed(1)} ` +
        `req/s | ${rateRatio.toFixed(3)}× (goal ≥ 0.98) |`,
    );
    out(
      `| p99 (median) | ${median(run.map((f) => f.p99)).toFixed(3)} ms ` +
        `| ${median(experiment.map((f) => f.p99)).toFixed(3)} ms | ${p99Delta >= 0 ? '+' : ''}${p99Delta.toFixed(3)} ` +
        `ms (goal ≤ 1 ms) |`,
    );
    out();
    out(rateRatio >= 0.98 && p99Delta <= 1 ? 'PASS' : 'FAIL');
    if (!(rateRatio >= 0.98 && p99Delta <= 1)) process.exitCode = 1;
  } finally {
    server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
