/**
 * Start-up and CLI-level benchmark: what a user runs, as spawned processes, side by side in one
 * run (rounds interleaved, medians), so a loading cost cannot hide behind a module-level figure.
 *
 * Every process gets the environment the SDK's stdio client gives the servers it spawns (PATH,
 * HOME…), not this shell's: NODE_EXTRA_CA_CERTS alone adds tens of milliseconds to every Node
 * start, the same to both sides of a ratio, which would flatter it.
 *
 * 1. `faultline --version` against `node -e 0` (target ≤ 100 ms).
 * 2. MCP start-up: spawn + initialize + tools/list, `faultline mcp` against a one-tool server on
 *    the same SDK (target ≤ 1.2×), measured two ways in interleaved rounds:
 *    - raw JSON-RPC (test/helpers/mcp-startup.ts): the server's side alone;
 *    - through the SDK client, as an SDK-based MCP client sees it (a fresh client process each
 *      time, bench/sdk-client-startup.ts, so its work runs cold). That client also compiles a
 *      validator for every tool's outputSchema when tools/list answers (Client.cacheToolMetadata,
 *      ajv); that time is measured on its own and reported as the client-side share, since no
 *      server can remove it without changing the schemas it publishes.
 *    A third server, `faultline mcp` with its tools/list built live (a copy of dist/src without
 *    the generated tools/list, src/tools/tool-list.ts), shows what the generated list saves; with
 *    BENCH_STARTUP_BASELINE=/path/to/other/dist/src/cli.js, a fourth is another build (e.g. main)
 *    in the same rounds.
 * 3. `faultline proxy` (the CLI, its own process) bulk throughput against a bare Node pipe proxy
 *    in its own process (target ≥ 1×), BENCH_STARTUP_BYTES per transfer (default 512 MiB).
 *
 * Run: npx tsc -p . && node dist/bench/startup.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { cliPath, repoRoot } from '../test/helpers/repo.js';
import { median, timeRawStartup } from '../test/helpers/mcp-startup.js';
import { drained, startServer } from '../test/fixtures/proxy/net.js';
import { timeProcess } from './lib/process-time.js';

const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS'] ?? 9);
const BULK_BYTES = Number(process.env['BENCH_STARTUP_BYTES'] ?? 512 * 1024 * 1024);
const sdkClient = fileURLToPath(new URL('./sdk-client-startup.js', import.meta.url));
const oneToolServer = fileURLToPath(new URL('../test/fixtures/server/one-tool-server.js', import.meta.url));
const out = (line = ''): void => void process.stdout.write(`${line}\n`);
const BASELINE_CLI = process.env['BENCH_STARTUP_BASELINE'];

/**
 * A copy of dist/src without the generated tools/list (so its `faultline mcp` registers every tool
 * family at start and builds the list live), next to a package.json and the repo's node_modules.
 */
