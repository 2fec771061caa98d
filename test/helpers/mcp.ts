/**
 * MCP clients for tests: the real SDK client talking to the real built CLI over stdio (what an
 * MCP host does), or to an in-process server through a linked in-memory pair (fast, for unit
 * tests of tools).
 *
 * The stdio helper records every line the server wrote to stdout, so tests can assert that
 * nothing but JSON-RPC ever reached it, and everything it wrote to stderr.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { createServer } from '../../src/server.js';
import { FileAccess } from '../../src/access.js';
import { silentLogger } from '../../src/log.js';
import { ToolRegistry } from '../../src/tools/define.js';
import type { ToolContext } from '../../src/tools/context.js';
import { makeConfig, type Config } from '../../src/config.js';
import { cliPath } from './repo.js';
import { HANG_GUARD_MS } from './wait.js';

export interface StdioSession {
  client: Client;
  /** Every line the server wrote to stdout so far. */
  stdoutLines(): string[];
  stderr(): string;
  close(): Promise<void>;
}

/**
 * The test clients' JSON Schema validator: the SDK's own (ajv), with each schema compiled once per
 * test process rather than once per client. A client's listTools compiles every tool's output
 * schema (about 150-350 ms of CPU for faultline's ~30 tools, more than the server takes to
 * start) and the suite opens hundreds of connections to the same tools; every structuredContent
 * is still checked against its tool's outputSchema, compiled at listTools as before.
 */
class CompiledOncePerProcess implements jsonSchemaValidator {
  private ajv: AjvJsonSchemaValidator | undefined;
  private readonly compiled = new Map<string, JsonSchemaValidator<unknown>>();

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const key = JSON.stringify(schema);
    let validator = this.compiled.get(key);
    if (!validator) {
      this.ajv ??= new AjvJsonSchemaValidator();
      validator = this.ajv.getValidator(schema);
      this.compiled.set(key, validator);
    }
    return validator as JsonSchemaValidator<T>;
  }
}

/** Shared by the clients the helpers below create (see CompiledOncePerProcess). */
export const testSchemaValidator = new CompiledOncePerProcess();

export interface StdioClientOptions {
  /**
   * A client of its own, as a host has: the SDK's default validator, compiling every output
   * schema at listTools (bench/checks/startup.ts times that), not the one shared per process.
   */
  hostClient?: boolean;
  /**
   * Declares the elicitation capability and answers each elicitation/create with this (its
   * message given); a promise that never settles is a person who never answers.
   */
  elicit?: (message: string) => Promise<ElicitResult>;
}

/**
 * Spawns `node dist/src/cli.js ...args` (default: `mcp`) and connects the SDK client.
 */
export async function connectStdio(
  args: string[] = ['mcp'],
  env: Record<string, string> = {},
  options: StdioClientOptions = {},
): Promise<StdioSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, ...args],
    env: { ...inheritedEnv(), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const lines: string[] = [];
  let partial = '';
  // The SDK's transport owns the child's stdout; listen beside it, from the moment the child is
  // spawned (start() spawns synchronously), to see the raw bytes.
  const start = transport.start.bind(transport);
  transport.start = () => {
    const started = start();
    const child = (transport as unknown as { _process?: { stdout?: NodeJS.ReadableStream } })._process;
    child?.stdout?.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    return started;
  };
  const client = new Client(
    { name: 'faultline-test', version: '0.0.0' },
    {
      ...(options.elicit ? { capabilities: { elicitation: {} } } : {}),
      ...(options.hostClient ? {} : { jsonSchemaValidator: testSchemaValidator }),
    },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
  }
  // The SDK's default request timeout (60 s) is a bound on how long a server takes to start; at a
  // load of 12-41 on 2 cores a start has taken longer (prometheus-credentials: "Request timed
  // out"). The test runner's own timeout still ends a server that never answers.
  try {
    await client.connect(transport, { timeout: HANG_GUARD_MS });
    await client.listTools(undefined, { timeout: HANG_GUARD_MS }); // so the SDK checks every structuredContent
  } catch (error) {
    await transport.close().catch(() => undefined); // a server that did not start does not outlive the test
    throw error;
  }
  return {
    client,
    stdoutLines: () => (partial ? [...lines, partial] : [...lines]),
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/**
 * A configuration whose owner let MCP calls start any program (--allow-commands), for the tests of
 * tools that start one; test/consent.test.ts holds the refusals.
 */
export function commandsAllowed(): Config {
  return makeConfig({ commands: { allowAll: true, programs: [] } });
}

/** An in-process server and client, linked in memory. */
export async function connectInMemory(
  config: Config = makeConfig(),
): Promise<{ client: Client; close(): Promise<void> }> {
  return linkInMemory(createServer(config).mcp);
}

/**
 * An in-process server with only the tools `register` adds (one tool family under test, with the
 * dependencies the test chooses), and a client, linked in memory.
 */
export async function connectTools(
  register: (tools: ToolRegistry, ctx: ToolContext) => void,
  config: Config = makeConfig(),
): Promise<{ client: Client; close(): Promise<void> }> {
  const mcp = new McpServer({ name: 'faultline-test', version: '0.0.0' }, { capabilities: { tools: {} } });
  const tools = new ToolRegistry(mcp, silentLogger);
  register(tools, { config, access: new FileAccess(config.roots), log: silentLogger });
  tools.serveToolList();
  return linkInMemory(mcp);
}

async function linkInMemory(mcp: McpServer): Promise<{ client: Client; close(): Promise<void> }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: 'faultline-test', version: '0.0.0' }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(clientSide);
  // As hosts do: with the tools listed, the SDK client checks every structuredContent against
  // its tool's outputSchema, so a result that breaks its schema fails the test.
  await client.listTools();
  return {
    client,
    close: async () => {
      await client.close();
      await mcp.close();
    },
  };
}

/** The text of a tool result's first content item. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  return first && first.type === 'text' ? first.text : '';
}

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}
