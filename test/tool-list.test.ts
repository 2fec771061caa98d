/**
 * The tools/list generated at build time (src/tools/tool-list.ts): it equals the live list, the
 * server answers from it and registers a family on its first call (toolsets, validation and
 * concurrency unchanged; a module that fails to load fails only that call), and a stale, missing
 * or malformed file is never served: the server builds the list live instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { FileAccess } from '../src/access.js';
import { TOOLSETS, makeConfig, type Config } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { createServer, type ServerDeps } from '../src/server.js';
import type * as z from 'zod';
import { inputSchemaOf, type SchemaNode } from '../src/tools/arguments.js';
import { ToolRegistry, type ToolDefinition, type ToolHandler } from '../src/tools/define.js';
import { registerAllTools } from '../src/tools/index.js';
import {
  SOURCES_BASE,
  checkToolList,
  fingerprintOf,
  readToolList,
  type GeneratedToolList,
} from '../src/tools/tool-list.js';
import { generateToolList } from '../src/tools/tool-list-writer.js';
import { testSchemaValidator, textOf } from './helpers/mcp.js';

/** tools/list as a server that registers every family at start (the live path) publishes it. */
async function liveList(config: Config = makeConfig()): Promise<Tool[]> {
  const tools = new ToolRegistry(new McpServer({ name: 'live', version: '0' }), silentLogger, config.toolsets);
  await registerAllTools(tools, { config, access: new FileAccess(config.roots), log: silentLogger });
  return tools.tools();
}

