/**
 * A small MCP server of our own, built on the official SDK, to put behind the tool-call-plane
 * proxies: over stdio (`node dist/test/helpers/mcp-target.js stdio`) or streamable HTTP
 * (`startTargetHttp()`, stateful sessions, SSE replies).
 *
 * Tools: get_items {count} → structuredContent {items, total} with an outputSchema; echo {text};
 * slow {ms} (honours cancellation); delete_record {id} (destructive, not idempotent);
 * chatty {} (sends a log notification before its answer).
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export function createTargetServer(): McpServer {
  const mcp = new McpServer(
    { name: 'toolcall-target', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  mcp.registerTool(
    'get_items',
    {
      description: 'count numbers',
      inputSchema: { count: z.number().int().min(0).max(1000) },
      outputSchema: { items: z.array(z.number()), total: z.number() },
    },
    async ({ count }) => {
      const structured = { items: Array.from({ length: count }, (_, i) => i + 1), total: count };
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    },
  );
  mcp.registerTool('echo', { description: 'echo', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  mcp.registerTool('slow', { description: 'sleeps', inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  });
  mcp.registerTool(
    'delete_record',
    {
      description: 'deletes',
      inputSchema: { id: z.string() },
      annotations: { destructiveHint: true, idempotentHint: false, readOnlyHint: false, openWorldHint: false },
    },
    async ({ id }) => ({ content: [{ type: 'text', text: `deleted ${id}` }] }),
  );
  mcp.registerTool('chatty', { description: 'logs then answers', inputSchema: {} }, async (_args, extra) => {
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'working' } });
    return { content: [{ type: 'text', text: 'done' }] };
  });
  return mcp;
}

export interface TargetHttp {
  url: string;
  /** Request headers seen by the server, newest last. */
  seen: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

/** The target over streamable HTTP on 127.0.0.1 (SSE replies; JSON replies with json: true), on `port` (default: an
 * ephemeral one). */
export async function startTargetHttp(options: { json?: boolean; port?: number } = {}): Promise<TargetHttp> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const seen: TargetHttp['seen'] = [];
  const server: Server = createHttpServer(async (req, res) => {
    seen.push({ ...req.headers, ':method': req.method });
    const id = req.headers['mcp-session-id'] as string | undefined;
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      if (id) {
        res.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.json ?? false,
        onsessioninitialized: (sid) => void transports.set(sid, transport!),
      });
      const mcp = createTargetServer();
      servers.push(mcp);
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    async close() {
      for (const mcp of servers) await mcp.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv[2] === 'stdio') {
  process.stderr.write(`target pid ${process.pid}\n`);
  // Tests that cannot see stderr learn the pid from this file.
  if (process.env.TOOLPLANE_TARGET_PID_FILE) appendFileSync(process.env.TOOLPLANE_TARGET_PID_FILE, `${process.pid}\n`);
  const mcp = createTargetServer();
  await mcp.connect(new StdioServerTransport());
}
