/**
 * Inputs that are easy to answer badly, each refused naming what was wrong:
 * command lines that cannot be spawned (E2BIG, ENAMETOOLONG, a NUL byte) name `command` or
 * `args[i]`; the LLM tools check their arguments before saying they need an LLM; `__proto__`,
 * `constructor` and `prototype` are refused in fault configs, and the admin API never echoes an
 * object as "[object Object]"; a blank admin or MCP token is refused; `mcp --host [::1]` listens.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createNetServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { checkCommandLine, COMMAND_LINE_LIMITS } from '../src/command-line.js';
import { FaultRegistry, startAdmin } from '../src/proxy/control/index.js';
import { startProxy } from '../src/proxy/index.js';
import { registerReviewTools } from '../src/tools/review.js';
import { connectInMemory, connectTools, testSchemaValidator, textOf } from './helpers/mcp.js';
import { fixturePath } from './helpers/repo.js';
import { runCliProcess, startCliProcess } from './helpers/processes.js';

test(
  'command lines that cannot be spawned are refused naming command ' + 'or args[i], by both tools that spawn',
  async () => {
    const { client, close } = await connectInMemory();
    const huge = 'x'.repeat(COMMAND_LINE_LIMITS.argBytes + 1);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ command: process.execPath, args: ['ok', huge] }, /^args\[1\]: 131072 bytes; one argument is at most 131071/],
      [{ command: 'a'.repeat(5000) }, /^command: 5000 bytes; a command path is at most 4095/],
      [{ command: `/tmp/${'n'.repeat(300)}` }, /^command: a path component of 300 bytes; at most 255/],
      [{ command: process.execPath, args: ['a\u0000b'] }, /^args\[0\]: must not contain a NUL byte/],
      [
        { command: process.execPath, args: Array.from({ length: 20 }, () => 'y'.repeat(120_000)) },
        /^args: \d+ bytes of arguments with \d+ of environment; together at most/,
      ],
    ];
    try {
      for (const [args, message] of cases) {
        for (const [name, extra] of [
          ['fault_probe_mcp_server', {}],
          ['fault_run_tool_call_chaos_scenario', { calls: [{ tool: 'x' }] }],
        ] as const) {
          const result = (await client.callTool({ name, arguments: { ...args, ...extra } })) as CallToolResult;
          assert.equal(result.isError, true, name);
          assert.match(textOf(result), message, name);
        }
      }
    } finally {
      await close();
    }
    assert.throws(
      () => checkCommandLine('node', ['x'], undefined, { BIG: 'e'.repeat(COMMAND_LINE_LIMITS.totalBytes) }),
      {
        message: /^args: .* of environment/,
      },
    );
    assert.doesNotThrow(() => checkCommandLine(process.execPath, ['--version']));
  },
);

test('the LLM tools check their arguments before saying they need an LLM', async () => {
  const { client, close } = await connectTools((tools, ctx) =>
    registerReviewTools(tools, ctx, { provider: () => ({ ok: false, reason: 'no provider is configured' }) }),
  );
  const file = fixturePath('llm', 'fetch_all.py');
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['fault_make_reliability_and_perf_changes', { file: '/no/such/file.py' }, /^file: /],
    [
      'fault_function_reliability_deep_analysis',
      { file, lang: 'python', func: 'no_such_function' },
      /no_such_function/,
    ],
    [
      'fault_function_reliability_deep_analysis',
      { file, lang: 'python', func: 'fetch_all', concerns: ['speed'] },
      /^concerns: "speed" not accepted/,
    ],
    [
      'fault_suggest_better_function_performance',
      { snippet: 'def f(): pass', lang: 'python', score: 'high', target_score: 1 },
      /^score: must be a number \(got "high"\)/,
    ],
    [
      'fault_suggest_service_level_objectives_slo',
      { snippet: 'def f(): pass', lang: 'python', format: 'yaml' },
      /^format: must be one of fault, openslo, sloth/,
    ],
    ['fault_score_reliability', { snippet: '   ', lang: 'python' }, /^snippet: is blank/],
  ];
  try {
    for (const [name, args, message] of cases) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(result.isError, true, name);
      assert.match(textOf(result), message, name);
      assert.doesNotMatch(textOf(result), /needs an LLM/, name);
    }
    // With good arguments, the missing provider is what is said.
    const good = (await client.callTool({
      name: 'fault_score_reliability',
      arguments: { snippet: 'def f(): pass', lang: 'python' },
    })) as CallToolResult;
    assert.match(textOf(good), /^fault_score_reliability needs an LLM, and no provider is configured/);
  } finally {
    await close();
  }
});

test(
  '__proto__, constructor and prototype in fault configs are ' +
    'refused; the admin API names what it got, never [object Object]',
  async () => {
    const upstream = createNetServer((socket) => socket.end());
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const proxy = await startProxy({
      mappings: [`0=127.0.0.1:${(upstream.address() as { port: number }).port}#api`],
      http: true,
    });
    const registry = new FaultRegistry(proxy);
    const admin = await startAdmin({ host: '127.0.0.1', port: 0, token: 'tok', registry });
    try {
      const post = async (body: string) => {
        const response = await fetch(`${admin.url}/chaos/inject`, {
          method: 'POST',
          headers: { authorization: 'Bearer tok', 'content-type': 'application/json' },
          body,
        });
        return { status: response.status, text: await response.text() };
      };
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const refused = await post(`{"target": "api", "config": {"type": "error", "${key}": {"type": "latency"}}}`);
        assert.equal(refused.status, 400);
        assert.match(refused.text, new RegExp(`config: field \\\\"${key}\\\\" is not accepted`));
      }
      const hostile = [
        '{"target": "api", "config": {"type": {"a": 1}}}',
        '{"target": {"a": 1}, "config": {"type": "error"}}',
        '{"target": "api", "config": {"type": "error", "statusCode": {"a": 1}}}',
        '{"target": "api", "config": {"type": "error", "target": {"a": 1}}}',
        '{"target": "api", "config": {"type": "latency", "latencyMs": [{"a": 1}]}}',
        '{"target": "api", "config": [{"type": "error"}]}',
        '{"target": "api", "config": {"type": "schema_mismatch", "missing_fields": [{"a": 1}]}}',
      ];
      for (const body of hostile) {
        const answer = await post(body);
        assert.equal(answer.status, 400, body);
        assert.doesNotMatch(answer.text, /\[object Object\]/, body);
      }
      // The MCP tool's faults: the same refusal, from the argument reader.
      const { client, close } = await connectInMemory();
      try {
        const result = (await client.callTool({
          name: 'fault_proxy_start',
          arguments: { proxies: ['0=127.0.0.1:9'], faults: [JSON.parse('{"type": "error", "__proto__": {"x": 1}}')] },
        })) as CallToolResult;
        assert.match(textOf(result), /^faults\[0\]: field "__proto__" is not accepted/);
      } finally {
        await close();
      }
    } finally {
      await admin.close();
      registry.dispose();
      await proxy.stop();
      upstream.close();
    }
  },
);

test('a blank admin token or MCP token is refused: an API no request could use', async () => {
  const admin = await runCliProcess(['proxy', '--proxy', '0=127.0.0.1:9', '--admin', '0', '--admin-token', '   '], {});
  assert.equal(admin.code, 2);
  assert.match(admin.stderr, /^faultline: --admin-token: must not be blank$/m);
  const mcp = await runCliProcess(['mcp', '--transport', 'http', '--port', '0', '--token', ' '], {});
  assert.equal(mcp.code, 2);
  assert.match(mcp.stderr, /^faultline: --token: must not be blank$/m);
});

test('faultline mcp --host [::1] listens on IPv6 loopback and serves an SDK client', async (t) => {
  const probe = createNetServer();
  const ipv6 = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(0, '::1', () => probe.close(() => resolve(true)));
  });
  if (!ipv6) {
    t.skip('no IPv6 loopback on this machine');
    return;
  }
  const cli = startCliProcess(['mcp', '--transport', 'http', '--host', '[::1]', '--port', '0', '--no-token']);
  try {
    const url = new URL((await cli.waitFor(/listening on (http:\/\/\S+)/))[1]!);
    assert.equal(url.hostname, '[::1]');
    const client = new Client({ name: 'ipv6', version: '0' }, { jsonSchemaValidator: testSchemaValidator });
    await client.connect(new StreamableHTTPClientTransport(url));
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
  } finally {
    await cli.stop();
  }
});