async function connect(
  config: Config,
  deps: ServerDeps,
): Promise<{ client: Client; server: ReturnType<typeof createServer>; close(): Promise<void> }> {
  const server = createServer(config, deps);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.mcp.connect(serverSide);
  const client = new Client({ name: 'tool-list-test', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
  await client.connect(clientSide);
  return {
    client,
    server,
    close: async () => {
      await client.close();
      await server.mcp.close();
    },
  };
}

/** A copy of the compiled modules the list is built from, to change without touching dist/. */
function copySources(): { base: URL; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-tool-list-'));
  cpSync(new URL('.', SOURCES_BASE), join(dir, 'src'), {
    recursive: true,
    filter: (source) => !source.endsWith('.map'),
  });
  return { base: pathToFileURL(join(dir, 'src/')), dir };
}

test(
  'the generated list is exactly the live one of every toolset, and ' + 'the shipped file is fresh and equal to it',
  async () => {
    const live = await liveList(makeConfig({ toolsets: [...TOOLSETS] }));
    const generated = await generateToolList();
    assert.deepEqual(
      generated.tools.map((entry) => entry.tool),
      live,
    );
    assert.ok(generated.tools.every((entry) => entry.module.length > 0 && entry.toolset.length > 0));
    assert.ok(
      generated.sources.includes('tools/scenario.js') && generated.sources.includes('scenario/defaults.js'),
      generated.sources.join(', '),
    );
    assert.ok(
      !generated.sources.some((source) => source.startsWith('load/') || source.startsWith('proxy/proxy')),
      'a handler-only module counted as a source',
    );
    const shipped = readToolList();
    assert.ok(
      'tools' in shipped,
      `dist/src/tools/tool-list.json is not usable (${'stale' in shipped ? shipped.stale : ''}): run npm run build`,
    );
    assert.deepEqual(shipped.tools, generated.tools);
  },
);

test('no tool definition depends on the configuration (the list is generated with the defaults)', async () => {
  const other = makeConfig({
    roots: [tmpdir()],
    llm: { client: 'ollama', promptModel: 'm', timeoutMs: 5_000 },
    scenario: { allowRemoteTargets: true, allowNonLoopbackBind: true, maxDurationMs: 1_000, maxRatePerSecond: 10 },
    dataDir: tmpdir(),
  });
  assert.deepEqual(await liveList(other), await liveList());
});

test('a stale, missing or malformed generated list is refused, with the reason', async () => {
  const { base, dir } = copySources();
  try {
    const generated = await generateToolList(base);
    const file = join(dir, 'tool-list.json');
    const url = pathToFileURL(file);
    const write = (list: unknown): void => writeFileSync(file, JSON.stringify(list));
    const reading = (): string => {
      const result = checkToolList(url, base);
      return 'stale' in result ? result.stale : 'fresh';
    };
    write(generated);
    assert.equal(reading(), 'fresh');
    write({ ...generated, format: 0 });
    assert.match(reading(), /format 0/);
    // Without its stamps the file is checked by the hash of the contents.
    write({ ...generated, fingerprint: 'f'.repeat(64), stamps: undefined });
    assert.match(reading(), /changed since it was generated/);
    write({ ...generated, stamps: undefined });
    assert.equal(reading(), 'fresh');
    write({ ...generated, tools: [{ module: 'code', toolset: 'nope', tool: { name: 'x' } }] });
    assert.match(reading(), /malformed tool entry/);
    write({ format: generated.format, tools: [] });
    assert.match(reading(), /malformed/);
    writeFileSync(file, '{"format": 1, "tools": [');
    assert.match(reading(), /cannot read/);
    rmSync(file);
    assert.match(reading(), /cannot read/);

    // A module written again with the same contents (a new time): its hash still matches.
    write({ ...generated, fingerprint: 'f'.repeat(64) });
    assert.equal(reading(), 'fresh', 'the matching stamps were not trusted');
    write(generated);
    const later = new Date(Date.now() + 60_000);
    utimesSync(new URL('tools/code.js', base), later, later);
    assert.equal(reading(), 'fresh');
    write({ ...generated, fingerprint: 'f'.repeat(64) });
    assert.match(reading(), /changed since it was generated/, 'a stale stamp was trusted');
    // A tool module (or a leaf it quotes) edited and recompiled after the list was generated.
    write(generated);
    appendFileSync(new URL('scenario/defaults.js', base), '\n// edited\n');
    assert.match(reading(), /changed since it was generated/);
    // A module the list was built from is gone.
    write({
      ...generated,
      fingerprint: fingerprintOf(generated.sources, base),
      sources: [...generated.sources, 'tools/removed.js'],
    });
    assert.match(reading(), /a source is gone/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the server answers tools/list from the generated list and registers a family on its first call', async () => {
  const generated: GeneratedToolList = await generateToolList();
  // Marked, to tell the served list from a live one.
  const marked = generated.tools.map((entry) => ({
    ...entry,
    tool: { ...entry.tool, description: `[generated] ${entry.tool.description}` },
  }));
  const { client, server, close } = await connect(makeConfig(), { toolList: { tools: marked } });
  try {
    const { tools } = await client.listTools();
    // The default toolsets' part of it: the opt-in families are listed only when named.
    assert.deepEqual(
      tools.map((tool) => tool.name),
      generated.tools.filter((entry) => entry.toolset !== 'fis-recommender').map((entry) => entry.tool.name),
    );
    assert.ok(generated.tools.some((entry) => entry.toolset === 'fis-recommender'));
    assert.ok(tools.every((tool) => tool.description?.startsWith('[generated] ')));
    assert.deepEqual(server.tools.names(), [], 'a tool module was registered before any call');

    // Two first calls of one family at once: registered once, both answered; input validation is
    // the SDK's, naming the argument.
    const [bad, missing] = await Promise.all([
      client.callTool({ name: 'fault_list_function_names', arguments: { file: 42 } }),
      client.callTool({
        name: 'fault_extract_code_block',
        arguments: { file: '/nonexistent/x.py', function_name: 'f' },
      }),
    ]);
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /file/);
    assert.equal(missing.isError, true);
    assert.deepEqual(server.tools.names(), ['fault_list_function_names', 'fault_extract_code_block']);
    // An unknown argument is still refused by name.
    const unknown = await client.callTool({
      name: 'fault_recommend_fis_experiments',
      arguments: { finding: 'x', bogus: 1 },
    });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /unknown argument "bogus"/);
    assert.ok(server.tools.names().includes('fault_export_scenario'), 'the whole cloud family registered');
  } finally {
    await close();
  }
});

test('--toolsets limits the generated list and the calls, as it did the live one', async () => {
  const { client, close } = await connect(makeConfig({ toolsets: ['code', 'cloud'] }), {
    toolList: { tools: (await generateToolList()).tools },
  });
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.deepEqual(
      names,
      (await liveList(makeConfig({ toolsets: ['code', 'cloud'] }))).map((tool) => tool.name),
    );
    assert.ok(names.includes('fault_list_function_names') && !names.includes('fault_run_latency_impact_scenario'));
    const refused = await client.callTool({
      name: 'fault_run_latency_impact_scenario',
      arguments: { url: 'http://127.0.0.1:1' },
    });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /not found/);
  } finally {
    await close();
  }
});

