/**
 * The built CLI over stdio, as an MCP host runs it: the SDK client spawns `faultline agent tool`,
 * lists tools and calls one; stdout carries nothing but JSON-RPC; bad messages get proper
 * errors and the server stays up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectStdio, textOf } from './helpers/mcp.js';
import { spawnRawServer } from './helpers/raw-stdio.js';
import { fixturePath } from './helpers/repo.js';
import { pathToFileURL } from 'node:url';

// This file lists code through the servers it spawns: with their listing thread, as users run them
// (test/helpers/isolate.ts turns it off for the rest of the suite).
process.env.FAULTLINE_LISTING_THREAD = 'on';

function assertOnlyJsonRpc(lines: string[]): void {
  for (const line of lines) {
    if (line === '') continue;
    let message: Record<string, unknown>;
    assert.doesNotThrow(
      () => {
        message = JSON.parse(line) as Record<string, unknown>;
      },
      `stdout line is not JSON: ${line.slice(0, 200)}`,
    );
    assert.equal(message!.jsonrpc, '2.0', `stdout line is not JSON-RPC: ${line.slice(0, 200)}`);
  }
}

test('agent tool: initialize, list tools, call one; stdout is only JSON-RPC', async () => {
  const started = performance.now();
  const session = await connectStdio(['--log-level', 'debug', 'agent', 'tool']);
  try {
    const { tools } = await session.client.listTools();
    // Under 1 s on an idle machine: bench/checks/startup.ts (startup.mcp-tools-list) holds it.
    process.stderr.write(`# initialize + tools/list: ${(performance.now() - started).toFixed(0)} ms\n`);
    assert.ok(tools.length > 0);
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes('fault_list_function_names'), names.join(', '));

    const result = await session.client.callTool({
      name: 'fault_list_function_names',
      arguments: { file: fixturePath('code', 'sample.py') },
    });
    assert.equal(result.isError, undefined, textOf(result));
    assert.ok(Array.isArray(JSON.parse(textOf(result))));

    assertOnlyJsonRpc(session.stdoutLines());
    assert.ok(session.stdoutLines().length >= 3, 'the responses themselves were seen on stdout');
    assert.match(session.stderr(), /ready on stdio/, 'logs go to stderr');
  } finally {
    await session.close();
  }
});

test('malformed lines, unknown methods, unknown tools and wrong argument types get proper errors', async () => {
  const server = await spawnRawServer(['agent', 'tool']);
  try {
    server.writeLine('this is not json');
    const parseError = await server.nextNullIdResponse();
    assert.equal((parseError.error as { code: number }).code, -32700);

    server.writeLine('{"not":"json-rpc"}');
    const invalid = await server.nextNullIdResponse();
    assert.equal((invalid.error as { code: number }).code, -32600);

    const unknownMethod = await server.request('tools/frobnicate');
    assert.equal((unknownMethod.error as { code: number }).code, -32601);

    const unknownTool = await server.request('tools/call', { name: 'fault_no_such_tool', arguments: {} });
    const unknownResult = unknownTool.result as { isError?: boolean; content: Array<{ text: string }> };
    assert.equal(unknownResult.isError, true);
    assert.match(unknownResult.content[0]!.text, /fault_no_such_tool/);

    const wrongTypes = await server.request('tools/call', {
      name: 'fault_list_function_names',
      arguments: { file: 42 },
    });
    const wrongResult = wrongTypes.result as {
      isError?: boolean;
      structuredContent?: unknown;
      content: Array<{ text: string }>;
    };
    assert.equal(wrongResult.isError, true);
    assert.equal(wrongResult.structuredContent, undefined, 'no structuredContent on errors');
    assert.match(wrongResult.content[0]!.text, /file/);

    const list = await server.request('tools/list');
    assert.ok(Array.isArray((list.result as { tools: unknown[] }).tools), 'still answering');
    assert.ok(server.alive());
    assertOnlyJsonRpc(server.stdoutLines());
  } finally {
    await server.close();
  }
});

test('console output from inside the server never reaches stdout', async () => {
  // The preload prints to stdout while the server loads and again while it serves, as a careless
  // dependency would; the guard must route both to stderr.
  const preload = pathToFileURL(fixturePath('server', 'noisy-preload.mjs')).href;
  const server = await spawnRawServer(['mcp'], { NODE_OPTIONS: `--import=${preload}` });
  try {
    await server.request('tools/list');
    // The later noise comes 300 ms after the entry point ran: wait for it, then ask once more.
    for (let i = 0; i < 400 && !/more-noise-later/.test(server.stderr()); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await server.request('tools/list');
    assertOnlyJsonRpc(server.stdoutLines());
    assert.match(server.stderr(), /noise-from-a-dependency/);
    assert.match(server.stderr(), /more-noise-later/);
  } finally {
    await server.close();
  }
});
