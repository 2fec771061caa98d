/**
 * What the tool-call plane's proxies add to a tool call, measured side by side: the official SDK
 * client calling our SDK-built test server directly and through a proxy with an empty plan, in
 * alternating blocks of 100 calls so machine noise hits both alike. Shared by bench/toolcall.ts
 * and bench/checks/toolcall.ts.
 *
 *   stdio: client ─▶ server                vs   client ─▶ faultline mcp-chaos proxy stdio ─▶ server
 *   http:  client ─▶ server (SSE replies)  vs   client ─▶ HTTP proxy (in process) ─▶ server
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpProxy } from '../../src/toolcall/http-proxy.js';
import { targetLookup } from '../../src/target-policy.js';
import { EMPTY_PLAN } from '../../src/toolcall/plan.js';
import { ToolPlane } from '../../src/toolcall/session.js';
import { startTargetHttp } from '../../test/helpers/mcp-target.js';
import { cliPath, repoRoot } from '../../test/helpers/repo.js';

const BLOCK = 100;
const target = join(repoRoot, 'dist', 'test', 'helpers', 'mcp-target.js');

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

/** The `p`th percentile of `samples` (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Call times (ms) of `calls` get_items calls each way, after 200 to warm up, over `transport`. */
export async function toolcallOverhead(
  transport: 'stdio' | 'http',
  calls: number,
): Promise<{ direct: number[]; proxied: number[] }> {
  const closers: Array<() => Promise<void>> = [];
  try {
    let direct: Client;
    let proxied: Client;
    if (transport === 'stdio') {
      direct = await stdioClient([target, 'stdio']);
      closers.push(() => direct.close());
      proxied = await stdioClient([cliPath, 'mcp-chaos', 'proxy', 'stdio', '--', process.execPath, target, 'stdio']);
      closers.push(() => proxied.close());
    } else {
      const server = await startTargetHttp();
      closers.push(() => server.close());
      const proxy = await startHttpProxy({
        plane: new ToolPlane(EMPTY_PLAN),
        upstream: server.url,
        lookup: targetLookup(false),
      });
      closers.push(() => proxy.close());
      direct = await httpClient(server.url);
      closers.push(() => direct.close());
      proxied = await httpClient(proxy.url);
      closers.push(() => proxied.close());
    }
    await time(direct, [], 200);
    await time(proxied, [], 200);
    const samples = { direct: [] as number[], proxied: [] as number[] };
    for (let done = 0; done < calls; done += BLOCK) {
      await time(direct, samples.direct, BLOCK);
      await time(proxied, samples.proxied, BLOCK);
    }
    return samples;
  } finally {
    for (const close of closers.reverse()) await close();
  }
}