function liveListBuild(): { cli: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-live-'));
  cpSync(join(repoRoot, 'dist', 'src'), join(dir, 'dist', 'src'), {
    recursive: true,
    filter: (source) => !source.endsWith('tool-list.json'),
  });
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { cli: join(dir, 'dist', 'src', 'cli.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Milliseconds from spawn to the tools/list answer through the SDK client, and of those, the time
 * the client spent compiling output-schema validators: measured by bench/sdk-client-startup.ts in
 * a fresh client process each time, since a real client does this work once, cold (in this
 * long-lived process the compile would run warm and look about half as long).
 */
async function timeSdkStartup(args: string[]): Promise<{ totalMs: number; compileMs: number }> {
  const child = spawn(process.execPath, [sdkClient, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
  if (code !== 0) throw new Error(`sdk-client-startup exited ${code}: ${output}`);
  return JSON.parse(output) as { totalMs: number; compileMs: number };
}

const BARE_PIPE = `
const net = require('node:net');
const target = Number(process.argv[1]);
const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ port: target, host: '127.0.0.1', noDelay: true });
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on('error', end); upstream.on('error', end);
  client.pipe(upstream).pipe(client);
});
server.listen(0, '127.0.0.1', () => process.stderr.write('listening on 127.0.0.1:' + server.address().port + '\\n'));
process.on('SIGTERM', () => process.exit(0));`;

/** Spawns a proxy process and waits for the port it prints on stderr ("listening on …:PORT"). */
async function spawnProxy(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening on [^\s]*:(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`proxy exited (${code}) before listening: ${text}`)));
  });
  return { child, port };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** MB/s of BULK_BYTES sent through `port` to a sink that counts them. */
async function bulkThroughput(port: number, sinkDone: () => Promise<number>): Promise<number> {
  const chunk = randomBytes(64 * 1024);
  const started = performance.now();
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  for (let sent = 0; sent < BULK_BYTES; sent += chunk.length) {
    if (!socket.write(chunk)) await drained(socket);
  }
  socket.end();
  const received = await sinkDone();
  const seconds = (performance.now() - started) / 1000;
  socket.destroy();
  return received / seconds / 1e6;
}

async function main(): Promise<void> {
  out(`# faultline start-up and CLI benchmark (${ROUNDS} interleaved rounds, medians)`);
  const version: number[] = [];
  const bare: number[] = [];
  type Side = { rawInit: number[]; raw: number[]; sdk: number[]; compile: number[] };
  const side = (): Side => ({ rawInit: [], raw: [], sdk: [], compile: [] });
  const live = liveListBuild();
  const sides: Array<{ label: string; args: string[]; times: Side }> = [
    { label: 'one-tool server', args: [oneToolServer], times: side() },
    { label: 'faultline mcp', args: [cliPath, 'mcp'], times: side() },
    { label: 'faultline mcp, list built live', args: [live.cli, 'mcp'], times: side() },
  ];
  if (BASELINE_CLI) sides.push({ label: 'baseline build', args: [BASELINE_CLI, 'mcp'], times: side() });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await timeProcess(['-e', '0']));
      version.push(await timeProcess([cliPath, '--version']));
      // Rotate which server goes first, so none gains from the order (a warm file cache).
      for (let i = 0; i < sides.length; i++) {
        const { args, times } = sides[(round + i) % sides.length]!;
        const raw = await timeRawStartup(args);
        times.rawInit.push(raw.initializeMs);
        times.raw.push(raw.toolsListMs);
        const sdk = await timeSdkStartup(args);
        times.sdk.push(sdk.totalMs);
        times.compile.push(sdk.compileMs);
      }
    }
  } finally {
    live.remove();
  }
  const one = sides[0]!.times;
  const ratio = (a: number[], b: number[]): string => `${(median(a) / median(b)).toFixed(2)}×`;
  const ms = (values: number[]): string => median(values).toFixed(1);
  out(
    `load average at the end: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')} (${cpus().length} CPUs)`,
  );
  out('');
  out('| what | median ms | ratio |');
  out('|---|---|---|');
  out(`| node -e 0 | ${ms(bare)} | 1 |`);
  out(`| faultline --version | ${ms(version)} | ${ratio(version, bare)} node -e 0 |`);
  out('');
  out('MCP start-up, spawn + initialize + tools/list, against the one-tool SDK server (ratio in brackets).');
  out('');
  out(`| median ms | ${sides.map((entry) => entry.label).join(' | ')} |`);
  out(`|---|${sides.map(() => '---').join('|')}|`);
  const without = (times: Side): number[] => times.sdk.map((total, i) => total - times.compile[i]!);
  const row = (label: string, pick: (times: Side) => number[], ratios = true): void =>
    out(
      `| ${label} | ${sides.map(({ times }, i) => `${ms(pick(times))}${ratios && i > 0 ? ` (${ratio(pick(times), pick(one))})` : ''}`).join(' | ')} ` +
        `|`,
    );
  row('raw JSON-RPC: initialize answered', (times) => times.rawInit);
  row('raw JSON-RPC: tools/list answered (server side)', (times) => times.raw);
  row('SDK client: listTools() returned', (times) => times.sdk);
  row('of which the client compiling outputSchema validators', (times) => times.compile, false);
  row('SDK client without that compile', without);

  // Bulk throughput through a proxy process: the bare pipe and `faultline proxy`, interleaved.
  let expected = 0;
  let received = 0;
  let onDone: (() => void) | undefined;
  const sink = await startServer((socket) => {
    socket.on('data', (data: Buffer) => {
      received += data.length;
      if (received >= expected) onDone?.();
    });
  });
  const sinkDone = (): Promise<number> =>
    new Promise((resolve) => {
      onDone = () => resolve(received);
    });
  const rates: Record<'bare' | 'faultline', number[]> = { bare: [], faultline: [] };
  for (let round = 0; round < 3; round++) {
    for (const which of ['bare', 'faultline'] as const) {
      const args =
        which === 'bare'
          ? ['-e', BARE_PIPE, String(sink.port)]
          : [cliPath, 'proxy', '--proxy', `127.0.0.1:0=tcp://127.0.0.1:${sink.port}`];
      const proxy = await spawnProxy(args);
      received = 0;
      expected = BULK_BYTES;
      rates[which].push(await bulkThroughput(proxy.port, sinkDone));
      await stop(proxy.child);
    }
  }
  await sink.close();
  const best = (values: number[]): number => Math.max(...values);
  out('');
  out(`| proxy process, ${(BULK_BYTES / 1024 / 1024).toFixed(0)} MiB bulk, best of 3 | MB/s | ratio |`);
  out('|---|---|---|');
  out(`| bare Node pipe (node -e) | ${best(rates.bare).toFixed(0)} | 1 |`);
  out(
    `| faultline proxy (CLI, no fault) | ${best(rates.faultline).toFixed(0)} ` +
      `| ${(best(rates.faultline) / best(rates.bare)).toFixed(2)}× |`,
  );
}

await main();
