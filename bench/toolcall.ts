/**
 * Tool-call-plane proxy overhead, measured side by side in one run on loopback: the official SDK
 * client calling our SDK-built test server directly and through each proxy with an empty plan.
 *
 *   stdio: client ─▶ server                vs   client ─▶ faultline mcp-chaos proxy stdio ─▶ server
 *   http:  client ─▶ server (SSE replies)  vs   client ─▶ HTTP proxy (in process) ─▶ server
 *
 * Calls alternate in blocks of 100 between direct and proxied so machine noise hits both alike.
 * Goal: p50 added < 1 ms over stdio, < 2 ms over HTTP.
 *
 * Run: npx tsc -p . && node dist/bench/toolcall.js   (BENCH_TOOLPLANE_CALLS, default 2000 per path)
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpProxy } from '../src/toolcall/http-proxy.js';
import { ToolPlane } from '../src/toolcall/session.js';
import { EMPTY_PLAN } from '../src/toolcall/plan.js';
import { startTargetHttp } from '../test/helpers/mcp-target.js';
import { cliPath, repoRoot } from '../test/helpers/repo.js';

const CALLS = Number(process.env['BENCH_TOOLPLANE_CALLS'] ?? 2000);
const BLOCK = 100;
const target = join(repoRoot, 'dist', 'test', 'helpers', 'mcp-target.js');
const out = (line = ''): void => void process.stdout.write(`${line}\n`);

async function stdioClient(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  await client.listTools();
  return client;
}

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  return client;
}

async function time(client: Client, samples: number[], n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await client.callTool({ name: 'get_items', arguments: { count: 5 } });
    samples.push(performance.now() - start);
  }
}

function pct(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function compare(label: string, direct: Client, proxied: Client, goalMs: number): Promise<void> {
  await time(direct, [], 200); // warm-up
  await time(proxied, [], 200);
  const a: number[] = [];
  const b: number[] = [];
  for (let done = 0; done < CALLS; done += BLOCK) {
    await time(direct, a, BLOCK);
    await time(proxied, b, BLOCK);
  }
  const added = pct(b, 50) - pct(a, 50);
  out(
    `${label.padEnd(6)} direct p50 ${pct(a, 50).toFixed(3)} ms p99 ${pct(a, 99).toFixed(3)} ms | proxied p50 ${pct(b, 50).toFixed(3)} ms p99 ${pct(b, 99).toFixed(3)} ms | ` +
      `added p50 ${added.toFixed(3)} ms (goal < ${goalMs} ms: ${added < goalMs ? 'met' : 'missed'}), ratio ${(pct(b, 50) / pct(a, 50)).toFixed(2)}×`,
  );
}

out(`tool-call-plane proxy overhead, ${CALLS} calls per path, empty plan, get_items(count 5)`);
{
  const direct = await stdioClient([target, 'stdio']);
  const proxied = await stdioClient([cliPath, 'mcp-chaos', 'proxy', 'stdio', '--', process.execPath, target, 'stdio']);
  try {
    await compare('stdio', direct, proxied, 1);
  } finally {
    await direct.close();
    await proxied.close();
  }
}
{
  const server = await startTargetHttp();
  const proxy = await startHttpProxy({ plane: new ToolPlane(EMPTY_PLAN), upstream: server.url });
  const direct = await httpClient(server.url);
  const proxied = await httpClient(proxy.url);
  try {
    await compare('http', direct, proxied, 2);
  } finally {
    await direct.close();
    await proxied.close();
    await proxy.close();
    await server.close();
  }
}