test('with the generated list unusable the server builds the list live, and its tools work', async () => {
  const { client, server, close } = await connect(makeConfig(), { toolList: { stale: 'test' } });
  try {
    assert.deepEqual((await client.listTools()).tools, await liveList());
    assert.equal(server.tools.names().length, (await liveList()).length);
    const bad = await client.callTool({ name: 'fault_list_function_names', arguments: { file: 42 } });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /file/);
  } finally {
    await close();
  }
});

test(
  'a tool module that fails to load answers the call with isError ' + 'naming the tool, and the server goes on',
  async () => {
    const mcp = new McpServer({ name: 'deferred', version: '0' }, { capabilities: { tools: {} } });
    const tools = new ToolRegistry(mcp, silentLogger);
    const listed = (await liveList()).slice(0, 1);
    tools.serveToolList({ list: listed, prepare: () => Promise.reject(new Error('boom')) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: 'tool-list-test', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
    await client.connect(clientSide);
    try {
      assert.deepEqual((await client.listTools()).tools, listed);
      const failed = await client.callTool({ name: listed[0]!.name, arguments: {} });
      assert.equal(failed.isError, true);
      assert.equal(textOf(failed), `${listed[0]!.name} failed: its tool module failed to load (boom)`);
      await client.ping();
    } finally {
      await client.close();
      await mcp.close();
    }
  },
);

/** What ArgumentReader's coercions read of a JSON Schema node (arguments.ts): types, enums, items, properties. */
function coercionView(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  const { type, enum: values, items, properties, required } = node as SchemaNode;
  return {
    type,
    enum: values,
    items: coercionView(items),
    properties:
      properties && Object.fromEntries(Object.entries(properties).map(([name, child]) => [name, coercionView(child)])),
    required,
  };
}

test("a tool's first call reads its arguments by the generated list's schema: the one its reader converts", async () => {
  const shapes = new Map<string, Parameters<typeof inputSchemaOf>[0]>();
  class Capturing extends ToolRegistry {
    override register<I extends z.ZodRawShape, O extends z.ZodRawShape>(
      definition: ToolDefinition<I, O>,
      handler: ToolHandler<I, O>,
    ): void {
      shapes.set(definition.name, definition.input);
      super.register(definition, handler);
    }
  }
  const config: Config = { ...makeConfig(), toolsets: [...TOOLSETS] };
  const tools = new Capturing(new McpServer({ name: 'shapes', version: '0' }), silentLogger, config.toolsets);
  await registerAllTools(tools, { config, access: new FileAccess(config.roots), log: silentLogger });
  const generated = readToolList();
  assert.ok('tools' in generated, JSON.stringify(generated));
  assert.equal(shapes.size, generated.tools.length);
  for (const { tool } of generated.tools) {
    const shape = shapes.get(tool.name);
    assert.ok(shape, tool.name);
    assert.deepEqual(coercionView(tool.inputSchema), coercionView(inputSchemaOf(shape)), tool.name);
  }
});
