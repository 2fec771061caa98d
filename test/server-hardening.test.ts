/**
 * The built CLI over streamable HTTP, with the official SDK
 * client: client roots are honoured over HTTP, listChanged is advertised false, non-object
 * `arguments` is -32602 naming `arguments`, and a duplicate in-flight request id is refused (sessions
 * under load: http-sessions.test.ts).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { cliPath } from './helpers/repo.js';
import { startCliProcess, type RunningCli } from './helpers/processes.js';
import { testSchemaValidator, textOf } from './helpers/mcp.js';
import { HANG_GUARD_MS } from './helpers/wait.js';

// This file lists code through the servers it spawns: with their listing thread, as users run them
// (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

let server: RunningCli;
let url: URL;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'faultline-hardening-'));
  await writeFile(join(dir, 'inside.py'), 'def inside():\n    return 1\n');
  await writeFile(join(tmpdir(), `faultline-outside-${process.pid}.py`), 'def outside():\n    return 2\n');
  server = startCliProcess(['mcp', '--transport', 'http', '--port', '0', '--no-token']);
  url = new URL((await server.waitFor(/listening on (http:\/\/\S+)/))[1]!);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(join(tmpdir(), `faultline-outside-${process.pid}.py`), { force: true });
  await server?.stop();
});

async function connectClient(withRoots: boolean): Promise<Client> {
  const client = new Client(
    { name: 'hardening', version: '0' },
    { capabilities: withRoots ? { roots: { listChanged: true } } : {}, jsonSchemaValidator: testSchemaValidator },
  );
  if (withRoots)
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(dir).href, name: 'project' }],
    }));
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

test('over HTTP the client roots confine the file tools, as over stdio', async () => {
  const client = await connectClient(true);
  try {
    const inside = await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: join(dir, 'inside.py') },
    });
    assert.notEqual(inside.isError, true, textOf(inside));
    assert.match(textOf(inside), /inside/);
    const outside = await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: join(tmpdir(), `faultline-outside-${process.pid}.py`) },
    });
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), /^file: .*outside the allowed roots/);
  } finally {
    await client.close();
  }
});

test('tools.listChanged is advertised false (the list never changes)', async () => {
  const client = await connectClient(false);
  try {
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, false);
  } finally {
    await client.close();
  }
});

test('non-object arguments are -32602 naming arguments', async () => {
  const client = await connectClient(false);
  try {
    for (const args of [[1, 2], 'text', 42]) {
      await assert.rejects(
        client.request(
          { method: 'tools/call', params: { name: 'fault_list_function_names', arguments: args as never } },
          (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
        ),
        (error: { code?: number; message?: string }) =>
          error.code === -32602 && /arguments: must be an object/.test(error.message ?? ''),
      );
    }
  } finally {
    await client.close();
  }
});

test('over stdio the client roots confine the file tools too (asked before the first call)', async () => {
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const client = new Client(
    { name: 'hardening', version: '0' },
    { capabilities: { roots: { listChanged: true } }, jsonSchemaValidator: testSchemaValidator },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(dir).href, name: 'project' }],
  }));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp'],
      stderr: 'pipe',
      env: { ...process.env } as Record<string, string>,
    }),
    { timeout: HANG_GUARD_MS },
  );
  try {
    const outside = await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: join(tmpdir(), `faultline-outside-${process.pid}.py`) },
    });
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), /^file: .*outside the allowed roots/);
    const inside = await client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: join(dir, 'inside.py') },
    });
    assert.notEqual(inside.isError, true, textOf(inside));
  } finally {
    await client.close();
  }
});
