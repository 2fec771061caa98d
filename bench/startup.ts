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
 * 3. `faultline proxy` (the CLI, its own process) bulk throughput against a bare Node pipe proxy
 *    in its own process (target ≥ 1×), BENCH_STARTUP_BYTES per transfer (default 512 MiB).
 *
 * Run: npx tsc -p . && node dist/bench/startup.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cliPath } from '../test/helpers/repo.js';
import { median, timeRawStartup } from '../test/helpers/mcp-startup.js';
import { drained, startServer } from '../test/fixtures/proxy/net.js';

const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS'] ?? 9);
const BULK_BYTES = Number(process.env['BENCH_STARTUP_BYTES'] ?? 512 * 1024 * 1024);
const sdkClient = fileURLToPath(new URL('./sdk-client-startup.js', import.meta.url));
const oneToolServer = fileURLToPath(new URL('../test/fixtures/server/one-tool-server.js', import.meta.url));
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

/** Milliseconds from spawn to exit. */
function timeProcess(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'ignore', env: getDefaultEnvironment() });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
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
  const servers = { oneTool: side(), faultline: side() };
  const argsOf = { oneTool: [oneToolServer], faultline: [cliPath, 'mcp'] };
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await timeProcess(['-e', '0']));
    version.push(await timeProcess([cliPath, '--version']));
    // Alternate which server goes first, so neither gains from the order (a warm file cache).
    for (const which of round % 2 === 0 ? (['oneTool', 'faultline'] as const) : (['faultline', 'oneTool'] as const)) {
      const raw = await timeRawStartup(argsOf[which]);
      servers[which].rawInit.push(raw.initializeMs);
      servers[which].raw.push(raw.toolsListMs);
      const sdk = await timeSdkStartup(argsOf[which]);
      servers[which].sdk.push(sdk.totalMs);
      servers[which].compile.push(sdk.compileMs);
    }
  }
  const [one, fl] = [servers.oneTool, servers.faultline];
  const ratio = (a: number[], b: number[]): string => `${(median(a) / median(b)).toFixed(2)}×`;
  const ms = (values: number[]): string => median(values).toFixed(1);
  out(`load average at the end: ${loadavg().map((load) => load.toFixed(2)).join(' ')} (${cpus().length} CPUs)`);
  out('');
  out('| what | median ms | ratio |');
  out('|---|---|---|');
  out(`| node -e 0 | ${ms(bare)} | 1 |`);
  out(`| faultline --version | ${ms(version)} | ${ratio(version, bare)} node -e 0 |`);
  out('');
  out('MCP start-up, spawn + initialize + tools/list: `faultline mcp` against the one-tool SDK server.');
  out('');
  out('| median ms | one-tool server | faultline mcp | ratio |');
  out('|---|---|---|---|');
  out(`| raw JSON-RPC: initialize answered | ${ms(one.rawInit)} | ${ms(fl.rawInit)} | ${ratio(fl.rawInit, one.rawInit)} |`);
  out(`| raw JSON-RPC: tools/list answered (server side) | ${ms(one.raw)} | ${ms(fl.raw)} | ${ratio(fl.raw, one.raw)} |`);
  out(`| SDK client: listTools() returned | ${ms(one.sdk)} | ${ms(fl.sdk)} | ${ratio(fl.sdk, one.sdk)} |`);
  out(`| of which the client compiling outputSchema validators | ${ms(one.compile)} | ${ms(fl.compile)} | |`);
  const without = (sdk: number[], compile: number[]): number[] => sdk.map((total, i) => total - compile[i]!);
  out(`| SDK client without that compile | ${ms(without(one.sdk, one.compile))} | ${ms(without(fl.sdk, fl.compile))} | ${ratio(without(fl.sdk, fl.compile), without(one.sdk, one.compile))} |`);

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
  out(`| faultline proxy (CLI, no fault) | ${best(rates.faultline).toFixed(0)} | ${(best(rates.faultline) / best(rates.bare)).toFixed(2)}× |`);
}

await main();
