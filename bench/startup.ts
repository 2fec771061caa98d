/**
 * Start-up and CLI-level benchmark: what a user runs, as spawned processes, side by side in one
 * run (rounds interleaved, medians), so a loading cost cannot hide behind a module-level figure.
 *
 * 1. `faultline --version` against `node -e 0` (target ≤ 100 ms here, about 1.7× bare Node).
 * 2. MCP start-up: spawn + initialize + tools/list through the SDK client, `faultline mcp`
 *    against a one-tool server on the same SDK (target ≤ 1.2×).
 * 3. `faultline proxy` (the CLI, its own process) bulk throughput against a bare Node pipe proxy
 *    in its own process (target ≥ 1×), BENCH_STARTUP_BYTES per transfer (default 512 MiB).
 *
 * Run: npx tsc -p . && node dist/bench/startup.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cliPath } from '../test/helpers/repo.js';
import { drained, startServer } from '../test/fixtures/proxy/net.js';

const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS'] ?? 9);
const BULK_BYTES = Number(process.env['BENCH_STARTUP_BYTES'] ?? 512 * 1024 * 1024);
const oneToolServer = fileURLToPath(new URL('../test/fixtures/server/one-tool-server.js', import.meta.url));
const out = (line = ''): void => void process.stdout.write(`${line}\n`);
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** Milliseconds from spawn to exit. */
function timeProcess(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

/** Milliseconds from spawn to the tools/list answer, through the SDK client. */
async function timeMcpStartup(args: string[]): Promise<number> {
  const started = performance.now();
  const client = new Client({ name: 'bench', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  await client.listTools();
  const elapsed = performance.now() - started;
  await client.close();
  return elapsed;
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
  const mcp: number[] = [];
  const oneTool: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await timeProcess(['-e', '0']));
    version.push(await timeProcess([cliPath, '--version']));
    oneTool.push(await timeMcpStartup([oneToolServer]));
    mcp.push(await timeMcpStartup([cliPath, 'mcp']));
  }
  out('');
  out('| what | median ms | ratio |');
  out('|---|---|---|');
  out(`| node -e 0 | ${median(bare).toFixed(1)} | 1 |`);
  out(`| faultline --version | ${median(version).toFixed(1)} | ${(median(version) / median(bare)).toFixed(2)}× node -e 0 |`);
  out(`| one-tool SDK server: spawn + initialize + tools/list | ${median(oneTool).toFixed(1)} | 1 |`);
  out(`| faultline mcp: spawn + initialize + tools/list | ${median(mcp).toFixed(1)} | ${(median(mcp) / median(oneTool)).toFixed(2)}× one-tool server |`);

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
