/**
 * A small MCP server of our own, built on the official SDK, to put behind the tool-call-plane
 * proxies: over stdio (`node dist/test/helpers/mcp-target.js stdio`) or streamable HTTP
 * (`startTargetHttp()`, stateful sessions, SSE replies).
 *
 * Tools: get_items {count} → structuredContent {items, total} with an outputSchema; echo {text};
 * slow {ms} (honours cancellation); delete_record {id} (destructive, not idempotent);
 * chatty {} (sends a log notification before its answer).
 *
 * It is the SDK's low-level Server with the tools' JSON Schemas written out, not McpServer with
 * zod shapes: the suite starts it dozens of times, and McpServer's zod shapes and their conversion
 * cost ~0.1-0.2 s of CPU a start for nothing the tests look at. What a client sees is what
 * McpServer answered: the same tools/list (its draft-07 schemas, `execution`), "Tool X not found"
 * and "Input validation error: ..." as isError results, cancellation through the request's signal.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
type Field = { type: 'integer'; minimum: number; maximum: number } | { type: 'number' } | { type: 'string' };

/** An input schema as McpServer wrote it for a zod shape of required fields. */
function inputSchema(fields: Record<string, Field>): Tool['inputSchema'] {
  const required = Object.keys(fields);
  return { $schema: DRAFT_07, type: 'object', properties: fields, ...(required.length ? { required } : {}) };
}

const TOOLS: Tool[] = [
  {
    name: 'get_items',
    description: 'count numbers',
    inputSchema: inputSchema({ count: { type: 'integer', minimum: 0, maximum: 1000 } }),
    execution: { taskSupport: 'forbidden' },
    outputSchema: {
      $schema: DRAFT_07,
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'number' } }, total: { type: 'number' } },
      required: ['items', 'total'],
      additionalProperties: false,
    },
  },
  {
    name: 'echo',
    description: 'echo',
    inputSchema: inputSchema({ text: { type: 'string' } }),
    execution: { taskSupport: 'forbidden' },
  },
  {
    name: 'slow',
    description: 'sleeps',
    inputSchema: inputSchema({ ms: { type: 'number' } }),
    execution: { taskSupport: 'forbidden' },
  },
  {
    name: 'delete_record',
    description: 'deletes',
    inputSchema: inputSchema({ id: { type: 'string' } }),
    annotations: { destructiveHint: true, idempotentHint: false, readOnlyHint: false, openWorldHint: false },
    execution: { taskSupport: 'forbidden' },
  },
  {
    name: 'chatty',
    description: 'logs then answers',
    inputSchema: inputSchema({}),
    execution: { taskSupport: 'forbidden' },
  },
];

/** The first way `value` breaks `field`, worded as zod worded it for McpServer; undefined when it fits. */
function misfit(value: unknown, field: Field): string | undefined {
  const expected = field.type === 'integer' ? 'int' : field.type;
  if (field.type === 'string' ? typeof value !== 'string' : typeof value !== 'number' || !Number.isFinite(value))
    return `Invalid input: expected ${field.type === 'integer' ? 'number' : expected}, received ${typeof value}`;
  if (field.type !== 'integer') return undefined;
  if (!Number.isInteger(value)) return `Invalid input: expected int, received number`;
  if ((value as number) < field.minimum) return `Too small: expected number to be >=${field.minimum}`;
  if ((value as number) > field.maximum) return `Too big: expected number to be <=${field.maximum}`;
  return undefined;
}

/** The arguments checked against the tool's input schema (McpServer's parse), or an InvalidParams error. */
function checkedArguments(tool: Tool, args: Record<string, unknown> | undefined): Record<string, unknown> {
  const given = args ?? {};
  const fields = (tool.inputSchema.properties ?? {}) as Record<string, Field>;
  for (const [name, field] of Object.entries(fields)) {
    const problem = misfit(given[name], field);
    if (problem)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Input validation error: Invalid arguments for tool ${tool.name}: ${problem} at ${name}`,
      );
  }
  return given;
}

type Extra = { signal: AbortSignal; sendNotification: Server['notification'] };

async function callTool(name: string, args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
  switch (name) {
    case 'get_items': {
      const count = args.count as number;
      const structured = { items: Array.from({ length: count }, (_, i) => i + 1), total: count };
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    }
    case 'echo':
      return { content: [{ type: 'text', text: args.text as string }] };
    case 'slow': {
      const ms = args.ms as number;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return { content: [{ type: 'text', text: `slept ${ms}` }] };
    }
    case 'delete_record':
      return { content: [{ type: 'text', text: `deleted ${args.id as string}` }] };
    default: // chatty
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'working' } });
      return { content: [{ type: 'text', text: 'done' }] };
  }
}

export function createTargetServer(): Server {
  const server = new Server(
    { name: 'toolcall-target', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    try {
      const tool = TOOLS.find((t) => t.name === request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
      return await callTool(tool.name, checkedArguments(tool, request.params.arguments), extra);
    } catch (error) {
      // McpServer's answer to any failure: an isError result carrying the message.
      return {
        content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
        isError: true,
      };
    }
  });
  return server;
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
  const servers: Server[] = [];
  const seen: TargetHttp['seen'] = [];
  const server: HttpServer = createHttpServer(async (req, res) => {
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
